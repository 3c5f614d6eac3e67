import type { ConversationRouter } from './actors/conversation-router.ts';
import type { AgentHub } from './agents/agent-hub.ts';
import type { ChannelPort, VisitorPush } from './channels/channel-port.ts';
import { channelOfSession } from './conversations/session.ts';
import type { Logger } from './logger.ts';
import type { ServedRetrieval } from './rag/served-retrieval.ts';
import type { ReceivedSignal } from './redis/signal-bus.ts';
import type { ReplyStreamGate } from './reply-stream-gate.ts';

/** The parts of one gateway process that signals from any process act on. */
export interface SignalTargets {
  router: ConversationRouter;
  /** Every channel this gateway runs. */
  channels: ChannelPort[];
  agents: AgentHub;
  /** Which streamed pieces the sockets here may show (a takeover cuts a stream). */
  streams: ReplyStreamGate;
  retrieval: Pick<ServedRetrieval, 'index' | 'serve'>;
  /** This process's signal bus id: its own source-chunk announcements need no reload. */
  busId: string;
  logger: Logger;
}

/**
 * What a signal, published by any gateway or the CLI, does in this process: restart a channel, let a
 * live conversation actor reload, push to the visitor's and the agents' sockets held here, reload a
 * source into the in-process search index, serve another embedding space.
 */
export function routeSignal(signal: ReceivedSignal, to: SignalTargets): void {
  switch (signal.kind) {
    case 'channel': {
      const channel = to.channels.find((port) => port.channel === signal.channel);
      void channel?.reload(signal.chatbot_id).catch((error: unknown) => {
        to.logger.error(
          { err: error, chatbot_id: signal.chatbot_id },
          `could not restart the ${signal.channel} channel`,
        );
      });
      return;
    }
    case 'conversation': {
      const cut = to.streams.takenOver(signal.chatbot_id, signal.session_id, signal.taken_over_by);
      if (cut !== undefined) {
        endStream(to, { ...signal, kind: 'stream-end', stream_id: cut, reason: 'taken_over' });
      }
      return to.router.signal(signal.chatbot_id, signal.session_id);
    }
    case 'stream':
      if (!to.streams.piece(signal.chatbot_id, signal.session_id, signal.stream_id)) return;
      deliver(to, signal.chatbot_id, signal.session_id, {
        type: 'delta',
        stream_id: signal.stream_id,
        content: signal.content,
      });
      return to.agents.onSignal(signal);
    case 'stream-end':
      if (!to.streams.endedWithoutReply(signal.chatbot_id, signal.session_id, signal.stream_id)) return;
      return endStream(to, signal);
    case 'visitor':
      if (signal.push.type === 'message' && signal.push.stream_id !== undefined) {
        to.streams.replied(signal.chatbot_id, signal.session_id, signal.push.stream_id);
      }
      return deliver(to, signal.chatbot_id, signal.session_id, signal.push);
    case 'escalated':
      deliver(to, signal.chatbot_id, signal.session_id, { type: 'escalated' });
      return to.agents.onSignal(signal);
    case 'message':
    case 'lead':
      return to.agents.onSignal(signal);
    case 'agent-revoked':
      return to.agents.revoked(signal.agent_id);
    case 'canned-replies':
      return to.agents.cannedRepliesChanged(signal.user_id);
    case 'source-chunks':
      // This process's own index was updated before it announced the change: reloading it again
      // would be work done twice, and could race the write it announces.
      if (signal.origin === to.busId) return;
      void to.retrieval.index.reloadSource(signal.chatbot_id, signal.source_id).catch((error: unknown) => {
        to.logger.error({ err: error }, 'could not reload a source into the search index');
      });
      return;
    case 'embedding-space':
      void to.retrieval.serve({ space: signal.space, embeddings: signal.embeddings }).catch((error: unknown) => {
        to.logger.error({ err: error, space: signal.space }, 'could not switch to the new embedding space');
      });
  }
}

/** A streamed reply will not be stored: the visitor's and the agents' sockets here drop what they showed. */
function endStream(to: SignalTargets, signal: Extract<ReceivedSignal, { kind: 'stream-end' }>): void {
  const { chatbot_id, session_id, stream_id, reason } = signal;
  deliver(to, chatbot_id, session_id, { type: 'stream_end', stream_id, reason });
  to.agents.onSignal(signal);
}

/** To the session's channel (by its id), which hands it over if it holds the visitor's connection here. */
function deliver(to: SignalTargets, chatbotId: string, sessionId: string, push: VisitorPush): void {
  const channel = channelOfSession(sessionId);
  const port = to.channels.find((candidate) => candidate.channel === channel);
  void port?.deliver(chatbotId, sessionId, push).catch((error: unknown) => {
    to.logger.error({ err: error, chatbot_id: chatbotId }, `${channel} visitor push not delivered`);
  });
}
