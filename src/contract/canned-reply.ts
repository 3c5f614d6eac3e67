/** Canned replies as the dashboard manages them. Part of the contract (see README.md beside this file). */

/**
 * One of an owner's canned replies: what an agent types after `/` in the console (`shortcut`, without
 * the slash) and the text it puts in the reply box. `GET /dashboard/api/canned-replies` (one element,
 * ordered by shortcut); what creating or changing one answers.
 */
export interface CannedReply {
  id: string;
  shortcut: string;
  text: string;
  created_at: string;
  updated_at: string;
}

/** `POST /dashboard/api/canned-replies` */
export interface NewCannedReplyBody {
  shortcut: string;
  text: string;
}

/** `PATCH /dashboard/api/canned-replies/{id}`: the fields to change. */
export type CannedReplyPatchBody = Partial<NewCannedReplyBody>;
