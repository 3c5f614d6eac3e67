import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** A request the fake received, parsed. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
  at: number;
}

/**
 * The tokens a reply reports, as each provider's API does: `output` is every billed output token,
 * `reasoning` the part of it a thinking model spent thinking.
 */
export interface FakeUsage {
  input: number;
  output: number;
  reasoning?: number;
}

/**
 * What the fake does with a request: answer with text (and usage: by default one token per word of
 * the request's texts and of the reply), fail with a status, or never answer.
 */
export type FakeBehaviour =
  | { text: string; delayMs?: number; usage?: FakeUsage }
  | { status: number; body?: unknown; delayMs?: number }
  | { hang: true };

/** The wire format of one provider: where it listens and how a reply is shaped. */
interface WireFormat {
  matches(method: string, path: string): boolean;
  /** The words of the request's prompt (system text and messages). */
  promptText(request: RecordedRequest): string;
  reply(text: string, request: RecordedRequest, usage: FakeUsage): unknown;
}

/** One token per word: predictable counts for exact assertions. */
export const countWords = (text: string): number => text.split(/\s+/).filter(Boolean).length;

/**
 * A loopback HTTP server that speaks one LLM provider's protocol, so the official SDKs can be driven
 * against it. It records every request and answers through a replaceable behaviour.
 */
export class FakeLlmServer {
  readonly requests: RecordedRequest[] = [];
  /** Requests being answered right now, and the most at once. */
  inFlight = 0;
  maxInFlight = 0;
  behaviour: (request: RecordedRequest) => FakeBehaviour | Promise<FakeBehaviour> = () => ({ text: 'ok' });
  private readonly server: Server;
  private readonly format: WireFormat;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(format: WireFormat) {
    this.format = format;
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    this.port = typeof address === 'object' && address ? address.port : 0;
    return this;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const path = req.url ?? '';
    if (!this.format.matches(req.method ?? '', path)) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
      return;
    }
    const request: RecordedRequest = {
      method: req.method ?? '',
      path,
      headers: req.headers,
      body: raw ? JSON.parse(raw) : undefined,
      at: Date.now(),
    };
    this.requests.push(request);
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      const behaviour = await this.behaviour(request);
      if ('hang' in behaviour) return;
      if (behaviour.delayMs) await new Promise((resolve) => setTimeout(resolve, behaviour.delayMs));
      if ('status' in behaviour) {
        res.writeHead(behaviour.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(behaviour.body ?? { error: { message: 'fake failure' } }));
        return;
      }
      const usage = behaviour.usage ?? {
        input: countWords(this.format.promptText(request)),
        output: countWords(behaviour.text),
      };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(this.format.reply(behaviour.text, request, usage)));
    } finally {
      this.inFlight -= 1;
    }
  }
}

const texts = (messages: Array<{ content: string }>) => messages.map((message) => message.content).join('\n');

/** OpenAI: POST /v1/chat/completions; `usage` as the API reports it (completion tokens include reasoning). */
export function fakeOpenAi(): FakeLlmServer {
  return new FakeLlmServer({
    matches: (method, path) => method === 'POST' && path === '/v1/chat/completions',
    promptText: (request) => texts(request.body.messages),
    reply: (text, request, usage) => ({
      id: `chatcmpl-${request.at}`,
      object: 'chat.completion',
      created: Math.floor(request.at / 1000),
      model: request.body.model,
      choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
      usage: {
        prompt_tokens: usage.input,
        completion_tokens: usage.output,
        total_tokens: usage.input + usage.output,
        prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
        completion_tokens_details: {
          reasoning_tokens: usage.reasoning ?? 0,
          audio_tokens: 0,
          accepted_prediction_tokens: 0,
          rejected_prediction_tokens: 0,
        },
      },
    }),
  });
}

/**
 * Gemini: POST /v1/models/{model}:generateContent; `usageMetadata` as the API reports it (a thinking
 * model's thoughts counted apart from the candidates).
 */
export function fakeGemini(): FakeLlmServer {
  return new FakeLlmServer({
    matches: (method, path) => method === 'POST' && /^\/v1\/models\/[^/:]+:generateContent$/.test(path),
    promptText: (request) =>
      [request.body.systemInstruction, ...request.body.contents]
        .flatMap((content: { parts: Array<{ text: string }> } | undefined) => content?.parts ?? [])
        .map((part) => part.text)
        .join('\n'),
    reply: (text, request, usage) => ({
      candidates: [{ content: { role: 'model', parts: [{ text }] }, finishReason: 'STOP', index: 0 }],
      usageMetadata: {
        promptTokenCount: usage.input,
        candidatesTokenCount: usage.output - (usage.reasoning ?? 0),
        totalTokenCount: usage.input + usage.output,
        promptTokensDetails: [{ modality: 'TEXT', tokenCount: usage.input }],
        ...(usage.reasoning ? { thoughtsTokenCount: usage.reasoning } : {}),
      },
      modelVersion: request.path.split('/')[3]!.split(':')[0],
    }),
  });
}

/** Ollama: POST /api/chat (non-streaming), with the counts and durations (ns) the API reports. */
export function fakeOllama(): FakeLlmServer {
  return new FakeLlmServer({
    matches: (method, path) => method === 'POST' && path === '/api/chat',
    promptText: (request) => texts(request.body.messages),
    reply: (text, request, usage) => ({
      model: request.body.model,
      created_at: new Date(request.at).toISOString(),
      message: { role: 'assistant', content: text },
      done: true,
      done_reason: 'stop',
      total_duration: 5_000_000,
      load_duration: 1_000_000,
      prompt_eval_count: usage.input,
      prompt_eval_duration: 2_000_000,
      eval_count: usage.output,
      eval_duration: 2_000_000,
    }),
  });
}
