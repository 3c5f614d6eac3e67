import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Clock } from '../clock.ts';
import { ValidationError } from '../errors.ts';
import type { PendingEntry } from '../webhooks/pending-event.ts';
import type { Chatbot } from '../chatbots/chatbot.ts';
import type { Lead, LeadStore } from '../store/lead-store.ts';
import type { SignalBus } from '../redis/signal-bus.ts';
import { formatTimestamp } from '../timestamp.ts';
import type { EventRelay } from '../webhooks/event-relay.ts';

/** What a visitor submits through a lead form. Fields are checked, not trusted. */
export interface LeadInput {
  name?: unknown;
  email?: unknown;
  phone?: unknown;
  custom_data?: unknown;
}

const MAX = { name: 200, email: 254, phone: 40, custom: 1000 };
const emailFormat = z.email();
const PHONE = /^\+?[0-9 ().-]{5,40}$/;

/**
 * Lead capture: validates a submitted form against the chatbot's fields, stores the lead and emits
 * `lead.captured`; a conversation has one lead, which a later form updates without another event.
 * Every save, first or later, is signalled, so open agent consoles show the visitor by name.
 * Every refusal names the field it is about.
 */
export class LeadCapture {
  private readonly leads: LeadStore;
  private readonly relay: EventRelay;
  private readonly clock: Clock;
  private readonly signals: Pick<SignalBus, 'publish'>;

  constructor(deps: { leads: LeadStore; relay: EventRelay; clock: Clock; signals: Pick<SignalBus, 'publish'> }) {
    this.leads = deps.leads;
    this.relay = deps.relay;
    this.clock = deps.clock;
    this.signals = deps.signals;
  }

  async capture(chatbot: Chatbot, sessionId: string, input: LeadInput): Promise<Lead> {
    const name = text(input.name, 'name', MAX.name);
    const email = text(input.email, 'email', MAX.email);
    const phone = text(input.phone, 'phone', MAX.phone);
    if (email && !emailFormat.safeParse(email).success)
      throw new ValidationError('email must be a valid email address.');
    if (phone && (!PHONE.test(phone) || phone.replace(/\D/g, '').length < 5)) {
      throw new ValidationError('phone must be a valid phone number.');
    }
    if (!email && !phone) throw new ValidationError('email or phone is required.');
    const customData = customFields(chatbot, input.custom_data);
    const now = this.clock.nowMicros();
    const lead: Lead = {
      lead_id: randomUUID(),
      chatbot_id: chatbot.id,
      session_id: sessionId,
      name,
      email,
      phone,
      custom_data: customData,
      created_at: formatTimestamp(now),
    };
    const entry: PendingEntry = {
      kind: 'lead',
      at: String(now),
      lead: { lead_id: lead.lead_id, name, email, phone, custom_data: customData },
    };
    const pending = { id: randomUUID(), json: JSON.stringify(entry) };
    await this.relay.register(chatbot.id);
    const saved = await this.leads.save(lead, now, { ...pending, dueAt: this.relay.store.dueAt(now) });
    // Never throws: the entry is in Redis, and deliveries not written now are written later.
    if (saved.created) await this.relay.deliver(chatbot.id, [pending]);
    // Only the ids: agents' gateways read the lead when they push it, so the newest save always wins.
    await this.signals.publish({ kind: 'lead', chatbot_id: chatbot.id, session_id: sessionId });
    return saved.lead;
  }
}

function text(value: unknown, field: string, max: number): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw new ValidationError(`${field} must be a string.`);
  const trimmed = value.trim();
  if ([...trimmed].length > max) throw new ValidationError(`${field} must be at most ${max} characters.`);
  return trimmed;
}

/** Every configured custom field, '' when left empty; unknown fields are refused. */
function customFields(chatbot: Chatbot, value: unknown): Record<string, string> {
  if (value === undefined || value === null) value = {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new ValidationError('custom_data must be an object.');
  const submitted = value as Record<string, unknown>;
  const fields = chatbot.settings.lead_fields;
  for (const key of Object.keys(submitted)) {
    if (!fields.some((field) => field.name === key)) {
      throw new ValidationError(`custom_data.${key} is not a field of this form.`);
    }
  }
  const data: Record<string, string> = {};
  for (const field of fields) {
    const entry = text(submitted[field.name], `custom_data.${field.name}`, MAX.custom);
    if (field.required && !entry) throw new ValidationError(`custom_data.${field.name} is required.`);
    data[field.name] = entry;
  }
  return data;
}
