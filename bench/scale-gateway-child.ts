/**
 * One gateway of the scale benchmark, in a process of its own: the whole gateway (`startApp`) over
 * the redis-server at `REDIS_URL`, with an LLM that answers at once and limits high enough never to
 * refuse (every limit still runs its script). Prints `{"port":N}` once it listens; stops on SIGTERM.
 */

import { startApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import type { LlmProvider } from '../src/llm/llm-provider.ts';
import { createLogger } from '../src/logger.ts';
import { FAKE_REPLY } from './chat-request.ts';

const UNLIMITED = '100000000';

if (process.argv[1] === import.meta.filename) {
  const config = loadConfig({
    REDIS_URL: process.env['REDIS_URL'],
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    RATE_LIMIT_PER_MINUTE: UNLIMITED,
    CONVERSATION_RATE_LIMIT: UNLIMITED,
    PLAN_QUOTAS: `free=100,scale=${UNLIMITED}`,
  });
  const llm: LlmProvider = { generate: () => Promise.resolve({ text: FAKE_REPLY }) };
  const app = await startApp(config, createLogger('silent'), {
    providers: { chatgpt: llm, gemini: llm, ollama: llm },
    shutdownGraceMs: 500,
  });
  process.on('SIGTERM', () => void app.stop().then(() => process.exit(0)));
  console.log(JSON.stringify({ port: app.port }));
}
