import { stringify } from 'csv-stringify/sync';
import type { Request, Response, Server } from 'restify';
import type {
  Conversation,
  ConversationErased,
  DashboardConversation,
  DashboardTranscript,
  PreviewSession,
  PreviewSessionBody,
  TakeoverBody,
  VisitorOfConversation,
} from '../contract/conversation.ts';
import type { Lead, LeadName } from '../contract/lead.ts';
import type { Chatbot } from '../chatbots/chatbot.ts';
import { chatbotOf, DASHBOARD_API, param, type DashboardApi } from './dashboard-api.ts';
import { bodyOf, optionalBoolean, optionalString } from './dashboard-body.ts';
import { jsonBody } from './json-body.ts';

/** Conversations listed at most, newest activity first. */
const CONVERSATION_LIST_LIMIT = 200;

/**
 * Conversations of a chatbot on every channel (source, escalation, takeover state, last message, the
 * lead its visitor left, whether it is the owner's preview), a transcript, and the operator's escalate
 * / take over / release / delete (an erasure request); the widget preview's session; leads as JSON and
 * as CSV.
 */
export function registerDashboardConversationRoutes(server: Server, api: DashboardApi): void {
  const { services, owned, auth, chatbot: ownedChatbot } = api;
  const base = `${DASHBOARD_API}/chatbots/:chatbot_id`;
  const conversation = (req: Request) => ({
    chatbot: chatbotOf(req),
    sessionId: owned.sessionId(param(req, 'session_id')),
  });

  // Who each conversation's visitor is: the lead they left, and whether it is the owner's preview.
  const visitors = async (chatbotId: string, sessionIds: string[]) => {
    const [leads, previews] = await Promise.all([
      services.leads.ofSessions(chatbotId, sessionIds),
      services.previews.previews(chatbotId, sessionIds),
    ]);
    return (sessionId: string): VisitorOfConversation => {
      const lead = leads.get(sessionId);
      return { lead: lead ? leadName(lead) : null, preview: previews.has(sessionId) };
    };
  };

  server.get(`${base}/conversations`, auth, ownedChatbot, async (req: Request, res: Response) => {
    const chatbot = chatbotOf(req);
    const recent = await services.conversations.recent(chatbot.id, CONVERSATION_LIST_LIMIT);
    const visitorOf = await visitors(
      chatbot.id,
      recent.map((row) => row.session_id),
    );
    const rows = recent.map((row) => ({ ...row, ...visitorOf(row.session_id) }));
    res.send(200, rows satisfies DashboardConversation[]);
  });

  server.get(`${base}/conversations/:session_id`, auth, ownedChatbot, async (req: Request, res: Response) => {
    const { chatbot, sessionId } = conversation(req);
    const transcript = await services.control.show(chatbot.id, sessionId);
    const visitorOf = await visitors(chatbot.id, [sessionId]);
    res.send(200, { ...transcript, ...visitorOf(sessionId) } satisfies DashboardTranscript);
  });

  // A visitor's erasure request: the conversation with everything keyed by it, and the lead it left.
  server.del(`${base}/conversations/:session_id`, auth, ownedChatbot, async (req: Request, res: Response) => {
    const { chatbot, sessionId } = conversation(req);
    res.send(200, (await services.conversationErasure.erase(chatbot.id, sessionId)) satisfies ConversationErased);
  });

  // The session the dashboard's widget preview talks in (its conversation is marked as a preview).
  server.post(`${base}/preview-session`, auth, ownedChatbot, jsonBody(), async (req: Request, res: Response) => {
    const restart = optionalBoolean(bodyOf<PreviewSessionBody>(req), 'restart') ?? false;
    const sessionId = await services.previews.open(chatbotOf(req).id, restart);
    res.send(200, { session_id: sessionId } satisfies PreviewSession);
  });

  server.post(`${base}/conversations/:session_id/escalate`, auth, ownedChatbot, async (req: Request, res: Response) => {
    const { chatbot, sessionId } = conversation(req);
    res.send(200, (await services.control.escalate(chatbot.id, sessionId)).conversation satisfies Conversation);
  });

  server.post(
    `${base}/conversations/:session_id/takeover`,
    auth,
    ownedChatbot,
    jsonBody(),
    async (req: Request, res: Response) => {
      const { chatbot, sessionId } = conversation(req);
      const agent = optionalString(bodyOf<TakeoverBody>(req), 'agent')?.trim() || 'operator';
      res.send(200, (await services.control.takeOver(chatbot.id, sessionId, agent)) satisfies Conversation);
    },
  );

  server.post(`${base}/conversations/:session_id/release`, auth, ownedChatbot, async (req: Request, res: Response) => {
    const { chatbot, sessionId } = conversation(req);
    res.send(200, (await services.control.release(chatbot.id, sessionId)) satisfies Conversation);
  });

  server.get(`${base}/leads`, auth, ownedChatbot, async (req: Request, res: Response) => {
    const chatbot = chatbotOf(req);
    res.send(200, (await services.leads.list(chatbot.id)) satisfies Lead[]);
  });

  server.get(`${base}/leads.csv`, auth, ownedChatbot, async (req: Request, res: Response) => {
    const chatbot = chatbotOf(req);
    const body = Buffer.from(leadsCsv(chatbot, await services.leads.list(chatbot.id)));
    res.writeHead(200, {
      'Content-Type': 'text/csv; charset=utf-8',
      'Content-Length': body.length,
      'Content-Disposition': `attachment; filename="leads-${chatbot.slug}.csv"`,
      'Cache-Control': 'no-store',
    });
    res.end(body);
  });
}

/**
 * Leads as CSV: the built-in fields, then the chatbot's custom fields (in their configured order, then
 * any older field no longer configured), one row per lead, newest first.
 */
function leadsCsv(chatbot: Chatbot, leads: Lead[]): string {
  const custom = chatbot.settings.lead_fields.map((field) => field.name);
  for (const lead of leads) {
    for (const name of Object.keys(lead.custom_data)) if (!custom.includes(name)) custom.push(name);
  }
  const columns = ['lead_id', 'created_at', 'name', 'email', 'phone', ...custom, 'session_id'];
  const rows = leads.map((lead) => [
    lead.lead_id,
    lead.created_at,
    lead.name,
    lead.email,
    lead.phone,
    ...custom.map((name) => lead.custom_data[name] ?? ''),
    lead.session_id,
  ]);
  // Cells a spreadsheet would read as a formula are prefixed with ' (CSV injection).
  return stringify([columns, ...rows.map((row) => row.map(spreadsheetSafe))]);
}

function leadName(lead: Lead): LeadName {
  return { lead_id: lead.lead_id, name: lead.name, email: lead.email };
}

function spreadsheetSafe(cell: string): string {
  return /^[=+\-@\t\r]/.test(cell) ? `'${cell}` : cell;
}
