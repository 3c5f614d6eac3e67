import fc from 'fast-check';
import t from 'tap';
import type { LlmProviders } from '../../src/llm/llm-providers.ts';
import { scaleAccount, startGateway } from '../support/gateway.ts';
import { LogCapture } from '../support/log-capture.ts';
import { WidgetClient, type Frame } from '../support/widget-client.ts';
import { apiFetch } from '../support/openapi-contract.ts';

// Issue 18, item 6: a property-based fuzz of both sockets (DESIGN.md's protocols): the widget socket's
// upgrade parameters and its visitor frames (message, escalate, cta, lead, and everything else), the
// agent socket's first frame and, once authenticated, its frames (auth, takeover, release, reply,
// suggest, and everything else). No frame may reach the internal-error path, no socket may be dropped for
// one, and the gateway keeps answering /healthz. FUZZ_SEED=<n> replays a run.
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
const RUNS = Number(process.env.FUZZ_RUNS ?? 50);
const INTERNAL = 'Internal server error.';

const reply = { text: 'fuzzed answer' };
const providers: LlmProviders = {
  chatgpt: { generate: async () => reply },
  gemini: { generate: async () => reply },
  ollama: { generate: async () => reply },
};
const logs = new LogCapture();
const gw = await startGateway(
  {
    RATE_LIMIT_PER_MINUTE: '1000000',
    CONVERSATION_RATE_LIMIT: '1000000',
    // The fuzz sends frames and opens sockets far faster than the per-socket and per-address limits allow.
    SOCKET_FRAME_RATE: '1000000',
    SOCKET_FRAME_BURST: '1000000',
    SOCKET_OPENS_PER_ADDRESS: '1000000',
    WIDGET_NEW_SESSIONS_PER_ADDRESS: '1000000',
    LOG_LEVEL: 'error',
  },
  { providers },
  logs,
);
t.teardown(() => gw.stop());
const { services } = gw.app;
const owner = await scaleAccount(gw.app);
const bot = await services.chatbots.create(owner.user.id, { name: 'Fuzz' });
await services.chatbots.configure(bot.id, {
  lead_fields: [{ name: 'company', label: 'Company' }],
  ctas: [
    { id: 'human', label: 'Talk to a human', action: 'escalate' },
    { id: 'ask', label: 'Prices', action: 'message', message: 'What are your prices?' },
    { id: 'docs', label: 'Docs', action: 'link', url: 'https://example.com/docs' },
  ],
});
const agentUser = await services.agents.create(owner.user.id, 'Fuzz Agent');
// A conversation the agent's takeover, release and reply frames can act on.
const started = await apiFetch(`${gw.baseUrl}/api/v1/chatbots/${bot.id}/chat`, {
  method: 'POST',
  headers: { authorization: `Bearer ${owner.key}`, 'content-type': 'application/json' },
  body: JSON.stringify({ message: 'hello', session_id: 'api-fuzz' }),
});
if (started.status !== 200) throw new Error(`the conversation did not start: ${started.status}`);
const wsBase = gw.baseUrl.replace(/^http/, 'ws');

let frames = 0;
let connections = 0;
const fuzzStarted = Date.now();
t.comment(`fuzz seed ${SEED}, ${RUNS} runs per property`);

// ---- generators ----

const NASTY = ['', ' ', '0', '-1', '1.5', 'null', '__proto__', 'x'.repeat(5000), '💥', '\u0000', '<script>', '../x'];
const text = fc.oneof(fc.constantFrom(...NASTY), fc.string({ maxLength: 40 }), fc.string({ maxLength: 4100 }));
const anything = fc.oneof(text, fc.jsonValue({ maxDepth: 2 }), fc.integer(), fc.double(), fc.constant(undefined));
const ref = fc.oneof(fc.string({ maxLength: 10 }), fc.integer(), fc.jsonValue({ maxDepth: 1 }), fc.constant(undefined));
/** Extra fields a frame may carry besides its own. */
const extra = fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 });

