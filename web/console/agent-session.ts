import { AgentConnection, type PushedFrame } from './agent-connection.ts';
import type {
  Agent,
  Command,
  ConversationRef,
  ConversationSummary,
  EscalatedPush,
  Transcript,
} from './console-protocol.ts';
import { channelName, visitorLabel } from './visitor-label.ts';
import { conversationKey, createConversationList } from './conversation-list.ts';
import { createConversationListView } from './conversation-list-view.ts';
import { createConversationView } from './conversation-view.ts';
import { h } from './dom.ts';
import { openConversation, type OpenConversation } from './open-conversation.ts';
import { createTopBar } from './top-bar.ts';
import { fetchAgent, fetchCannedReplies, fetchTranscript, type TranscriptResult } from './transcript-client.ts';

/** What the console remembers per conversation while it is not on screen. */
interface LocalState {
  draft: string;
  status: string;
  busy: boolean;
  /** A suggestion is being written. */
  suggesting: boolean;
  /** A suggestion that came while the draft had text, not yet taken or declined. */
  offer: string | null;
}

type FailedTranscript = Extract<TranscriptResult, { ok: false }>;

const NARROW = '(max-width: 720px)';
/** How often an agent's typing is said to the visitor while it goes on. */
const TYPING_EVERY_MS = 3000;

/**
 * The main view for one token: the socket, the list, the open conversation and the agent's commands.
 * `onEnd` runs once, with `''` when the agent signs out, or with the server's detail when it refuses the
 * token (socket close 4401, or a 401 on a transcript).
 */
export class AgentSession {
  private readonly token: string;
  private readonly onEnd: (detail: string) => void;
  private readonly list = createConversationList();
  private readonly locals = new Map<string, LocalState>();
  private readonly topBar = createTopBar(() => this.end(''));
  private readonly listView = createConversationListView((conversation) => this.show(conversation));
  private readonly pane = createConversationView({
    onTakeover: () => this.act((ref) => ({ type: 'takeover', ...ref }), 'Taking over…', 'You hold this conversation.'),
    onRelease: () => this.act((ref) => ({ type: 'release', ...ref }), 'Releasing…', 'Released.'),
    onReply: (content) => this.act((ref) => ({ type: 'reply', ...ref, content }), 'Sending…', 'Sent.'),
    onTyping: () => this.typing(),
    onSuggest: () => this.suggest(),
  });
  private readonly connection: AgentConnection;
  private agent: Agent | null = null;
  private open: OpenConversation | null = null;
  // The open conversation as last shown, in case a new conversations frame no longer lists it.
  private openSummary: ConversationSummary | null = null;
  private ended = false;
  /** When the visitor was last told this agent is typing (ms), so it is said at most every TYPING_EVERY_MS. */
  private typingSaidAt = 0;
  // Only the newest read of the canned replies lands (a reconnect and a change push may overlap).
  private cannedReads = 0;

  /** Renders the main view into `root` and connects. */
  constructor(root: HTMLElement, token: string, onEnd: (detail: string) => void) {
    this.token = token;
    this.onEnd = onEnd;
    root.replaceChildren(
      this.topBar.element,
      h('main', { class: 'sc-main' }, [this.listView.element, this.pane.element]),
    );
    this.render();
    this.connection = new AgentConnection(token, {
      onState: (state) => this.topBar.setConnection(state),
      onAuthenticated: () => {
        this.topBar.setNotice('');
        if (!this.agent) this.identify();
        // Changes made while the socket was down pushed nothing here.
        this.loadCannedReplies();
      },
      onFrame: (frame) => this.onFrame(frame),
      onError: (detail) => this.topBar.setNotice(detail),
      onRefused: (detail) => this.end(detail),
    });
  }

  private local(key: string): LocalState {
    let state = this.locals.get(key);
    if (!state) {
      this.locals.set(key, (state = { draft: '', status: '', busy: false, suggesting: false, offer: null }));
    }
    return state;
  }

  /** The gateway records the holder by agent name (unique among an owner's agents). */
  private isMine(holder: string | null): boolean {
    return holder !== null && this.agent !== null && holder === this.agent.name;
  }

  /** Learns who the token signs in (asked again at the next connect if it fails now). */
  private identify(): void {
    void fetchAgent(this.token).then((result) => {
      if (this.ended) return;
      if (result.ok) {
        this.agent = result.agent;
        this.topBar.setAgent(result.agent.name);
        this.render();
      } else if (result.status === 401) this.end(result.detail);
      else this.topBar.setNotice(result.detail);
    });
  }

