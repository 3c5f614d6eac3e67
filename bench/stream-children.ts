/**
 * The stream benchmark's two servers, each in a process of its own (started by stream-benchmark.ts),
 * both calling the benchmark's fake OpenAI (stream-llm-child.ts) at `OPENAI_BASE_URL` through the official SDK and sending
 * each piece of the reply to the visitor's socket as it arrives:
 *
 * - `gateway`: the whole gateway (`startApp`) over the redis-server at `REDIS_URL`, with a Scale account
 *   and one chatbot on the `chatgpt` provider, no sources; the reply goes the way a widget reply goes
 *   (conversation actor, the reply stream over Redis pub/sub, the widget socket).
 * - `relay`: the baseline, a bare `ws` server that streams the same SDK call and sends each piece
 *   straight to the socket that asked, with the widget protocol's frames. It is what streaming costs
 *   with nothing of the gateway in between (no Redis, no actor, no pub/sub).
 *
 * Each prints one JSON line (`ChildReady`) on stdout once it listens, then answers the parent over
 * IPC like the widget benchmark's children (widget-baseline-child.ts).
 */

import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { WebSocketServer } from 'ws';
import { startApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { MAX_FRAME_BYTES, serveParent, type ChildReady } from './widget-baseline-child.ts';

/** Nothing refuses: the rate limits, the quota and the socket limits are far above the load. */
const UNLIMITED = '100000000';
const HOST = '127.0.0.1';
export const MODEL = 'gpt-bench';

async function startGatewayChild(redisUrl: string, openaiUrl: string): Promise<void> {
  const config = loadConfig({
    REDIS_URL: redisUrl,
    PORT: '0',
    HOST,
    LOG_LEVEL: 'silent',
    OPENAI_API_KEY: 'sk-bench',
    OPENAI_BASE_URL: openaiUrl,
    CRAWL_ALLOW_PRIVATE: '1',
    CONVERSATION_RATE_LIMIT: UNLIMITED,
    SOCKET_OPENS_PER_ADDRESS: UNLIMITED,
    WIDGET_NEW_SESSIONS_PER_ADDRESS: UNLIMITED,
    SOCKET_FRAME_RATE: UNLIMITED,
    SOCKET_FRAME_BURST: UNLIMITED,
    PLAN_QUOTAS: `free=100,hobby=2000,standard=10000,scale=${UNLIMITED}`,
  });
  const app = await startApp(config, createLogger(config.LOG_LEVEL), { shutdownGraceMs: 1000 });
  try {
    const user = await app.services.accounts.create(`stream-bench-${randomUUID()}@example.com`, 'scale');
    const chatbot = await app.services.chatbots.create(user.id, { name: 'Stream Bench', model: MODEL });
    serveParent(
      () => app.sockets.size,
      () => app.stop(),
    );
    console.log(JSON.stringify({ port: app.port, chatbotId: chatbot.id } satisfies ChildReady));
  } catch (error) {
    await app.stop();
    throw error;
  }
}

async function startRelayChild(openaiUrl: string): Promise<void> {
  const openai = new OpenAI({ apiKey: 'sk-bench', baseURL: openaiUrl, maxRetries: 0 });
  const server = createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ server, perMessageDeflate: false, maxPayload: MAX_FRAME_BYTES });
  wss.on('connection', (socket) => {
    socket.on('error', () => socket.terminate());
    socket.on('message', (data: Buffer) => {
      const { content } = JSON.parse(data.toString('utf8')) as { content: string };
      const streamId = randomUUID();
      void (async () => {
        const stream = await openai.chat.completions.create({
          model: MODEL,
          messages: [{ role: 'user', content }],
          stream: true,
        });
        let text = '';
        for await (const chunk of stream) {
          const piece = chunk.choices[0]?.delta.content ?? '';
          if (!piece) continue;
          text += piece;
          socket.send(JSON.stringify({ type: 'delta', stream_id: streamId, content: piece }));
        }
        const created_at = new Date().toISOString();
        socket.send(
          JSON.stringify({ type: 'message', role: 'assistant', content: text, created_at, stream_id: streamId }),
        );
      })().catch((error: unknown) =>
        socket.send(JSON.stringify({ type: 'error', detail: error instanceof Error ? error.message : String(error) })),
      );
    });
    socket.send(JSON.stringify({ type: 'ready', session_id: `embed-${randomUUID()}`, history: [] }));
  });
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  serveParent(
    () => wss.clients.size,
    async () => {
      for (const socket of wss.clients) socket.terminate();
      await new Promise<void>((resolve) => wss.close(() => server.close(() => resolve())));
    },
  );
  console.log(JSON.stringify({ port: (server.address() as AddressInfo).port, chatbotId: randomUUID() }));
}

if (process.argv[1] === import.meta.filename) {
  try {
    const openaiUrl = process.env['OPENAI_BASE_URL'] ?? '';
    if (!openaiUrl) throw new Error('the stream benchmark children need OPENAI_BASE_URL');
    if (process.env['STREAM_CHILD'] === 'relay') await startRelayChild(openaiUrl);
    else await startGatewayChild(process.env['REDIS_URL'] ?? '', openaiUrl);
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    process.exitCode = 1;
  }
}
