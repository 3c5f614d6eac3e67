import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** A request the fake received, parsed. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
  at: number;
  /** Whether the request asked for a streamed reply (in its provider's own way). */
  stream: boolean;
  /**
   * `performance.now()`, in this process, just after the first piece of a streamed reply was written
   * to the socket; absent until then.
   */
  firstPieceAt?: number;
  /** How many pieces of a streamed reply were written. */
  piecesWritten: number;
  /**
   * How a streamed reply ended: written whole (`done`), cut by `failAfterPieces` (`cut`), or stopped
   * because the client went away or the fake was stopped (`closed`). Absent while it is being written.
   */
  streamEnd?: 'done' | 'cut' | 'closed';
  /** The client went away before the whole answer was written (it aborted the call). */
  abandoned?: boolean;
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
 * A reply with text. Usage is by default one token per word of the request's texts and of the reply.
 * The other fields shape a streamed reply only; a request that does not ask for a stream gets the
 * whole text at once whatever they say.
 */
export interface FakeReply {
  text: string;
  /** Waits this long before the response headers. */
  delayMs?: number;
  usage?: FakeUsage;
  /** The pieces a stream sends, joined equal to `text`: by default `splitPieces(text)`. */
  pieces?: string[];
  /** Waits this long before each piece after the first. */
  pieceIntervalMs?: number;
  /** Destroys the connection once this many pieces are written (0: before the first). */
  failAfterPieces?: number;
  /** The final chunk's finish reason, in the provider's own spelling ('stop', 'STOP' by default). */
  finishReason?: string;
}

/** What the fake does with a request: answer with text, fail with a status, or never answer. */
export type FakeBehaviour = FakeReply | { status: number; body?: unknown; delayMs?: number } | { hang: true };

/** How one provider streams: its content type and the frames around and between the pieces. */
interface StreamFormat {
  contentType: string;
  /** The frames written before the first piece. */
  opening(request: RecordedRequest): string[];
  piece(text: string, request: RecordedRequest, usage: FakeUsage): string;
  /** The frames written after the last piece: the finish reason, the usage, the terminator. */
  closing(request: RecordedRequest, usage: FakeUsage, finishReason: string | undefined): string[];
}

/** The wire format of one provider: where it listens and how a reply is shaped. */
interface WireFormat {
  matches(method: string, path: string): boolean;
  /** The words of the request's prompt (system text and messages). */
  promptText(request: RecordedRequest): string;
  reply(text: string, request: RecordedRequest, usage: FakeUsage): unknown;
  /** Whether the request asks for a stream. */
  streams(method: string, path: string, body: any): boolean;
  stream: StreamFormat;
}

/**
 * A behaviour whose answers wait until `release()` (or `capMs`, so that a test whose awaited event never
 * comes still ends): `answered` then says whether any answer went out before something the test saw,
 * an order rather than a time.
 */
export function heldAnswers(
  answer: (request: RecordedRequest) => FakeBehaviour,
  capMs = 5000,
): { behaviour: FakeLlmServer['behaviour']; release(): void; readonly answered: boolean } {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let answered = false;
  return {
    behaviour: async (request) => {
      let cap: NodeJS.Timeout | undefined;
      await Promise.race([released, new Promise((resolve) => (cap = setTimeout(resolve, capMs)))]);
      clearTimeout(cap);
      answered = true;
      return answer(request);
    },
    release,
    get answered() {
      return answered;
    },
  };
}

/** One token per word: predictable counts for exact assertions. */
export const countWords = (text: string): number => text.split(/\s+/).filter(Boolean).length;

/** Word-ish pieces that keep their spaces, as tokenizers cut: 'Hi there.' → ['Hi', ' there.']. */
export const splitPieces = (text: string): string[] => text.match(/\s*\S+|\s+/g) ?? [];