  private render(): void {
    if (this.open) this.list.markRead(this.open.ref);
    this.listView.render(
      this.list.sorted(),
      this.open?.key ?? null,
      (holder) => this.isMine(holder),
      (item) => this.list.unread(item),
    );
    if (!this.open) return this.pane.show(null);
    this.openSummary = this.list.get(this.open.ref) ?? this.openSummary;
    if (!this.openSummary) return;
    const mine = this.isMine(this.openSummary.taken_over_by);
    this.pane.show({ summary: this.openSummary, mine, ...this.local(this.open.key) });
  }

  private end(detail: string): void {
    if (this.ended) return;
    this.ended = true;
    this.connection.close();
    this.open?.close();
    this.onEnd(detail);
  }

  private onFrame(frame: PushedFrame): void {
    if (this.ended) return;
    if (frame.type === 'canned_replies_changed') return this.loadCannedReplies();
    if (frame.type === 'conversations') {
      this.list.replace(frame.items);
      this.render();
      // A reconnect may have missed messages: the open transcript is fetched again.
      this.open?.load();
      return;
    }
    const open = this.open?.key === conversationKey(frame) ? this.open : null;
    // A reply being written shows in the open conversation only; the list changes when it is stored.
    if (frame.type === 'delta') return open?.delta(frame.stream_id, frame.content);
    if (frame.type === 'stream_end') return open?.dropStream(frame.stream_id);
    const known = this.list.get(frame);
    if (frame.type === 'message') {
      this.list.applyMessage(frame);
      const { role, content, created_at, citations, feedback, agent } = frame;
      const message = {
        role,
        content,
        created_at,
        ...(citations ? { citations } : {}),
        ...(feedback ? { feedback } : {}),
        ...(agent ? { agent } : {}),
      };
      open?.push(message, frame.stream_id);
    } else if (frame.type === 'escalated') {
      this.list.applyEscalated(frame);
      this.notifyEscalation(frame, open !== null);
    } else {
      this.list.applyLead(frame);
    }
    // A conversation first seen, or an agent's reply in one the console thought free: the transcript
    // tells the source and the holder, which no push carries.
    const heldUnseen = frame.type === 'message' && frame.role === 'agent' && !known?.taken_over_by;
    if (!known || heldUnseen) {
      if (open) open.load();
      else this.describe(frame);
    }
    this.render();
  }

  /** Opens a conversation in the pane, keeping the draft of the one it replaces. */
  private show(conversation: ConversationRef): void {
    const key = conversationKey(conversation);
    if (this.open?.key === key) return;
    if (this.open) {
      const left = this.local(this.open.key);
      left.draft = this.pane.draft();
      left.offer = this.pane.pendingOffer();
      this.open.close();
    }
    const opened = openConversation(conversation, this.pane, {
      fetch: (ref) => fetchTranscript(this.token, ref),
      onLoaded: (transcript, holderIsCurrent) => this.adopt(transcript, holderIsCurrent),
      onFailed: (result) => this.failed(result, key),
    });
    this.open = opened;
    this.openSummary = this.list.get(conversation) ?? null;
    const local = this.local(key);
    this.pane.setDraft(local.draft);
    if (local.offer !== null) this.pane.offerSuggestion(local.offer);
    local.offer = null;
    this.render();
    opened.load();
    // On a phone the conversation sits under the list.
    if (matchMedia(NARROW).matches) this.pane.element.scrollIntoView({ block: 'start' });
  }

  /** Takes from a transcript what pushes cannot tell: the source, and an escalation the list missed. */
  private adopt(transcript: Transcript, holderIsCurrent: boolean): void {
    const known = this.list.get(transcript);
    if (!known) return;
    this.list.patch(transcript, {
      source: transcript.source || known.source,
      escalated_at: known.escalated_at ?? transcript.escalated_at,
      ...(holderIsCurrent ? { taken_over_by: transcript.taken_over_by } : {}),
    });
    this.render();
  }

  private failed(result: FailedTranscript, key: string): void {
    if (result.status === 401) return this.end(result.detail);
    this.local(key).status = result.detail;
    this.render();
  }