/** What is sent: a JSON text frame, a raw text frame or a binary frame. */
type Sent = { json: unknown } | { raw: string } | { binary: Uint8Array };
const asJson = (frame: fc.Arbitrary<unknown>) => frame.map((json): Sent => ({ json }));
const malformed: fc.Arbitrary<Sent> = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }).map((json): Sent => ({ json })),
  fc.constantFrom('{', 'not json', '[]', '"x"', '{"type":', '').map((raw): Sent => ({ raw })),
  fc.uint8Array({ maxLength: 64 }).map((binary): Sent => ({ binary })),
);

const withExtra = (frame: fc.Arbitrary<Record<string, unknown>>) =>
  fc.tuple(frame, extra).map(([own, more]) => ({ ...more, ...own }));

const widgetFrame: fc.Arbitrary<Sent> = fc.oneof(
  { weight: 3, arbitrary: asJson(withExtra(fc.record({ type: fc.constant('message'), content: anything }))) },
  { weight: 1, arbitrary: asJson(withExtra(fc.record({ type: fc.constant('escalate') }))) },
  {
    weight: 2,
    arbitrary: asJson(
      withExtra(
        fc.record({ type: fc.constant('cta'), id: fc.oneof(fc.constantFrom('human', 'ask', 'docs'), anything) }),
      ),
    ),
  },
  {
    weight: 3,
    arbitrary: asJson(
      withExtra(
        fc.record(
          {
            type: fc.constant('lead'),
            name: fc.oneof(fc.string({ maxLength: 50 }), anything),
            email: fc.oneof(fc.emailAddress(), anything),
            phone: fc.oneof(fc.constantFrom('+1 555 0100', '0044 20 7946 0958'), anything),
            custom_data: fc.oneof(fc.dictionary(fc.constantFrom('company', 'other', '__proto__'), anything), anything),
          },
          { requiredKeys: ['type'] },
        ),
      ),
    ),
  },
  { weight: 1, arbitrary: asJson(withExtra(fc.record({ type: anything }))) },
  { weight: 1, arbitrary: malformed },
);

const chatbotId = fc.oneof(fc.constant(bot.id), fc.constant(bot.id.toUpperCase()), fc.uuid(), anything);
const sessionId = fc.oneof(fc.constantFrom('embed-fuzz', 'api-fuzz', 'wa_1'), anything);
const agentFrame: fc.Arbitrary<Sent> = fc.oneof(
  {
    weight: 3,
    arbitrary: asJson(
      withExtra(
        fc.record({
          type: fc.constantFrom('takeover', 'release', 'suggest'),
          chatbot_id: chatbotId,
          session_id: sessionId,
          ref,
        }),
      ),
    ),
  },
  {
    weight: 3,
    arbitrary: asJson(
      withExtra(
        fc.record({ type: fc.constant('reply'), chatbot_id: chatbotId, session_id: sessionId, content: anything, ref }),
      ),
    ),
  },
  {
    weight: 1,
    arbitrary: asJson(
      withExtra(fc.record({ type: fc.constant('auth'), token: fc.oneof(fc.constant(agentUser.token), anything) })),
    ),
  },
  { weight: 1, arbitrary: asJson(withExtra(fc.record({ type: anything, ref }))) },
  { weight: 1, arbitrary: malformed },
);

function send(client: WidgetClient, sent: Sent): void {
  frames += 1;
  if ('json' in sent) client.socket.send(JSON.stringify(sent.json) ?? 'undefined');
  else if ('raw' in sent) client.socket.send(sent.raw);
  else client.socket.send(sent.binary, { binary: true });
}

/** Frames the gateway sent, by type (errors by detail), for the closing comment. */
const answerKinds = new Map<string, number>();
function tally(received: Frame[]): void {
  for (const frame of received) {
    const kind = frame.type === 'error' ? `error "${frame.detail}"` : frame.type;
    answerKinds.set(kind, (answerKinds.get(kind) ?? 0) + 1);
  }
}

const internalErrors = (received: Frame[]) => received.filter((frame) => frame.detail === INTERNAL);

// ---- properties ----

// Short enough that the upgrade request stays under Node's header size limit.
const shortText = fc.oneof(fc.constantFrom(...NASTY.filter((v) => v.length < 100)), fc.string({ maxLength: 100 }));

