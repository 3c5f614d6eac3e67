import type { Request, Response, Server } from 'restify';
import { NotFoundError } from '../errors.ts';
import type { ChatbotStore } from '../store/chatbot-store.ts';
import type { RequestGate } from '../store/request-gate.ts';
import type { SourceStore } from '../store/source-store.ts';
import { apiAuth, type AuthenticatedRequest } from './api-auth.ts';
import { chatbotDetailView, chatbotListView, sourceView } from '../views.ts';

/** What the public API reads and writes through. */
export interface PublicApiDeps {
  gate: RequestGate;
  chatbots: ChatbotStore;
  sources: SourceStore;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The public REST API under /api/v1 (SPEC's endpoints). */
export function registerPublicApi(server: Server, deps: PublicApiDeps): void {
  const auth = apiAuth(deps.gate);

  // A non-UUID id is not found, exactly like an unknown or foreign one.
  const ownedChatbot = (req: Request) => {
    const id = String((req.params as Record<string, unknown>).chatbot_id);
    if (!UUID.test(id)) throw new NotFoundError('Chatbot not found.');
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
}
