/**
 * The widget benchmark's gateway, in a process of its own started by widget-benchmark.ts with
 * `--expose-gc` (so its RSS is its own and can be measured after forced collections): the whole
 * gateway (`startApp`) over the redis-server at `REDIS_URL`, with an LLM that answers at once and the
 * real webhook outbox (no webhook is registered, so each event costs one subscriber lookup and no
 * delivery). It creates a Scale account and one chatbot, prints one JSON line (`ChildReady`) on stdout
 * once it listens, then answers the parent's IPC requests (see widget-baseline-child.ts).
 */

import { randomUUID } from 'node:crypto';
import { startApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import type { LlmProvider } from '../src/llm/llm-provider.ts';
import type { LlmProviders } from '../src/llm/llm-providers.ts';
import { createLogger } from '../src/logger.ts';
import { REPLY, serveParent, type ChildReady } from './widget-baseline-child.ts';

/**
 * High enough that neither the per-conversation rate limit, the monthly quota nor the socket limits
 * (every socket opens from one address; busy visitors send faster than a person types) ever refuse.
 */
const UNLIMITED = '100000000';

async function startGateway(redisUrl: string): Promise<void> {
  const config = loadConfig({
    REDIS_URL: redisUrl,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    CONVERSATION_RATE_LIMIT: UNLIMITED,
    SOCKET_OPENS_PER_ADDRESS: UNLIMITED,
    WIDGET_NEW_SESSIONS_PER_ADDRESS: UNLIMITED,
    SOCKET_FRAME_RATE: UNLIMITED,
    SOCKET_FRAME_BURST: UNLIMITED,
    PLAN_QUOTAS: `free=100,hobby=2000,standard=10000,scale=${UNLIMITED}`,
  });
  const llm: LlmProvider = { generate: () => Promise.resolve({ text: REPLY }) };
  const providers: LlmProviders = { chatgpt: llm, gemini: llm, ollama: llm };
  const app = await startApp(config, createLogger(config.LOG_LEVEL), { providers, shutdownGraceMs: 1000 });
  try {
    const user = await app.services.accounts.create(`widget-bench-${randomUUID()}@example.com`, 'scale');
    const chatbot = await app.services.chatbots.create(user.id, { name: 'Widget Bench Bot' });
    serveParent(
      () => app.sockets.size,
      () => app.stop(),
    );
    const ready: ChildReady = { port: app.port, chatbotId: chatbot.id };
    console.log(JSON.stringify(ready));
  } catch (error) {
    await app.stop();
    throw error;
  }
}

if (process.argv[1] === import.meta.filename) {
  try {
    const redisUrl = process.env['REDIS_URL'];
    if (redisUrl === undefined || redisUrl === '') throw new Error('widget-gateway-child needs REDIS_URL');
    await startGateway(redisUrl);
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    process.exitCode = 1;
  }
}
