import type { CannedReply } from './console-protocol.ts';

/**
 * The query a draft asks the canned-reply list for: what follows a `/` that starts the reply box,
 * up to the first space (`/ref` → `ref`, `/` → `''`); `null` when the draft is not one.
 */
export function cannedQuery(draft: string): string | null {
  const match = /^\/(\S*)$/.exec(draft);
  return match ? match[1]! : null;
}

/**
 * The canned replies `query` finds, best first: shortcuts that start with it, then shortcuts that
 * contain it, then texts that contain it, each group by shortcut; case does not matter. An empty
 * query finds them all.
 */
export function matchCannedReplies(replies: readonly CannedReply[], query: string): CannedReply[] {
  const wanted = query.toLowerCase();
  const rank = (reply: CannedReply): number => {
    const shortcut = reply.shortcut.toLowerCase();
    if (shortcut.startsWith(wanted)) return 0;
    if (shortcut.includes(wanted)) return 1;
    return reply.text.toLowerCase().includes(wanted) ? 2 : -1;
  };
  return replies
    .map((reply) => ({ reply, rank: rank(reply) }))
    .filter((entry) => entry.rank >= 0)
    .sort((a, b) => a.rank - b.rank || (a.reply.shortcut < b.reply.shortcut ? -1 : 1))
    .map((entry) => entry.reply);
}
