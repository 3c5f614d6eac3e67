import { isOpen, nextOpening } from '../chatbots/office-hours.ts';
import type { Clock } from '../clock.ts';
import type { AgentPersona, Handoff, HandoffState } from '../contract/conversation.ts';
import { formatTimestamp } from '../timestamp.ts';
import type { AgentPresence } from '../store/agent-presence.ts';
import type { AgentStore } from '../store/agent-store.ts';
import type { ChatbotStore } from '../store/chatbot-store.ts';
import type { ConversationStore, HandoffRecord } from '../store/conversation-store.ts';

/**
 * A conversation's hand-off state as its visitor sees it, read from Redis: a named agent holds it
 * (`agent`); else the visitor asked for a human since one last held it (`waiting`); else the AI
 * answers (`ai`). Whether any of the owner's agents is online, and the chatbot's office hours, go
 * with it: the widget offers the contact form to a visitor waiting outside them (saying when they
 * open), or in them with nobody online once the owner's wait is over.
 */
export class Handoffs {
  private readonly conversations: ConversationStore;
  private readonly chatbots: ChatbotStore;
  private readonly agents: AgentStore;
  private readonly presence: AgentPresence;
  private readonly clock: Pick<Clock, 'nowMicros'>;

  constructor(deps: {
    conversations: ConversationStore;
    chatbots: ChatbotStore;
    agents: AgentStore;
    presence: AgentPresence;
    clock: Pick<Clock, 'nowMicros'>;
  }) {
    this.clock = deps.clock;
    this.conversations = deps.conversations;
    this.chatbots = deps.chatbots;
    this.agents = deps.agents;
    this.presence = deps.presence;
  }

  /** The conversation's state now (`ai` for a session with no conversation yet). */
  async of(chatbotId: string, sessionId: string): Promise<Handoff> {
    const [record, chatbot] = await Promise.all([
      this.conversations.handoff(chatbotId, sessionId),
      this.chatbots.get(chatbotId),
    ]);
    const state = stateOf(record);
    const [agent, agents_online] = await Promise.all([
      state === 'agent' ? this.agents.persona(chatbot.user_id, record!.takenOverBy!) : null,
      this.presence.anyOnline(chatbot.user_id),
    ]);
    const hours = chatbot.settings.hours;
    const now = this.clock.nowMicros() / 1000;
    const open = isOpen(hours, now);
    const opens = open ? undefined : nextOpening(hours, now);
    // Waiting in office hours with nobody online: the contact form once the owner's wait is over.
    const offered = record ? record.humanRequestedAt / 1000 + hours.contact_after_minutes * 60_000 : now;
    const contactIn =
      state === 'waiting' && open && !agents_online
        ? hours.enabled
          ? Math.max(0, Math.ceil(offered - now))
          : 0
        : null;
    return {
      state,
      agent,
      agents_online,
      open,
      opens_at: opens === undefined ? null : formatTimestamp(opens * 1000),
      time_zone: hours.enabled ? hours.time_zone : null,
      contact_in_ms: contactIn,
    };
  }

  /** How the chatbot owner's agent of that name shows to visitors. */
  async persona(chatbotId: string, name: string): Promise<AgentPersona> {
    return this.agents.persona((await this.chatbots.get(chatbotId)).user_id, name);
  }
}

function stateOf(record: HandoffRecord | undefined): HandoffState {
  if (!record) return 'ai';
  if (record.takenOverBy) return 'agent';
  return record.humanRequestedAt > record.humanServedAt ? 'waiting' : 'ai';
}
