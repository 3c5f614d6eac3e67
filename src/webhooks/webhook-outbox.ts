import { createHash, randomUUID } from 'node:crypto';
import type { EventName } from '../contract/webhook.ts';
import type { EventSink, WebhookEvent } from './webhook-event.ts';
import type { DeliveryStore } from '../store/delivery-store.ts';
import { delivers, type WebhookStore } from '../store/webhook-store.ts';
import type { Webhook } from './webhook.ts';

/**
 * The event sink of every process: an event becomes one durable delivery per active webhook that
 * selected it, written to Redis before `emit` resolves. The body is serialized once; those exact
 * bytes are signed and sent on every attempt. `onEnqueued` lets a local dispatcher look at once;
 * other processes' dispatchers find the deliveries on their next poll.
 */
export class WebhookOutbox implements EventSink {
  private readonly webhooks: WebhookStore;
  private readonly deliveries: DeliveryStore;
  private readonly maxAttempts: number;
  /** Deliveries of the chatbot were just written. */
  onEnqueued: (chatbotId: string) => void = () => {};

  constructor(webhooks: WebhookStore, deliveries: DeliveryStore, retryDelays: number[]) {
    this.webhooks = webhooks;
    this.deliveries = deliveries;
    this.maxAttempts = retryDelays.length + 1;
  }

  async emit(event: WebhookEvent, key?: string): Promise<void> {
    const subscribers = await this.webhooks.subscribers(event.chatbot_id, event.event);
    if (subscribers.length === 0) return;
    const body = JSON.stringify(event);
    await Promise.all(subscribers.map((hook) => this.enqueue(hook, event, body, key)));
    this.onEnqueued(event.chatbot_id);
  }

  /** Whether an active webhook of the chatbot selected any of `events` (read through the client cache). */
  async listens(chatbotId: string, events: readonly EventName[]): Promise<boolean> {
    const hooks = await this.webhooks.listForChatbot(chatbotId);
    return hooks.some((hook) => events.some((event) => delivers(hook, event)));
  }

  /**
   * Queues one event for one webhook, whatever events it selected (the dashboard's test event);
   * returns the delivery's id.
   */
  async emitTo(hook: Webhook, event: WebhookEvent): Promise<string> {
    const id = await this.enqueue(hook, event, JSON.stringify(event));
    this.onEnqueued(event.chatbot_id);
    return id;
  }

  /** `key` makes the delivery's id derived from the event's key, so a repeat writes nothing new. */
  private enqueue(hook: Webhook, event: WebhookEvent, body: string, key?: string): Promise<string> {
    const subject = event.data.conversation_id ?? event.data.lead_id;
    return this.deliveries.enqueue({
      id: key === undefined ? randomUUID() : deliveryId(key, hook.id),
      webhookId: hook.id,
      chatbotId: event.chatbot_id,
      event: event.event,
      body,
      maxAttempts: this.maxAttempts,
      orderKey: `${hook.id}/${typeof subject === 'string' ? subject : ''}`,
    });
  }
}

/**
 * The delivery of a keyed event to one webhook: the same id whenever the event is emitted again, as
 * a UUID (version 8: derived from a SHA-256 of the key and the webhook id).
 */
function deliveryId(key: string, webhookId: string): string {
  const hex = createHash('sha256').update(`${key}/${webhookId}`).digest('hex');
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
