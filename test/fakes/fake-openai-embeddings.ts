// OpenAI's embeddings endpoint on loopback, for the openai SDK (`EMBEDDINGS=openai:<model>`).
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { LocalEmbedder } from '../../src/rag/local-embedder.ts';

/**
 * `POST /v1/embeddings` as OpenAI documents it: `{model, input: string | string[], encoding_format}`
 * answered `{object: "list", data: [{object: "embedding", index, embedding}], model, usage}`, the
 * vectors as float arrays or, as the SDK asks by default, base64 of little-endian float32. The
 * vectors are the local embedder's (so retrieval means something), cut or padded to `dimensions`.
 * Every text embedded is recorded in `inputs`.
 */
export class FakeOpenAiEmbeddings {
  readonly inputs: string[] = [];
  /** The vector length answered (the local embedder's 384 unless changed). */
  dimensions = 384;
  /** Whether a request is refused with OpenAI's 400 `invalid_request_error` (none unless replaced). */
  refuses: (model: string, texts: string[]) => boolean = () => false;
  /** The vector length answered for a request (`dimensions` unless replaced). */
  sizeOf: (model: string, texts: string[]) => number = () => this.dimensions;
  /** Holds each answer until it resolves (tests slow a migration down with it). */
  gate: () => Promise<void> = async () => {};
  private readonly local = new LocalEmbedder();
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor() {
    this.server = createServer((req, res) => {
      let raw = '';
      req.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
      req.on('end', () => {
        void this.answer(req.method ?? '', req.url ?? '', raw).then(({ status, body }) => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify(body));
        });
      });
    });
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/v1`;
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async answer(method: string, path: string, raw: string): Promise<{ status: number; body: unknown }> {
    if (method !== 'POST' || path !== '/v1/embeddings')
      return { status: 404, body: { error: { message: 'not found' } } };
    const request = JSON.parse(raw) as { model: string; input: string | string[]; encoding_format?: string };
    const texts = Array.isArray(request.input) ? request.input : [request.input];
    await this.gate();
    if (this.refuses(request.model, texts)) {
      return {
        status: 400,
        body: { error: { message: 'Invalid input.', type: 'invalid_request_error', param: 'input', code: null } },
      };
    }
    this.inputs.push(...texts);
    const vectors = await this.local.embed(texts);
    const size = this.sizeOf(request.model, texts);
    const data = vectors.map((vector, index) => {
      const sized = new Float32Array(size);
      sized.set(vector.subarray(0, size));
      const embedding =
        request.encoding_format === 'base64' ? Buffer.from(sized.buffer).toString('base64') : [...sized];
      return { object: 'embedding', index, embedding };
    });
    const tokens = texts.reduce((sum, text) => sum + text.split(/\s+/).length, 0);
    return {
      status: 200,
      body: { object: 'list', data, model: request.model, usage: { prompt_tokens: tokens, total_tokens: tokens } },
    };
  }
}
