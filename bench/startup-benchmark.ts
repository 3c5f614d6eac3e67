/**
 * `npm run bench -- startup`: a gateway process started over a Redis holding 100k chunks (the local
 * embedder's space, 384 dimensions; text from synthetic-corpus.ts), 100 chatbots of 1,000 chunks. It
 * measures the time from spawning the process (`node src/main.ts`, what `npm start` runs) to the
 * first correct chat answer for the chatbot the background load comes to last, and to its index
 * being loaded (as `status` reads it); the same-run baseline is the old synchronous start's wait,
 * `RetrievalIndex.load` over the same Redis, which every gateway awaited before it listened.
 */

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { startApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import type { ChunkRecord } from '../src/rag/chunk.ts';
import { LocalEmbedder } from '../src/rag/local-embedder.ts';
import { openRetrieval } from '../src/rag/retrieval-setup.ts';
import { connectRedis } from '../src/redis/redis-client.ts';
import { RedisKeys } from '../src/redis/redis-keys.ts';
import { SignalBus } from '../src/redis/signal-bus.ts';
import { GatewayPresence } from '../src/store/gateway-presence.ts';
import { systemClock } from '../src/clock.ts';
import { fakeOpenAi } from '../test/fakes/fake-llm-server.ts';
import { freePort, startRedis } from '../test/support/redis-server.ts';
import { describeMachine } from './bench-support.ts';
import { embeddingLikeSampler, mulberry32, SyntheticCorpus } from './synthetic-corpus.ts';

const CHATBOTS = 100;
const CHUNKS_PER_CHATBOT = 1000;
const ANSWER = 'Unworn shoes can be returned within 30 days for a full refund.';
const REPLY = 'Returns are free within 30 days.';
const UNLIMITED = '100000000';
const POLL_MS = 20;

export async function run(): Promise<number> {
  console.log(`machine: ${await describeMachine()}`);
  const redis = await startRedis();
  const openai = await fakeOpenAi().start();
  openai.behaviour = (request) => ({
    text: String(request.body.messages[0].content).includes(ANSWER) ? REPLY : 'I do not know.',
  });
  try {
    const env = {
      REDIS_URL: redis.url,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      SEARCH_ENGINE: 'in-process',
      OPENAI_API_KEY: 'sk-bench',
      OPENAI_BASE_URL: `${openai.url}/v1`,
      RATE_LIMIT_PER_MINUTE: UNLIMITED,
      CONVERSATION_RATE_LIMIT: UNLIMITED,
    };
    const { chatbotId, key } = await seed(env);
    const gateway = await timeGateway(env, chatbotId, key);
    const baseline = await timeSynchronousLoad(env);
    console.log(`chunks in Redis: ${CHATBOTS * CHUNKS_PER_CHATBOT} (${CHATBOTS} chatbots of ${CHUNKS_PER_CHATBOT})`);
    console.log(`process start → listening (first HTTP answer): ${seconds(gateway.listening)}`);
    console.log(
      `process start → first correct chat answer: ${seconds(gateway.answered)} (wrong answers: ${gateway.wrong})`,
    );
    console.log(`process start → index loaded in the background: ${seconds(gateway.loaded)}`);
    console.log(`baseline, the old synchronous start's wait (RetrievalIndex.load): ${seconds(baseline)}`);
    console.log(`ratio baseline / first correct answer: ${(baseline / gateway.answered).toFixed(1)}`);
    return gateway.wrong === 0 ? 0 : 1;
  } finally {
    await openai.stop();
    await redis.stop();
  }
}

/** An account, a chatbot and its API key (through a gateway that then stops), and the 100k chunks. */
async function seed(env: Record<string, string>): Promise<{ chatbotId: string; key: string }> {
  const setup = await startApp(loadConfig({ ...env, PORT: '0' }), createLogger('silent'));
  const user = await setup.services.accounts.create('bench@example.com', 'scale');
  const { key } = await setup.services.apiKeys.create(user.id, 'bench');
  const bot = await setup.services.chatbots.create(user.id, { name: 'Shop Bot', provider: 'chatgpt' });
  const corpus = new SyntheticCorpus(42);
  const sample = embeddingLikeSampler(mulberry32(7), new LocalEmbedder().dimensions);
  const started = performance.now();
  // Filler chatbots' ids sort before any UUID, so the background load comes to the asked one last.
  for (let c = 0; c < CHATBOTS; c++) {
    const chatbotId = c === CHATBOTS - 1 ? bot.id : `0-filler-${String(c).padStart(2, '0')}`;
    const chunks: ChunkRecord[] = [];
    for (let i = 0; i < CHUNKS_PER_CHATBOT; i++) {
      const text = corpus.chunk(c * CHUNKS_PER_CHATBOT + i);
      chunks.push({ ...text, chatbotId, embedding: sample() });
    }
    if (chatbotId === bot.id) {
      const [embedding] = await new LocalEmbedder().embed([`Returns\n${ANSWER}`]);
      chunks[0] = { ...chunks[0]!, title: 'Returns', content: ANSWER, embedding: embedding! };
    }
    await setup.retrieval.chunks.save(chunks);
  }
  console.log(`seeded in ${seconds(performance.now() - started)}`);
  await setup.stop();
  return { chatbotId: bot.id, key };
}

/** Spawns the gateway; polls a chat until it is answered correctly, then the presence until loaded. */
async function timeGateway(env: Record<string, string>, chatbotId: string, key: string) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/api/v1/chatbots/${chatbotId}/chat`;
  const started = performance.now();
  const child = spawn(process.execPath, ['src/main.ts'], { env: { ...env, PORT: String(port) }, stdio: 'ignore' });
  const redis = await connectRedis({ url: env.REDIS_URL! }, createLogger('silent'));
  try {
    let listening: number | undefined;
    let wrong = 0;
    for (let attempt = 0; ; attempt++) {
      const answer = await chat(url, key, `bench-${attempt}`);
      if (answer !== undefined) listening ??= performance.now() - started;
      if (answer === REPLY) break;
      if (answer !== undefined) wrong++;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    const answered = performance.now() - started;
    const presence = new GatewayPresence(redis, new RedisKeys('sb:'), systemClock);
    while (!Object.values(await presence.searchIndexes()).includes('loaded')) {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    return { listening: listening!, answered, loaded: performance.now() - started, wrong };
  } finally {
    await redis.close();
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
}

/** The chat's reply text, or undefined while the gateway does not answer yet. */
async function chat(url: string, key: string, sessionId: string): Promise<string | undefined> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'Can I return my shoes?', session_id: `api-${sessionId}` }),
    });
    const body = (await res.json()) as { response?: string; detail?: string };
    return body.response ?? `${res.status} ${body.detail}`;
  } catch {
    return undefined;
  }
}

/** How long the old start waited: the whole in-process load of the same Redis, before listening. */
async function timeSynchronousLoad(env: Record<string, string>): Promise<number> {
  const logger = createLogger('silent');
  const redis = await connectRedis({ url: env.REDIS_URL! }, logger);
  try {
    const keys = new RedisKeys('sb:');
    const retrieval = await openRetrieval(redis, keys, loadConfig(env), new SignalBus(redis, keys, logger), logger);
    const started = performance.now();
    await retrieval.index.load(() => Promise.resolve());
    return performance.now() - started;
  } finally {
    await redis.close();
  }
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(2)} s`;
}
