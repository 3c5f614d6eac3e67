/**
 * autocannon's `verifyBody` for the chat benchmark, `require()`d by its worker thread (autocannon
 * refuses `expectBody` together with `requests`). A body is right when it is the gateway's reply or
 * the baseline's; which one each target gives is checked with one request before its load.
 */

import { BASELINE_REPLY, FAKE_REPLY, replyBody } from './chat-request.ts';

const EXPECTED = new Set([replyBody(FAKE_REPLY), replyBody(BASELINE_REPLY)]);

function verifyBody(body: string): boolean {
  return EXPECTED.has(body);
}

export { verifyBody as 'module.exports' };