/**
 * A loopback HTTP server that speaks one LLM provider's protocol, so the official SDKs can be driven
 * against it. It records every request and answers through a replaceable behaviour: at once, or as a
 * stream in the provider's wire format when the request asks for one.
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
  /** Aborted by stop(): ends the waits of streams in progress. */
  private stopping = new AbortController();
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
    this.stopping = new AbortController();
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    this.port = typeof address === 'object' && address ? address.port : 0;
    return this;
  }

  async stop(): Promise<void> {
    this.stopping.abort();
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
    const body = raw ? JSON.parse(raw) : undefined;
    const request: RecordedRequest = {
      method: req.method ?? '',
      path,
      headers: req.headers,
      body,
      at: Date.now(),
      stream: this.format.streams(req.method ?? '', path, body),
      piecesWritten: 0,
    };
    this.requests.push(request);
    // Listened for from the start: a client may go away while the behaviour is still deciding.
    const gone = new AbortController();
    res.on('close', () => {
      gone.abort();
      if (!res.writableFinished) request.abandoned = true;
    });
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
      if (request.stream) {
        await this.streamReply(res, request, behaviour, usage, gone.signal);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(this.format.reply(behaviour.text, request, usage)));
    } finally {
      this.inFlight -= 1;
    }
  }

  /** Writes the reply piece by piece in the provider's stream format, as `reply` paces and cuts it. */
  private async streamReply(
    res: ServerResponse,
    request: RecordedRequest,
    reply: FakeReply,
    usage: FakeUsage,
    gone: AbortSignal,
  ) {
    const pieces = reply.pieces ?? splitPieces(reply.text);
    if (pieces.join('') !== reply.text) {
      throw new Error(`pieces ${JSON.stringify(pieces)} do not join to the text ${JSON.stringify(reply.text)}`);
    }
    const format = this.format.stream;
    const ended = AbortSignal.any([gone, this.stopping.signal]);
    res.writeHead(200, { 'content-type': format.contentType, 'cache-control': 'no-cache' });
    // The client gets its response before the first piece, as from the real services.
    res.flushHeaders();
    for (const frame of format.opening(request)) res.write(frame);
    for (const [index, piece] of pieces.entries()) {
      if (index === reply.failAfterPieces) return this.cut(res, request);
      if (index > 0 && reply.pieceIntervalMs)
        await sleep(reply.pieceIntervalMs, undefined, { signal: ended }).catch(() => {});
      if (ended.aborted) {
        request.streamEnd = 'closed';
        return;
      }
      // Handed to the kernel before it counts: a cut right after it must not lose the piece. A write
      // to a client that went away may never call back.
      await new Promise<void>((resolve) => {
        res.write(format.piece(piece, request, usage), () => resolve());
        ended.addEventListener('abort', () => resolve(), { once: true });
      });
      if (ended.aborted) {
        request.streamEnd = 'closed';
        return;
      }
      request.firstPieceAt ??= performance.now();
      request.piecesWritten += 1;
    }
    if (reply.failAfterPieces !== undefined && reply.failAfterPieces >= pieces.length) return this.cut(res, request);
    for (const frame of format.closing(request, usage, reply.finishReason)) res.write(frame);
    res.end();
    request.streamEnd = 'done';
  }

  /** The connection dropped mid-stream: no terminating chunk, the socket destroyed. */
  private cut(res: ServerResponse, request: RecordedRequest): void {
    request.streamEnd = 'cut';
    res.destroy();
  }
}

const texts = (messages: Array<{ content: string }>) => messages.map((message) => message.content).join('\n');

/** OpenAI's usage object (completion tokens include reasoning). */
const openAiUsage = (usage: FakeUsage) => ({
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
});

/**
 * One `chat.completion.chunk`. With `stream_options.include_usage`, every chunk but the last carries
 * `usage: null`; content chunks carry `obfuscation` padding unless `include_obfuscation` is false.
 */
function openAiChunk(request: RecordedRequest, choices: unknown[], extra: Record<string, unknown> = {}) {
  return {
    id: `chatcmpl-${request.at}`,
    object: 'chat.completion.chunk',
    created: Math.floor(request.at / 1000),
    model: request.body.model,
    service_tier: 'default',
    system_fingerprint: 'fp_fake',
    choices,
    ...(request.body.stream_options?.include_usage ? { usage: null } : {}),
    ...extra,
  };
}

