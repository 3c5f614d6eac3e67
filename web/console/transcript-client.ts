import {
  detailOf,
  parseAgent,
  parseCannedReplies,
  parseTranscript,
  type Agent,
  type CannedReply,
  type ConversationRef,
  type Transcript,
} from './console-protocol.ts';

/** A read's outcome; `status` is 0 when the request itself failed. */
export type ReadResult<T> = ({ ok: true } & T) | { ok: false; status: number; detail: string };

/** The transcript fetch's outcome. */
export type TranscriptResult = ReadResult<{ transcript: Transcript }>;

/** GETs `path` with the agent's token and parses the answer; never rejects. `what` names it in errors. */
async function read<T>(token: string, path: string, what: string, parse: (body: unknown) => T | null) {
  try {
    const response = await fetch(new URL(path, location.origin).href, {
      headers: { Authorization: `Bearer ${token}` },
      cache: 'no-store',
    });
    const body: unknown = await response.json().catch(() => null);
    if (!response.ok) {
      const detail = detailOf(body) || `Loading ${what} failed (HTTP ${response.status}).`;
      return { ok: false as const, status: response.status, detail };
    }
    const value = parse(body);
    return value === null
      ? { ok: false as const, status: 0, detail: `Could not read ${what}: the server's answer is malformed.` }
      : { ok: true as const, value };
  } catch {
    return { ok: false as const, status: 0, detail: `Could not reach the server to load ${what}.` };
  }
}

/** Fetches `GET /agents/v1/conversations/{chatbot_id}/{session_id}`. */
export async function fetchTranscript(token: string, conversation: ConversationRef): Promise<TranscriptResult> {
  const path = `/agents/v1/conversations/${encodeURIComponent(conversation.chatbot_id)}/${encodeURIComponent(conversation.session_id)}`;
  const result = await read(token, path, 'the transcript', parseTranscript);
  return result.ok ? { ok: true, transcript: result.value } : result;
}

/** Fetches `GET /agents/v1/me`: whom the token signs in. */
export async function fetchAgent(token: string): Promise<ReadResult<{ agent: Agent }>> {
  const result = await read(token, '/agents/v1/me', 'your agent profile', parseAgent);
  return result.ok ? { ok: true, agent: result.value } : result;
}

/** Fetches `GET /agents/v1/canned-replies`: the owner's canned replies. */
export async function fetchCannedReplies(token: string): Promise<ReadResult<{ replies: CannedReply[] }>> {
  const result = await read(token, '/agents/v1/canned-replies', 'the canned replies', parseCannedReplies);
  return result.ok ? { ok: true, replies: result.value } : result;
}
