import type { ConversationRouter } from './actors/conversation-router.ts';
import type { AgentHub } from './agents/agent-hub.ts';
import type { ChannelPort, VisitorPush } from './channels/channel-port.ts';
import { channelOfSession } from './conversations/session.ts';
import type { Logger } from './logger.ts';
import type { ServedRetrieval } from './rag/served-retrieval.ts';
import type { ReceivedSignal } from './redis/signal-bus.ts';

/** The parts of one gateway process that signals from any process act on. */
export interface SignalTargets {
  router: ConversationRouter;
  /** Every channel this gateway runs. */
  channels: ChannelPort[];
  agents: AgentHub;
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
    case 'conversation':
      return to.router.signal(signal.chatbot_id, signal.session_id);
    case 'visitor':
      return deliver(to, signal.chatbot_id, signal.session_id, signal.push);
    case 'escalated':
      deliver(to, signal.chatbot_id, signal.session_id, { type: 'escalated' });
      return to.agents.onSignal(signal);
    case 'message':
      return to.agents.onSignal(signal);
    case 'agent-revoked':
      return to.agents.revoked(signal.agent_id);
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

/** To the session's channel (by its id), which hands it over if it holds the visitor's connection here. */
function deliver(to: SignalTargets, chatbotId: string, sessionId: string, push: VisitorPush): void {
  const channel = channelOfSession(sessionId);
  const port = to.channels.find((candidate) => candidate.channel === channel);
  void port?.deliver(chatbotId, sessionId, push).catch((error: unknown) => {
    to.logger.error({ err: error, chatbot_id: chatbotId }, `${channel} visitor push not delivered`);
  });
}
