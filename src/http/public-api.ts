import { sourcesFooter } from '../conversations/citations.ts';
import type { Request, Response, Server } from 'restify';
import type { ConversationRouter } from '../actors/conversation-router.ts';
import { checkMessageText } from '../conversations/message-text.ts';
import { checkSessionId } from '../conversations/session.ts';
import { NotFoundError } from '../errors.ts';
import { admissionError, type InboundMessage } from '../conversations/turn-pipeline.ts';
import type { ChatbotStore } from '../store/chatbot-store.ts';
import type { RequestGate } from '../admission/request-gate.ts';
import type { SourceStore } from '../store/source-store.ts';
import { passedGate, answerUnauthorized, apiAuth, bearerToken, type AuthenticatedRequest } from './api-auth.ts';
import { registerApiDocument } from './api-document-routes.ts';
import { isUuid } from '../uuid.ts';
import { readJsonObject } from './json-body.ts';
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
  const ownedChatbot = (req: Request, userId: string) => {
    const id = String((req.params as Record<string, unknown>).chatbot_id);
    if (!isUuid(id)) throw new NotFoundError('Chatbot not found.');
    return deps.chatbots.getOwned(userId, id.toLowerCase());
  };

  server.get('/api/v1/chatbots', auth, async (req: Request, res: Response) => {
    const chatbots = await deps.chatbots.listForUser((req as AuthenticatedRequest).userId);
    res.send(200, chatbots.map(chatbotListView));
  });

  server.get('/api/v1/chatbots/:chatbot_id', auth, async (req: Request, res: Response) => {
    res.send(200, chatbotDetailView(await ownedChatbot(req, (req as AuthenticatedRequest).userId)));
  });

  server.get('/api/v1/chatbots/:chatbot_id/sources', auth, async (req: Request, res: Response) => {
    const chatbot = await ownedChatbot(req, (req as AuthenticatedRequest).userId);
    const sources = await deps.sources.listForChatbot(chatbot.id);
    res.send(200, sources.map(sourceView));
  });

  // DESIGN.md's check order, 401 → 429 → 404 → 400 → quota, in one round trip for the gate and the
  // quota: the key is identified (a cached read), then ownership (404) is settled before the body is
  // read (400), and only then does the gate's script run, counting the message against the monthly
  // quota in the same step when nothing before the quota refused it. A request that fails a check is
  // still admitted or refused by the gate (its 401 or 429 comes first) before its own error is told.
  // A paused chatbot's message is not counted: the router refuses it, as on every channel.
  server.post('/api/v1/chatbots/:chatbot_id/chat', async (req: Request, res: Response) => {
    const key = await deps.gate.identify(bearerToken(req));
    if (!key) return answerUnauthorized(res);
    let message: InboundMessage | undefined;
    let refusal: unknown;
    try {
      message = await chatMessage(req, res, key.userId);
    } catch (error) {
      refusal = error;
    }
    const countable = message !== undefined && admissionError(message) === undefined;
    const decision = await deps.gate.admitKey(key, countable);
    if (!passedGate(res, decision)) return;
    if (!message) throw refusal;
    const outcome = await deps.router.send({ ...message, quota: decision.quota });
    if (outcome.kind === 'failed') throw outcome.error;
    // With the owner's "citations in API replies" on, the text keeps its [n] markers and lists them.
    res.send(200, { response: outcome.kind === 'reply' ? outcome.text + sourcesFooter(outcome.citations) : '' });
  });

  /** The chat request's message: its chatbot owned by the key's account (404), then its body (400). */
  const chatMessage = async (req: Request, res: Response, userId: string): Promise<InboundMessage> => {
    const chatbot = await ownedChatbot(req, userId);
    const body = await readJsonObject(req, res);
    const content = checkMessageText(body.message, 'message');
    const sessionId = body.session_id === undefined ? `api-${userId}` : checkSessionId(body.session_id);
    return { chatbot, sessionId, content, channel: 'api' };
  };
}
