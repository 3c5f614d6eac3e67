import type { Request, Response, Server } from 'restify';
import type { AgentCannedReply, AgentIdentity, AgentTranscript } from '../contract/agent-protocol.ts';
import { checkSessionId } from '../conversations/session.ts';
import { NotFoundError } from '../errors.ts';
import type { Agent } from '../agents/agent.ts';
import type { AgentStore } from '../store/agent-store.ts';
import type { CannedReplyStore } from '../store/canned-reply-store.ts';
import type { ChatbotStore } from '../store/chatbot-store.ts';
import type { ConversationStore } from '../store/conversation-store.ts';
import { sendDetail } from './http-server.ts';
import type { WebBundles } from './web-bundle.ts';
import { contentSecurityPolicy, serveBundle, serveWebFile } from './web-page.ts';

/** What the agents' HTTP side reads. */
export interface AgentRouteDeps {
  agents: AgentStore;
  cannedReplies: CannedReplyStore;
  chatbots: ChatbotStore;
  conversations: ConversationStore;
  bundles: WebBundles;
}

/** The console page allows its own script and socket, inline styles (the script injects them), nothing else. */
const CONSOLE_POLICY = contentSecurityPolicy([
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'unsafe-inline'",
  "connect-src 'self'",
  'img-src data:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
]);

const CONSOLE_PAGE = new URL('../../web/console/index.html', import.meta.url);

/**
 * The agent console and what it reads with the agent's token as a Bearer credential: `GET /agents`
 * (the page), `GET /agents/console.js`, `GET /agents/v1/me` (who the token belongs to),
 * `GET /agents/v1/conversations/{chatbot_id}/{session_id}` (a transcript; another owner's
 * conversation is not found) and `GET /agents/v1/canned-replies` (the owner's canned replies).
 */
export function registerAgentRoutes(server: Server, deps: AgentRouteDeps): void {
  serveWebFile(server, '/agents', CONSOLE_PAGE, { contentType: 'text/html; charset=utf-8', csp: CONSOLE_POLICY });
  serveBundle(server, '/agents/console.js', 'console/console.ts', deps.bundles);

  server.get('/agents/v1/me', async (req: Request, res: Response) => {
    const agent = await bearerAgent(deps.agents, req);
    if (!agent) return sendDetail(res, 401, 'Invalid agent token.');
    res.setHeader('Cache-Control', 'no-store');
    res.send(200, { id: agent.id, name: agent.name } satisfies AgentIdentity);
  });

  server.get('/agents/v1/canned-replies', async (req: Request, res: Response) => {
    const agent = await bearerAgent(deps.agents, req);
    if (!agent) return sendDetail(res, 401, 'Invalid agent token.');
    res.setHeader('Cache-Control', 'no-store');
    const replies = await deps.cannedReplies.list(agent.user_id);
    res.send(200, replies.map(({ id, shortcut, text }) => ({ id, shortcut, text })) satisfies AgentCannedReply[]);
  });

  server.get('/agents/v1/conversations/:chatbot_id/:session_id', async (req: Request, res: Response) => {
    const agent = await bearerAgent(deps.agents, req);
    if (!agent) return sendDetail(res, 401, 'Invalid agent token.');
    res.setHeader('Cache-Control', 'no-store');
    const params = req.params as Record<string, string>;
    const chatbot = await deps.chatbots.getOwned(agent.user_id, String(params.chatbot_id).toLowerCase());
    let sessionId: string;
    try {
      sessionId = checkSessionId(params.session_id);
    } catch {
      throw new NotFoundError('Conversation not found.');
    }
    const { chatbot_id, session_id, source, escalated_at, taken_over_by, messages } =
      await deps.conversations.transcript(chatbot.id, sessionId);
    res.send(200, { chatbot_id, session_id, source, escalated_at, taken_over_by, messages } satisfies AgentTranscript);
  });
}

/** The agent whose token the request carries as `Authorization: Bearer`, if it is active. */
function bearerAgent(agents: AgentStore, req: Request): Promise<Agent | undefined> {
  const header = req.headers.authorization ?? '';
  return agents.authenticate(/^Bearer (\S+)$/.exec(header)?.[1]);
}
