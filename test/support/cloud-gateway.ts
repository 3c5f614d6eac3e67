import { fixedTimeClock } from '../../src/clock.ts';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { FakeGraphWhatsApp, postWebhook, textWebhook, type FakeNumber } from '../fakes/fake-graph-whatsapp.ts';
import { FakeWhatsApp } from '../fakes/fake-whatsapp.ts';
import { scaleAccount, startGateway } from './gateway.ts';
import { LogCapture } from './log-capture.ts';
import { RecordingSink } from './recording-sink.ts';

/** The app secret every test chatbot's Meta app has (webhooks are signed with it). */
export const APP_SECRET = 'c0ffee00'.repeat(4);

/** The fake OpenAI's default: echo the visitor's message. */
export const echo = (req: any) => ({ text: `AI: ${req.body.messages.at(-1).content}` });

/**
 * A gateway (logging at debug level into `logs`) whose WhatsApp Cloud API calls reach a loopback
 * Graph API, with a fake OpenAI, a fake linked-device socket factory and a clock a test may move ahead
 * of the wall clock; and the helpers a Cloud API test works with. Issue 23's tests share it.
 */
export async function startCloudGateway() {
  const graph = await new FakeGraphWhatsApp().start();
  const openai = await fakeOpenAi().start();
  openai.behaviour = echo;
  const sink = new RecordingSink();
  const linkedDevices = new FakeWhatsApp();
  const clock = { aheadMs: 0 };
  const env = {
    OPENAI_API_KEY: 'sk-test',
    OPENAI_BASE_URL: `${openai.url}/v1`,
    LLM_MAX_RETRIES: '0',
    GRAPH_API_BASE_URL: graph.url,
    GRAPH_API_RETRY_MS: '25',
    CRAWL_ALLOW_PRIVATE: '1',
    SECRET_KEY: '5a'.repeat(32),
    PUBLIC_URL: 'https://bots.example.com',
  };
  const logs = new LogCapture();
  const gw = await startGateway(
    { ...env, LOG_LEVEL: 'debug' },
    {
      events: sink,
      whatsappSockets: linkedDevices.factory,
      clock: fixedTimeClock(() => (Date.now() + clock.aheadMs) * 1000),
    },
    logs,
  );
  const { services } = gw.app;
  const owner = await scaleAccount(gw.app);
  let nextVisitor = 4915100000100;
  let nextMessage = 1;
  const post = (botId: string, payload: unknown) => postWebhook(gw.baseUrl, botId, payload, APP_SECRET);
  const messageId = () => `wamid.IN${String((nextMessage += 1)).padStart(8, '0')}`;
  return {
    gw,
    graph,
    openai,
    sink,
    linkedDevices,
    logs,
    services,
    owner,
    /** How far the gateway's clock is ahead of the wall clock (the window rule moves it). */
    clock,
    /** The CLI's environment: the gateway's Redis and settings. */
    cliEnv: { REDIS_URL: gw.redis.url, PATH: process.env.PATH ?? '', ...env },
    /** A chatbot on the Cloud API with a number of its own (connected the way the CLI and dashboard do). */
    connected: async (name: string, notice?: string) => {
      const bot = await services.chatbots.create(owner.user.id, { name });
      const number = graph.addNumber();
      const status = await services.whatsappCloudConnector.connect(bot.id, {
        phone_number_id: number.id,
        token: number.token,
        app_secret: APP_SECRET,
        ...(notice === undefined ? {} : { text_only_notice: notice }),
      });
      return { bot, number, status };
    },
    /** A new visitor's WhatsApp id. */
    visitor: () => String((nextVisitor += 1)),
    messageId,
    sessionOf: (waId: string) => `wa_${waId}@s.whatsapp.net`,
    /** Posts a webhook signed with the app secret. */
    post,
    /** A visitor's text message, posted as Meta does. */
    say: (botId: string, number: FakeNumber, from: string, text: string, id = messageId()) =>
      post(botId, textWebhook(number, from, id, text)),
    transcript: (botId: string, session: string) => services.conversations.transcript(botId, session),
    /** The conversation's messages; none while it does not exist yet. */
    messages: async (botId: string, session: string) =>
      (await services.conversations.exists(botId, session))
        ? (await services.conversations.transcript(botId, session)).messages
        : [],
    stop: async () => {
      await gw.stop();
      await graph.stop();
      await openai.stop();
    },
  };
}