  /** A conversation not on screen: its transcript tells the source and the holder the list shows. */
  private describe(conversation: ConversationRef): void {
    void fetchTranscript(this.token, conversation).then((result) => {
      if (this.ended) return;
      if (result.ok) this.adopt(result.transcript, true);
      else if (result.status === 401) this.end(result.detail);
    });
  }

  /** Reads the owner's canned replies into the reply box's list. */
  private loadCannedReplies(): void {
    const read = ++this.cannedReads;
    void fetchCannedReplies(this.token).then((result) => {
      if (this.ended || read !== this.cannedReads) return;
      if (result.ok) this.pane.setCannedReplies(result.replies);
      else if (result.status === 401) this.end(result.detail);
      else this.topBar.setNotice(result.detail);
    });
  }

  /**
   * Asks for a draft of the next message in the open conversation. It goes into the reply box (or is
   * offered beside a typed draft) of the conversation it was asked in, even if another is open by
   * then; nothing is sent.
   */
  private suggest(): void {
    if (!this.open) return;
    const { key, ref } = this.open;
    const state = this.local(key);
    state.suggesting = true;
    state.status = 'Writing a suggestion…';
    this.render();
    void this.connection.suggest(ref).then((result) => {
      if (this.ended) return;
      state.suggesting = false;
      if (!result.ok) state.status = result.detail;
      else if (this.open?.key === key) {
        const placed = this.pane.offerSuggestion(result.content) === 'placed';
        state.status = placed ? 'Suggestion in the reply box: edit it, then send.' : '';
      } else if (state.draft.trim() === '') {
        state.draft = result.content;
        state.status = 'Suggestion in the reply box: edit it, then send.';
      } else {
        state.offer = result.content;
        state.status = '';
      }
      this.render();
    });
  }

  /**
   * The visitor of the open conversation sees that this agent is writing: said when the agent types
   * in a conversation they hold, at most every TYPING_EVERY_MS (the widget shows it for a while).
   */
  private typing(): void {
    const summary = this.openSummary;
    if (!this.open || !summary || !this.isMine(summary.taken_over_by)) return;
    const now = Date.now();
    if (now - this.typingSaidAt < TYPING_EVERY_MS) return;
    this.typingSaidAt = now;
    // Only a hint: a refusal (released meanwhile) shows nothing, and the reply itself is what counts.
    void this.connection.command({ type: 'typing', ...this.open.ref });
  }

  /**
   * A browser notification of an escalation (when the agent allowed them), unless the agent is looking
   * at that conversation; clicking it brings the console forward with the conversation open.
   */
  private notifyEscalation(conversation: EscalatedPush, isOpen: boolean): void {
    if (!('Notification' in window) || Notification.permission !== 'granted') return;
    if (isOpen && document.visibilityState === 'visible') return;
    const known = this.list.get(conversation);
    if (!known) return;
    const where = [channelName(known), known.chatbot_name].filter(Boolean).join(' · ');
    const notification = new Notification(`${visitorLabel(known)} asks for a person`, {
      body: where,
      tag: conversationKey(conversation),
    });
    notification.addEventListener('click', () => {
      window.focus();
      this.show(conversation);
      notification.close();
    });
  }

  /** Sends a command for the open conversation; its outcome goes to that conversation's status line. */
  private act(make: (ref: ConversationRef) => Command, pendingText: string, doneText: string): void {
    if (!this.open) return;
    const command = make(this.open.ref);
    const key = this.open.key;
    const state = this.local(key);
    state.busy = true;
    state.status = pendingText;
    this.render();
    void this.connection.command(command).then((result) => {
      if (this.ended) return;
      state.busy = false;
      state.status = result.ok ? doneText : result.detail;
      const open = this.open?.key === key ? this.open : null;
      if (result.ok && command.type !== 'reply') {
        // The socket pushes no holder changes: the console's own answers tell it.
        this.list.applyHolder({
          ...command,
          taken_over_by: command.type === 'takeover' ? (this.agent?.name ?? null) : null,
        });
        open?.noteHolderChange();
      }
      // The reply itself shows when the server pushes it back, never from here, so it cannot show twice.
      if (result.ok && command.type === 'reply') {
        state.draft = '';
        if (open) this.pane.setDraft('');
      }
      // Refused (held by someone else, not held, gone): the transcript tells how things stand now.
      if (!result.ok) open?.load();
      this.render();
    });
  }
}
