import type { EventSink, WebhookEvent } from '../../src/webhooks/webhook-event.ts';

/** An event sink that keeps every event, in order. */
export class RecordingSink implements EventSink {
  readonly events: WebhookEvent[] = [];

  readonly keys: Array<string | undefined> = [];

  async emit(event: WebhookEvent, key?: string): Promise<void> {
    this.events.push(event);
    this.keys.push(key);
  }

  /** Events of one session, in order. */
  forSession(sessionId: string): WebhookEvent[] {
    return this.events.filter((e) => e.data.session_id === sessionId);
  }
}