const openAiEvent = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`;

/**
 * OpenAI: POST /v1/chat/completions; `usage` as the API reports it. With `stream: true`, server-sent
 * events: a chunk with the role, one per piece, one with `finish_reason`, the usage chunk (empty
 * `choices`) when `stream_options.include_usage`, then `data: [DONE]`.
 */
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
      usage: openAiUsage(usage),
    }),
    streams: (_method, _path, body) => body?.stream === true,
    stream: {
      contentType: 'text/event-stream; charset=utf-8',
      opening: (request) => [
        openAiEvent(
          openAiChunk(request, [
            { index: 0, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null },
          ]),
        ),
      ],
      piece: (text, request) =>
        openAiEvent(
          openAiChunk(
            request,
            [{ index: 0, delta: { content: text }, logprobs: null, finish_reason: null }],
            request.body.stream_options?.include_obfuscation === false
              ? {}
              : { obfuscation: 'x'.repeat(text.length % 7) },
          ),
        ),
      closing: (request, usage, finishReason) => [
        openAiEvent(
          openAiChunk(request, [{ index: 0, delta: {}, logprobs: null, finish_reason: finishReason ?? 'stop' }]),
        ),
        ...(request.body.stream_options?.include_usage
          ? [openAiEvent(openAiChunk(request, [], { usage: openAiUsage(usage) }))]
          : []),
        'data: [DONE]\n\n',
      ],
    },
  });
}

/** Gemini's usageMetadata for the whole reply (a thinking model's thoughts counted apart). */
const geminiUsage = (usage: FakeUsage) => ({
  promptTokenCount: usage.input,
  candidatesTokenCount: usage.output - (usage.reasoning ?? 0),
  totalTokenCount: usage.input + usage.output,
  promptTokensDetails: [{ modality: 'TEXT', tokenCount: usage.input }],
  ...(usage.reasoning ? { thoughtsTokenCount: usage.reasoning } : {}),
});

const geminiModel = (request: RecordedRequest) => request.path.split('/')[3]!.split(':')[0];

/** Google's server-sent events end each event with CRLF CRLF. */
const geminiEvent = (request: RecordedRequest, candidate: unknown, usageMetadata: unknown) =>
  `data: ${JSON.stringify({
    candidates: [candidate],
    usageMetadata,
    modelVersion: geminiModel(request),
    responseId: `fake-${request.at}`,
  })}\r\n\r\n`;

/**
 * Gemini: POST /v1/models/{model}:generateContent; `usageMetadata` as the API reports it (a thinking
 * model's thoughts counted apart from the candidates). `:streamGenerateContent?alt=sse` answers
 * server-sent events of GenerateContentResponse objects: one per piece, whose usageMetadata counts
 * the prompt (and thoughts) only, then a last one with an empty text part, `finishReason` and the
 * whole usage.
 */
export function fakeGemini(): FakeLlmServer {
  return new FakeLlmServer({
    matches: (method, path) =>
      method === 'POST' && /^\/v1\/models\/[^/:]+:(generateContent|streamGenerateContent\?alt=sse)$/.test(path),
    promptText: (request) =>
      [request.body.systemInstruction, ...request.body.contents]
        .flatMap((content: { parts: Array<{ text: string }> } | undefined) => content?.parts ?? [])
        .map((part) => part.text)
        .join('\n'),
    reply: (text, request, usage) => ({
      candidates: [{ content: { role: 'model', parts: [{ text }] }, finishReason: 'STOP', index: 0 }],
      usageMetadata: geminiUsage(usage),
      modelVersion: geminiModel(request),
    }),
    streams: (_method, path) => path.includes(':streamGenerateContent'),
    stream: {
      contentType: 'text/event-stream',
      opening: () => [],
      piece: (text, request, usage) =>
        geminiEvent(
          request,
          { content: { role: 'model', parts: [{ text }] }, index: 0 },
          {
            promptTokenCount: usage.input,
            totalTokenCount: usage.input + (usage.reasoning ?? 0),
            promptTokensDetails: [{ modality: 'TEXT', tokenCount: usage.input }],
            ...(usage.reasoning ? { thoughtsTokenCount: usage.reasoning } : {}),
          },
        ),
      closing: (request, usage, finishReason) => [
        geminiEvent(
          request,
          { content: { role: 'model', parts: [{ text: '' }] }, finishReason: finishReason ?? 'STOP', index: 0 },
          geminiUsage(usage),
        ),
      ],
    },
  });
}

/** Ollama's closing counts and durations (ns). */
const ollamaCounts = (usage: FakeUsage) => ({
  total_duration: 5_000_000,
  load_duration: 1_000_000,
  prompt_eval_count: usage.input,
  prompt_eval_duration: 2_000_000,
  eval_count: usage.output,
  eval_duration: 2_000_000,
});

/**
 * Ollama: POST /api/chat, with the counts and durations (ns) the API reports. The API streams unless
 * the request says `stream: false`: NDJSON, one `done: false` message per piece, then a `done: true`
 * one with an empty message, the counts and the durations.
 */
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
      ...ollamaCounts(usage),
    }),
    streams: (_method, _path, body) => body?.stream !== false,
    stream: {
      contentType: 'application/x-ndjson',
      opening: () => [],
      piece: (text, request) =>
        `${JSON.stringify({
          model: request.body.model,
          created_at: new Date().toISOString(),
          message: { role: 'assistant', content: text },
          done: false,
        })}\n`,
      closing: (request, usage, finishReason) => [
        `${JSON.stringify({
          model: request.body.model,
          created_at: new Date().toISOString(),
          message: { role: 'assistant', content: '' },
          done: true,
          done_reason: finishReason ?? 'stop',
          ...ollamaCounts(usage),
        })}\n`,
      ],
    },
  });
}

/**
 * The three providers' fakes, started together, with the gateway settings that point a gateway's
 * chatbots at them (any provider a test's chatbot names), and one stop for all three.
 */
export async function startFakeProviders() {
  const [openai, gemini, ollama] = await Promise.all([
    fakeOpenAi().start(),
    fakeGemini().start(),
    fakeOllama().start(),
  ]);
  return {
    openai,
    gemini,
    ollama,
    env: {
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: `${openai.url}/v1`,
      GEMINI_API_KEY: 'gemini-test',
      GEMINI_BASE_URL: gemini.url,
      OLLAMA_HOST: ollama.url,
    },
    stop: async () => void (await Promise.all([openai.stop(), gemini.stop(), ollama.stop()])),
  };
}
