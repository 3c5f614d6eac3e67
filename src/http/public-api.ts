import { sourcesFooter } from '../conversations/citations.ts';
import type { Request, Response, Server } from 'restify';
import type { ConversationRouter } from '../actors/conversation-router.ts';
import { checkMessageText } from '../conversations/message-text.ts';
import { checkSessionId } from '../conversations/session.ts';
import { NotFoundError } from '../errors.ts';
import type { Chatbot } from '../chatbots/chatbot.ts';
import type { ChatbotStore } from '../store/chatbot-store.ts';
import type { RequestGate } from '../admission/request-gate.ts';
import type { SourceStore } from '../store/source-store.ts';
import { apiAuth, type AuthenticatedRequest } from './api-auth.ts';
import { registerApiDocument } from './api-document-routes.ts';
import { isUuid } from '../uuid.ts';
import { jsonBody, type JsonRequest } from './json-body.ts';
import { chatbotDetailView, chatbotListView, sourceView } from '../views.ts';

/** What the public API reads and writes through. */
export interface PublicApiDeps {
  gate: RequestGate;
  chatbots: ChatbotStore;
  sources: SourceStore;
  router: ConversationRouter;
}

/** The public REST API under /api/v1 (SPEC's endpoints), and its OpenAPI document. */
export function registerPublicApi(server: Server, deps: PublicApiDeps): void {
  const auth = apiAuth(deps.gate);
  registerApiDocument(server);

  // A non-UUID id is not found, exactly like an unknown or foreign one.
  const ownedChatbot = (req: Request) => {
    const id = String((req.params as Record<string, unknown>).chatbot_id);
    if (!isUuid(id)) throw new NotFoundError('Chatbot not found.');
    return deps.chatbots.getOwned((req as AuthenticatedRequest).userId, id.toLowerCase());
  };

  server.get('/api/v1/chatbots', auth, async (req: Request, res: Response) => {
    const chatbots = await deps.chatbots.listForUser((req as AuthenticatedRequest).userId);
    res.send(200, chatbots.map(chatbotListView));
  });

  server.get('/api/v1/chatbots/:chatbot_id', auth, async (req: Request, res: Response) => {
    res.send(200, chatbotDetailView(await ownedChatbot(req)));
  });

  server.get('/api/v1/chatbots/:chatbot_id/sources', auth, async (req: Request, res: Response) => {
    const chatbot = await ownedChatbot(req);
    const sources = await deps.sources.listForChatbot(chatbot.id);
    res.send(200, sources.map(sourceView));
  });

  // Ownership (404) is settled before the body is read (400), per DESIGN.md's check order.
  const loadChatbot = async (req: Request) => {
    (req as ChatRequest).chatbot = await ownedChatbot(req);
  };
  server.post(
    '/api/v1/chatbots/:chatbot_id/chat',
    auth,
    loadChatbot,
    jsonBody(),
    async (req: Request, res: Response) => {
      const { chatbot, body, userId } = req as ChatRequest;
      const message = checkMessageText(body.message, 'message');
      const sessionId = body.session_id === undefined ? `api-${userId}` : checkSessionId(body.session_id);
      const outcome = await deps.router.send({ chatbot, sessionId, content: message, channel: 'api' });
      if (outcome.kind === 'failed') throw outcome.error;
      // With the owner's "citations in API replies" on, the text keeps its [n] markers and lists them.
      res.send(200, { response: outcome.kind === 'reply' ? outcome.text + sourcesFooter(outcome.citations) : '' });
    },
  );
}

interface ChatRequest extends JsonRequest {
  userId: string;
  chatbot: Chatbot;
}
