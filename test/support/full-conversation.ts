import type { Chatbot } from '../../src/chatbots/chatbot.ts';
import type { Lead } from '../../src/contract/lead.ts';
import type { Services } from '../../src/services.ts';
import { parseTimestamp } from '../../src/timestamp.ts';

const LIMITS = { rateLimit: 100, rateWindowMs: 60_000, leaseMs: 30_000, historySize: 10 };

/** One turn of a conversation: the visitor's message and the stored reply (with `citations`, if given). */
export async function turn(
  s: Services,
  chatbotId: string,
  sessionId: string,
  question: string,
  answer: string,
  citations?: Array<{ title: string; url?: string }>,
): Promise<{ askedAt: string; answeredAt: string }> {
  const started = await s.conversations.beginTurn(chatbotId, sessionId, { content: question, source: 'embed' }, LIMITS);
  if (started.kind !== 'started') throw new Error(`turn not started: ${started.kind}`);
  const ended = await s.conversations.endTurn(chatbotId, sessionId, started.token, {
    role: 'assistant',
    content: answer,
    ...(citations ? { citations } : {}),
  });
  return { askedAt: started.createdAt, answeredAt: ended.createdAt };
}

/**
 * A conversation with something under every key a conversation can have: messages (one reply with
 * citations), a rating, a failure reason, a discarded reply, an unanswered-inbox mark (and the group
 * naming the session), an escalation and takeover, an agent's reply, the preview's session, and the
 * lead the visitor left. Each step reads the clock the services were built with.
 */
export async function fullConversation(
  s: Services,
  chatbot: Chatbot,
  sessionId: string,
): Promise<{ lead: Lead; messages: number }> {
  const first = await turn(s, chatbot.id, sessionId, 'Do you ship to Norway?', 'Yes, in five days [1].', [
    { title: 'Shipping', url: 'https://shop.example/shipping' },
  ]);
  await s.feedback.rate(chatbot.id, sessionId, first.answeredAt, 'down');
  const failed = await s.conversations.beginTurn(
    chatbot.id,
    sessionId,
    { content: 'And to Iceland?', source: 'embed' },
    LIMITS,
  );
  if (failed.kind !== 'started') throw new Error(failed.kind);
  await s.conversations.noteFailure(chatbot.id, sessionId, failed.createdAt, 'The provider timed out.');
  await s.conversations.endTurn(chatbot.id, sessionId, failed.token, null);
  const cut = await s.conversations.beginTurn(chatbot.id, sessionId, { content: 'Hello?', source: 'embed' }, LIMITS);
  if (cut.kind !== 'started') throw new Error(cut.kind);
  await s.conversations.endTurn(chatbot.id, sessionId, cut.token, {
    role: 'assistant',
    content: 'cut short',
    discard: true,
  });
  await s.unanswered.record(chatbot.id, [
    {
      occurrence: {
        sessionId,
        question: 'And to Iceland?',
        key: 'and to iceland',
        reason: 'fallback',
        askedAt: parseTimestamp(failed.createdAt)!,
      },
      match: { target: '', version: '', vector: '', force: true },
    },
  ]);
  await s.conversations.escalate(chatbot.id, sessionId);
  await s.conversations.takeOver(chatbot.id, sessionId, 'Maria');
  await s.conversations.appendAgentReply(chatbot.id, sessionId, 'Maria', 'Hi, Maria here.', {
    name: 'Maria',
    initial: 'M',
  });
  const lead = await s.leadCapture.capture(chatbot, sessionId, { name: 'Ada', email: 'ada@example.com' });
  // Questions, the reply, the failed question, the unanswered one, the agent's reply.
  return { lead, messages: 5 };
}
