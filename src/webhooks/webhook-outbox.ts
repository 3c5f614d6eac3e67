import type { EventSink, WebhookEvent } from '../events/webhook-event.ts';
import type { DeliveryStore } from '../store/delivery-store.ts';
import type { Webhook, WebhookStore } from '../store/webhook-store.ts';

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
  onEnqueued: () => void = () => {};

  constructor(webhooks: WebhookStore, deliveries: DeliveryStore, retryDelays: number[]) {
    this.webhooks = webhooks;
    this.deliveries = deliveries;
    this.maxAttempts = retryDelays.length + 1;
  }

  async emit(event: WebhookEvent): Promise<void> {
    const subscribers = await this.webhooks.subscribers(event.chatbot_id, event.event);
    if (subscribers.length === 0) return;
    const body = JSON.stringify(event);
    await Promise.all(subscribers.map((hook) => this.enqueue(hook, event, body)));
    this.onEnqueued();
  }

  /**
   * Queues one event for one webhook, whatever events it selected (the dashboard's test event);
   * returns the delivery's id.
   */
  async emitTo(hook: Webhook, event: WebhookEvent): Promise<string> {
    const id = await this.enqueue(hook, event, JSON.stringify(event));
    this.onEnqueued();
    return id;
  }

  private enqueue(hook: Webhook, event: WebhookEvent, body: string): Promise<string> {
    const subject = event.data.conversation_id ?? event.data.lead_id;
    return this.deliveries.enqueue({
      webhookId: hook.id,
      chatbotId: event.chatbot_id,
      event: event.event,
      body,
      maxAttempts: this.maxAttempts,
      orderKey: `${hook.id}/${typeof subject === 'string' ? subject : ''}`,
    });
  }
}
