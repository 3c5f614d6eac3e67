import type { Request, Response, Server } from 'restify';
import type { CannedReply, CannedReplyPatchBody, NewCannedReplyBody } from '../contract/canned-reply.ts';
import type { Deleted } from '../contract/deleted.ts';
import { DASHBOARD_API, ownerOf, param, type DashboardApi } from './dashboard-api.ts';
import { bodyOf, optionalString } from './dashboard-body.ts';
import { jsonBody } from './json-body.ts';

/**
 * The owner's canned replies for their agents: list (by shortcut), create, change, delete. Another
 * owner's reply, an unknown id and a malformed one are all `Canned reply not found.`, checked before
 * the body is read (404 before 400).
 */
export function registerDashboardCannedReplyRoutes(server: Server, api: DashboardApi): void {
  const { services, auth } = api;
  const base = `${DASHBOARD_API}/canned-replies`;
  const ownedReply = async (req: Request) =>
    void (await services.cannedReplies.get(ownerOf(req), param(req, 'reply_id')));

  server.get(base, auth, async (req: Request, res: Response) => {
    res.send(200, (await services.cannedReplies.list(ownerOf(req))) satisfies CannedReply[]);
  });

  server.post(base, auth, jsonBody(), async (req: Request, res: Response) => {
    const body = bodyOf<NewCannedReplyBody>(req);
    const created = await services.cannedReplies.create(ownerOf(req), { shortcut: body.shortcut, text: body.text });
    res.send(201, created satisfies CannedReply);
  });

  server.patch(`${base}/:reply_id`, auth, ownedReply, jsonBody(), async (req: Request, res: Response) => {
    const body = bodyOf<CannedReplyPatchBody>(req);
    const patch = { shortcut: optionalString(body, 'shortcut'), text: optionalString(body, 'text') };
    const updated = await services.cannedReplies.update(ownerOf(req), param(req, 'reply_id'), patch);
    res.send(200, updated satisfies CannedReply);
  });

  server.del(`${base}/:reply_id`, auth, async (req: Request, res: Response) => {
    const id = param(req, 'reply_id');
    await services.cannedReplies.delete(ownerOf(req), id);
    res.send(200, { id: id.toLowerCase(), deleted: true } satisfies Deleted);
  });
}