t.test('widget upgrades: any chatbot_id, session_id and origin is refused (< 500) or opened', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.oneof(fc.constant(bot.id), fc.uuid(), shortText),
      fc.option(fc.oneof(fc.constant('embed-00000000-0000-4000-8000-000000000000'), shortText)),
      fc.option(fc.constantFrom('https://example.com', 'null', 'http://evil.example')),
      async (chatbot, session, origin) => {
        connections += 1;
        const query: Record<string, string> = { chatbot_id: chatbot };
        if (session !== null) query.session_id = session;
        try {
          const client = await WidgetClient.connect(gw.baseUrl, query, origin ? { origin } : {});
          await client.next('ready');
          await client.close();
          return true;
        } catch (error) {
          const status = (error as { status?: number }).status;
          return typeof status === 'number' && status < 500;
        }
      },
    ),
    { seed: SEED, numRuns: RUNS * 2 },
  );
});

t.test('widget frames: every frame type with random fields; never an internal error', async () => {
  let sentinel = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(widgetFrame, { minLength: 1, maxLength: 8 }), async (batch) => {
      connections += 1;
      const { client } = await WidgetClient.ready(gw.baseUrl, { chatbot_id: bot.id });
      for (const sent of batch) send(client, sent);
      // Frames are taken in order: the answer to this one means every frame before it was handled.
      sentinel += 1;
      send(client, { json: { type: 'cta', id: `sentinel-${sentinel}` } });
      const unknown = () => client.frames.filter((f) => f.detail === 'Unknown call-to-action.').length;
      for (let i = 0; i < 500 && unknown() === 0 && client.closeCode === undefined; i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const handled = unknown() > 0 && client.closeCode === undefined;
      await client.close();
      tally(client.frames);
      return handled && internalErrors(client.frames).length === 0;
    }),
    { seed: SEED, numRuns: RUNS * 4 },
  );
});

t.test('agent socket, first frame: authenticated, or an error frame and close 4401', async () => {
  await fc.assert(
    fc.asyncProperty(agentFrame, async (first) => {
      connections += 1;
      const client = await WidgetClient.at(`${wsBase}/agents/v1/socket`);
      send(client, first);
      const outcome = await Promise.race([
        client.next('authenticated').then(() => 'authenticated'),
        client.whenClosed().then((code) => `closed ${code}`),
      ]);
      if (outcome === 'authenticated') await client.close();
      tally(client.frames);
      return (outcome === 'authenticated' || outcome === 'closed 4401') && internalErrors(client.frames).length === 0;
    }),
    { seed: SEED, numRuns: RUNS * 2 },
  );
});

t.test('agent socket, authenticated: every frame type with random fields; never an internal error', async (t) => {
  const client = await WidgetClient.at(`${wsBase}/agents/v1/socket`);
  connections += 1;
  client.send({ type: 'auth', token: agentUser.token });
  await client.next('authenticated');
  let sentinel = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(agentFrame, { minLength: 1, maxLength: 8 }), async (batch) => {
      for (const sent of batch) send(client, sent);
      sentinel += 1;
      const mark = `sentinel-${sentinel}`;
      send(client, { json: { type: 'takeover', chatbot_id: '', session_id: 'x', ref: mark } });
      for (let i = 0; i < 500 && !client.frames.some((f) => f.ref === mark) && client.closeCode === undefined; i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      return client.frames.some((f) => f.ref === mark) && internalErrors(client.frames).length === 0;
    }),
    { seed: SEED, numRuns: RUNS * 4 },
  );
  t.equal(client.closeCode, undefined, 'the socket is still open');
  await client.close();
  tally(client.frames);
});

t.test('after the fuzz: the gateway answers and logged no internal failure', async (t) => {
  const health = await fetch(`${gw.baseUrl}/healthz`);
  t.same([health.status, await health.json()], [200, { status: 'ok' }]);
  const failed = logs.lines.filter((line) => /failed|error/.test(String(line.msg)) && Number(line.level) >= 50);
  t.same(failed, []);
  t.comment(
    `socket fuzz: ${frames} frames over ${connections} sockets in ${((Date.now() - fuzzStarted) / 1000).toFixed(1)} s`,
  );
  t.comment(`answers: ${[...answerKinds].map(([kind, n]) => `${n} ${kind}`).join(', ')}`);
});
