import type { ConversationRef, Message, Transcript } from './console-protocol.ts';
import { conversationKey } from './conversation-list.ts';
import type { ConversationView } from './conversation-view.ts';
import type { TranscriptResult } from './transcript-client.ts';

/** What {@link openConversation} needs besides the conversation and the pane. */
export interface OpenConversationHooks {
  fetch(conversation: ConversationRef): Promise<TranscriptResult>;
  /** `holderIsCurrent` is false when this console took over or released while the transcript loaded. */
  onLoaded(transcript: Transcript, holderIsCurrent: boolean): void;
  onFailed(result: Extract<TranscriptResult, { ok: false }>): void;
}

/** The conversation shown in the pane: its transcript, and the pushes that race the transcript's fetch. */
export interface OpenConversation {
  readonly ref: ConversationRef;
  readonly key: string;
  /**
   * (Re)fetches the transcript. Pushes arriving meanwhile show at once and are kept until the answer comes;
   * the transcript then replaces what is shown, followed by the kept pushes it does not hold yet.
   */
  load(): void;
  /** A pushed message of this conversation; a streamed reply takes the place of what its stream showed. */
  push(message: Message, streamId?: string): void;
  /** The next piece of a reply the AI is writing in this conversation. */
  delta(streamId: string, text: string): void;
  /** A reply being written will not come (a takeover cut it, the turn failed). */
  dropStream(streamId: string): void;
  /** This console's takeover or release of this conversation was answered. */
  noteHolderChange(): void;
  /** The conversation is no longer shown: answers still on their way are ignored. */
  close(): void;
}

/** The same message, whether it came in the transcript or in a push. */
function messageKey(message: Message): string {
  return `${message.role}\n${message.created_at}\n${message.content}`;
}

/** Starts showing `ref` in `view` (call {@link OpenConversation.load} to fetch its transcript). */
export function openConversation(
  ref: ConversationRef,
  view: ConversationView,
  hooks: OpenConversationHooks,
): OpenConversation {
  // Every message on screen, so a push the transcript already holds (or a push seen twice) is never shown again.
  const shown = new Set<string>();
  let kept: Message[] = [];
  let loads = 0;
  let loading = false;
  let loaded = false;
  let closed = false;
  let holderChanged = false;

  const replace = (messages: readonly Message[], note?: string): void => {
    shown.clear();
    const unique: Message[] = [];
    for (const message of messages) {
      if (shown.has(messageKey(message))) continue;
      shown.add(messageKey(message));
      unique.push(message);
    }
    view.setMessages(unique, note);
  };

  const settle = (result: TranscriptResult): void => {
    const pushed = kept;
    kept = [];
    loading = false;
    if (result.ok) {
      loaded = true;
      replace([...result.transcript.messages, ...pushed]);
      hooks.onLoaded(result.transcript, !holderChanged);
    } else {
      // A reload that fails leaves the older transcript (and the pushes since) on screen.
      if (!loaded) replace(pushed, 'The transcript could not be loaded.');
      hooks.onFailed(result);
    }
  };

  return {
    ref: { chatbot_id: ref.chatbot_id, session_id: ref.session_id },
    key: conversationKey(ref),
    load() {
      const generation = ++loads;
      loading = true;
      holderChanged = false;
      if (!loaded) replace(kept, 'Loading…');
      void hooks.fetch(ref).then((result) => {
        // Only the newest load's answer counts; an older one may predate pushes the newer one holds.
        if (!closed && generation === loads) settle(result);
      });
    },
    push(message, streamId) {
      if (loading) kept.push(message);
      if (shown.has(messageKey(message))) {
        if (streamId !== undefined) view.dropStream(streamId);
        return;
      }
      shown.add(messageKey(message));
      view.appendMessage(message, streamId);
    },
    delta(streamId, text) {
      view.appendDelta(streamId, text);
    },
    dropStream(streamId) {
      view.dropStream(streamId);
    },
    noteHolderChange() {
      holderChanged = true;
    },
    close() {
      closed = true;
    },
  };
}
