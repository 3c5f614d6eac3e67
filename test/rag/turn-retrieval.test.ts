import t from 'tap';
import { DEFAULT_SETTINGS } from '../../src/chatbots/chatbot-settings.ts';
import type { ChatPrompt, GenerateOptions, LlmProvider, LlmReply } from '../../src/llm/llm-provider.ts';
import { LlmError } from '../../src/llm/llm-provider.ts';
import { createLogger } from '../../src/logger.ts';
import { rewritePrompt } from '../../src/rag/query-rewrite.ts';
import type { RetrievedChunk } from '../../src/rag/retriever.ts';
import { fuseRankings, TurnRetrieval } from '../../src/rag/turn-retrieval.ts';
import type { Chatbot } from '../../src/chatbots/chatbot.ts';
import type { StoredMessage } from '../../src/store/conversation-store.ts';
import { LogCapture } from '../support/log-capture.ts';
import { SimulatedClock } from '../support/simulated-clock.ts';

const chunk = (id: string, relevance = 0.5): RetrievedChunk => ({
  id,
  text: `text of ${id}`,
  title: id,
  url: '',
  score: 1,
  relevance,
});
const ranking = (ids: string, relevance?: number) => ids.split(' ').map((id) => chunk(id, relevance));

t.test('fusing the queries: Reciprocal Rank Fusion by chunk id, the 5 best, scored by the fusion', async (t) => {
  const message = ranking('a b c d e');
  const question = ranking('f a g b h');
  const terms = ranking('f g a i j');
  const fused = fuseRankings([message, question, terms]);
  t.same(
    fused.map((c) => c.id),
    ['a', 'f', 'g', 'b', 'c'],
  );
  t.same(fused[0], { ...chunk('a'), score: 1 / 61 + 1 / 62 + 1 / 63 });
  t.same(
    fused.map((c) => c.score),
    [1 / 61 + 1 / 62 + 1 / 63, 2 / 61, 1 / 63 + 1 / 62, 1 / 62 + 1 / 64, 1 / 63],
  );
  t.same(
    fuseRankings([message, question, terms], 20).map((c) => c.id),
    ['a', 'f', 'g', 'b', 'c', 'd', 'i', 'e', 'h', 'j'],
    'ties: the best single rank, then the id',
  );
});

t.test('fusing the queries: a passage found by several keeps the best relevance any of them gave it', async (t) => {
  const fused = fuseRankings([
    [chunk('a', 0.31), chunk('b', 0.4)],
    [chunk('b', 0.2), chunk('a', 0.62)],
    [chunk('c', 0.9), chunk('a', 0.5)],
  ]);
  t.same(
    fused.map((c) => [c.id, c.relevance]),
    [
      ['a', 0.62],
      ['b', 0.4],
      ['c', 0.9],
    ],
  );
  t.same(fused[0], { ...chunk('a', 0.62), score: 1 / 61 + 2 / 62 }, 'the rest of the passage is unchanged');
  t.same(fuseRankings([]), []);
});

/** A simulated clock the fakes move: each call takes its time on it. */
const clock = new SimulatedClock();

const chatbot = (queryRewrite: boolean): Chatbot => ({
  id: 'bot-1',
  user_id: 'user-1',
  name: 'Shop Helper',
  slug: 'shop-helper',
  provider: 'chatgpt',
  model: 'gpt-test',
  is_active: true,
  created_at: '2026-01-01T00:00:00.000000+00:00',
  system_prompt: '',
  fallback_message: 'Sorry.',
  settings: { ...DEFAULT_SETTINGS, retrieval: { query_rewrite: queryRewrite } },
});

/** Answers the rewrite with `reply` after `takesMs` simulated ms (250), or fails, or never answers. */
class RewritingLlm implements LlmProvider {
  calls: Array<{ model: string; prompt: ChatPrompt; options: GenerateOptions | undefined }> = [];
  takesMs = 250;
  reply: () => Promise<LlmReply> = () =>
    Promise.resolve({
      text: 'question: How long is the warranty of the Aurora X2?\nterms: Aurora X2, warranty',
      usage: { input_tokens: 120, output_tokens: 18 },
    });
  async generate(model: string, prompt: ChatPrompt, options?: GenerateOptions): Promise<LlmReply> {
    this.calls.push({ model, prompt, options });
    await clock.advance(this.takesMs);
    return this.reply();
  }
}

/** Each query's ranking, fixed; each search takes 10 simulated ms. */
const RANKINGS: Record<string, RetrievedChunk[]> = {
  'How long is its warranty?': ranking('w1 w2 w3 w4 w5', 0.3104),
  'How long is the warranty of the Aurora X2?': ranking('aurora w1 w2 w3 w4', 0.6),
  'Aurora X2 warranty': ranking('aurora w2 manual w1 w5', 0.7),
  'Anything on shipping?': [],
};

function setup(options: { rewriteTimeoutMs?: number } = {}) {
  const llm = new RewritingLlm();
  const queries: string[] = [];
  const logs = new LogCapture();
  const retrieval = new TurnRetrieval({
    retriever: {
      retrieve: async (_chatbotId, query) => {
        queries.push(query);
        // The searches start together, and their advances run one after another: 10 ms each.
        await clock.advance(10);
        return RANKINGS[query] ?? [];
      },
    },
    providers: { chatgpt: llm, gemini: llm, ollama: llm },
    clock,
    logger: createLogger('info', logs),
    rewriteTimeoutMs: options.rewriteTimeoutMs ?? 5000,
  });
  return { llm, queries, logs, retrieval };
}

