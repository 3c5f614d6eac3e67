// A process that takes a conversation over or releases it through ConversationControl, as the CLI
// does, but whose webhook deliveries are never written: when it gets there it says so on stdout and
// waits, for the test to SIGKILL it between the change and the deliveries.
//   node test/support/stalled-hold-change.ts takeover|release <chatbot id> <session id> [agent]
// The environment is the gateway's (REDIS_URL, PENDING_EVENT_GRACE_MS, …).
import { systemClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { connectRedis } from '../../src/redis/redis-client.ts';
import { createServices } from '../../src/services.ts';
import type { EventSink } from '../../src/webhooks/webhook-event.ts';

const [change, chatbotId, sessionId, agent = ''] = process.argv.slice(2) as [string, string, string, string?];
const config = loadConfig(process.env);
const redis = await connectRedis({ url: config.REDIS_URL![0]! }, createLogger('silent'));
const stalled: EventSink = {
  emit: (event) => {
    process.stdout.write(`writing ${event.event}\n`);
    return new Promise<void>(() => {});
  },
};
const services = createServices(redis, config, systemClock, createLogger('silent'), stalled);
if (change === 'takeover') await services.control.takeOver(chatbotId, sessionId, agent);
else await services.control.release(chatbotId, sessionId, agent);
