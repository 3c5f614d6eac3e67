/**
 * autocannon's `setupRequest` for the chat benchmark. autocannon runs its load in a worker thread and
 * `require()`s this file there (a function cannot be sent to a worker), so the function is the
 * module's CommonJS-style export. Each call sets the body of the next request: the same question for
 * the next session of SESSIONS, round-robin over every connection of the worker, so the requests in
 * flight at any moment (at most one per connection) are for distinct conversations.
 */

import type autocannon from 'autocannon';

/** Distinct conversations the load is spread over. */
export const SESSIONS = 1000;

export const MESSAGE = 'What are your opening hours?';

/** What the gateway's fake LLM answers, and what the baseline route answers. */
export const FAKE_REPLY = 'We are open from 9:00 to 17:00, Monday to Friday.';
export const BASELINE_REPLY = 'ok';

/** The response bodies a chat may get: one of these per target. */
export const replyBody = (text: string): string => JSON.stringify({ response: text });

export const sessionId = (index: number): string => `api-bench-${index}`;

export const chatBody = (index: number): string => JSON.stringify({ message: MESSAGE, session_id: sessionId(index) });

let next = 0;

function setupRequest(request: autocannon.RequestParams): autocannon.RequestParams {
  const index = next;
  next = (next + 1) % SESSIONS;
  return { ...request, body: chatBody(index) };
}

export { setupRequest as 'module.exports' };
