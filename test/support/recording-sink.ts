import type { EventSink, WebhookEvent } from '../../src/events/webhook-event.ts';

/** An event sink that keeps every event, in order. */
export class RecordingSink implements EventSink {
  readonly events: WebhookEvent[] = [];

  async emit(event: WebhookEvent): Promise<void> {
    this.events.push(event);
  }

  /** Events of one session, in order. */
  forSession(sessionId: string): WebhookEvent[] {
    return this.events.filter((e) => e.data.session_id === sessionId);
  }
}