const history: StoredMessage[] = [
  { role: 'user', content: 'Tell me about the Aurora X2.', created_at: '2026-01-01T00:00:00.000000+00:00' },
  { role: 'assistant', content: 'It is our best blender.', created_at: '2026-01-01T00:00:01.000000+00:00' },
];
const message = 'How long is its warranty?';

t.test('off (the default): the message alone is retrieved for, and no LLM is called', async (t) => {
  const { llm, queries, logs, retrieval } = setup();
  const found = await retrieval.retrieve({ chatbot: chatbot(false), history, message });
  t.same(found, {
    context: RANKINGS[message],
    bestRelevance: 0.3104,
    metrics: { retrieve_ms: 10, best_relevance: 0.31 },
  });
  t.same(queries, [message]);
  t.equal(llm.calls.length, 0);
  t.same(logs.lines, []);
});

t.test('on: one rewrite call, the three queries retrieved for and fused', async (t) => {
  const { llm, queries, logs, retrieval } = setup();
  const found = await retrieval.retrieve({ chatbot: chatbot(true), history, message });
  t.equal(llm.calls.length, 1);
  t.equal(llm.calls[0]!.model, 'gpt-test');
  t.same(llm.calls[0]!.prompt, rewritePrompt(history, message));
  t.ok(llm.calls[0]!.options?.signal instanceof AbortSignal, 'the call has a deadline');
  t.same(queries, [message, 'How long is the warranty of the Aurora X2?', 'Aurora X2 warranty']);
  t.same(
    found.context.map((c) => c.id),
    ['w1', 'w2', 'aurora', 'w3', 'w4'],
  );
  t.same(found.context, fuseRankings(Object.values(RANKINGS)));
  t.same(
    found.context.map((c) => c.relevance),
    [0.7, 0.7, 0.7, 0.6, 0.6],
    "each passage's best relevance over the three queries",
  );
  t.equal(found.bestRelevance, 0.7);
  t.same(found.metrics, {
    retrieve_ms: 30,
    best_relevance: 0.7,
    rewrite: { status: 'ok', ms: 250, input_tokens: 120, output_tokens: 18, variants: 3 },
  });
  t.same(logs.lines, []);
});

t.test('a rewrite that fails, cannot be read or times out leaves the message alone, with a warning', async (t) => {
  const warning = 'query rewrite unusable: retrieving for the message alone';
  const failing = setup();
  failing.llm.reply = () => Promise.reject(new LlmError('openai', '500 fake failure'));
  const failed = await failing.retrieval.retrieve({ chatbot: chatbot(true), history, message });
  t.same(failed, {
    context: RANKINGS[message],
    bestRelevance: 0.3104,
    metrics: {
      retrieve_ms: 10,
      best_relevance: 0.31,
      rewrite: { status: 'failed', ms: 250, input_tokens: null, output_tokens: null, variants: 1 },
    },
  });
  t.same(failing.queries, [message]);
  t.equal(failing.logs.lines.length, 1);
  t.match(failing.logs.withMessage(warning), [
    {
      level: 40,
      chatbot_id: 'bot-1',
      status: 'failed',
      err: { type: 'LlmError', message: 'openai: 500 fake failure' },
    },
  ]);

  const rambling = setup();
  rambling.llm.reply = () =>
    Promise.resolve({ text: 'Sure! It has a two-year warranty.', usage: { input_tokens: 120, output_tokens: 9 } });
  const unread = await rambling.retrieval.retrieve({ chatbot: chatbot(true), history, message });
  t.same(unread.metrics.rewrite, { status: 'unparsable', ms: 250, input_tokens: 120, output_tokens: 9, variants: 1 });
  t.same(unread.context, RANKINGS[message]);
  t.same(rambling.logs.withMessage(warning), [{ level: 40, chatbot_id: 'bot-1', status: 'unparsable', msg: warning }]);
  t.notOk(JSON.stringify(rambling.logs.lines).includes('two-year'), "the model's text is not logged");

  // A provider that ignores the signal still cannot hold the turn past the deadline.
  const hanging = setup({ rewriteTimeoutMs: 100 });
  hanging.llm.takesMs = 0;
  hanging.llm.reply = () => new Promise(() => {});
  let answered = false;
  const retrieving = hanging.retrieval.retrieve({ chatbot: chatbot(true), history, message });
  void retrieving.then(() => (answered = true));
  await clock.advance(99);
  t.notOk(answered, 'still waiting for the rewrite before the deadline');
  await clock.advance(1);
  // Then the search, 10 ms of its own.
  await clock.advance(0);
  t.ok(answered, 'answered at the deadline');
  const late = await retrieving;
  t.same(late.metrics.rewrite, { status: 'timeout', ms: 100, input_tokens: null, output_tokens: null, variants: 1 });
  t.same(late.metrics.retrieve_ms, 10);
  t.same(late.context, RANKINGS[message]);
  t.match(hanging.logs.withMessage(warning), [{ level: 40, chatbot_id: 'bot-1', status: 'timeout' }]);
});

t.test('a message that finds no passage has a best relevance of 0', async (t) => {
  const { retrieval } = setup();
  const found = await retrieval.retrieve({ chatbot: chatbot(false), history, message: 'Anything on shipping?' });
  t.same(found, { context: [], bestRelevance: 0, metrics: { retrieve_ms: 10, best_relevance: 0 } });
});

t.test('the rewrite deadline is checked when the retrieval is built', async (t) => {
  const llm = new RewritingLlm();
  const deps = {
    retriever: { retrieve: () => Promise.resolve([]) },
    providers: { chatgpt: llm, gemini: llm, ollama: llm },
    clock,
    logger: createLogger('silent'),
  };
  t.throws(
    () => new TurnRetrieval({ ...deps, rewriteTimeoutMs: 0 }),
    new RangeError('rewriteTimeoutMs must be a positive number'),
  );
});
