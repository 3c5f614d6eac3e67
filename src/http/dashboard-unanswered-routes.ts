import type { Request, Response, Server } from 'restify';
import type { DashboardSource } from '../contract/source.ts';
import type { ImproveAnswerBody, ImprovedAnswer, ImproveReplyBody, UnansweredGroup } from '../contract/unanswered.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import type { Source } from '../sources/source.ts';
import { checkUnansweredStatus } from '../unanswered/unanswered-status.ts';
import { isUuid } from '../uuid.ts';
import { operatorSourceSyncView } from '../views.ts';
import { chatbotOf, DASHBOARD_API, param, type DashboardApi } from './dashboard-api.ts';
import { bodyOf, optionalString, requiredString, type RequestBody } from './dashboard-body.ts';
import { textSize } from './dashboard-source-routes.ts';
import { jsonBody } from './json-body.ts';

/**
 * The unanswered-questions inbox of a chatbot (`?status=open`, the default, or `resolved`), answering
 * a group (its questions and the answer become a text source; the group is resolved) or dismissing
 * it, and answering the question behind any AI reply of a transcript.
 */
export function registerDashboardUnansweredRoutes(server: Server, api: DashboardApi): void {
  const { services, owned, auth, chatbot: ownedChatbot } = api;
  const base = `${DASHBOARD_API}/chatbots/:chatbot_id`;
  // Resolves `:group_id` to a group of the chatbot before any body is read (404 before 400).
  const ownedGroup = async (req: Request) => {
    const id = param(req, 'group_id');
    if (!isUuid(id)) throw new NotFoundError('Question not found.');
    (req as GroupRequest).group = await services.unanswered.get(chatbotOf(req).id, id.toLowerCase());
  };
  const groupOf = (req: Request) => (req as GroupRequest).group;
  const view = async (source: Source): Promise<DashboardSource> => {
    const text = ((await services.sources.content(source)) ?? Buffer.alloc(0)).toString('utf8');
    return { ...operatorSourceSyncView(source, undefined), ...textSize(text), progress: '' };
  };

  server.get(`${base}/unanswered`, auth, ownedChatbot, async (req: Request, res: Response) => {
    const query = new URL(req.url ?? '/', 'http://gateway').searchParams.getAll('status');
    if (query.length > 1) throw new ValidationError('status must be open or resolved.');
    const groups = await services.unanswered.list(chatbotOf(req).id, checkUnansweredStatus(query[0]));
    res.send(200, groups satisfies UnansweredGroup[]);
  });

  server.post(
    `${base}/unanswered/:group_id/answer`,
    auth,
    ownedChatbot,
    ownedGroup,
    jsonBody(),
    async (req: Request, res: Response) => {
      const input = improvedAnswer(bodyOf<ImproveAnswerBody>(req));
      const chatbotId = chatbotOf(req).id;
      const answered = await services.improver.answerGroup(chatbotId, groupOf(req).id, input, api.retrieval.index);
      res.send(201, { source: await view(answered.source), group: answered.group } satisfies ImprovedAnswer);
    },
  );

  server.post(
    `${base}/unanswered/:group_id/dismiss`,
    auth,
    ownedChatbot,
    ownedGroup,
    async (req: Request, res: Response) => {
      const group = await services.improver.dismiss(chatbotOf(req).id, groupOf(req).id);
      res.send(200, group satisfies UnansweredGroup);
    },
  );

  server.post(
    `${base}/conversations/:session_id/answer`,
    auth,
    ownedChatbot,
    async (req: Request) => {
      const sessionId = owned.sessionId(param(req, 'session_id'));
      // The conversation is the owner's before its body is read.
      await services.conversations.get(chatbotOf(req).id, sessionId);
    },
    jsonBody(),
    async (req: Request, res: Response) => {
      const body = bodyOf<ImproveReplyBody>(req);
      const createdAt = requiredString(body, 'created_at');
      const input = improvedAnswer(body);
      const sessionId = owned.sessionId(param(req, 'session_id'));
      const answered = await services.improver.answerReply(chatbotOf(req).id, sessionId, createdAt, input);
      res.send(201, { source: await view(answered.source), group: answered.group } satisfies ImprovedAnswer);
    },
  );
}

/** A request whose `:group_id` was resolved to a group of its chatbot. */
interface GroupRequest extends Request {
  group: UnansweredGroup;
}

/** The answer and the optional title of a body, each a string when given. */
function improvedAnswer(body: RequestBody<ImproveAnswerBody>): { answer: string; title?: string } {
  const answer = requiredString(body, 'answer');
  const title = optionalString(body, 'title');
  return title === undefined ? { answer } : { answer, title };
}
