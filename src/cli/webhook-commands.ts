import type { Command } from 'commander';
import { LIFECYCLE_EVENT_NAMES, SPEC_EVENT_NAMES } from '../contract/webhook.ts';
import { webhookView, withSecret } from '../webhooks/webhook.ts';
import { onOff, runCommand } from './cli-runtime.ts';

/** `webhook create|configure|list|delete|rotate-secret|deliveries|redeliver`. */
export function registerWebhookCommands(program: Command): void {
  const webhook = program.command('webhook').description('signed webhooks and their delivery log');
  webhook
    .command('create')
    .requiredOption('--bot <id>', 'chatbot id')
    .requiredOption('--url <url>', 'destination (http or https, public address)')
    .requiredOption(
      '--events <list>',
      `comma-separated event names: ${SPEC_EVENT_NAMES.join(', ')}; beyond the API spec, only when named: ${LIFECYCLE_EVENT_NAMES.join(', ')}`,
    )
    .option(
      '--standard-webhooks',
      'also send the Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature)',
    )
    .action((opts: { bot: string; url: string; events: string; standardWebhooks?: true }) =>
      runCommand(async (s) => {
        await s.chatbots.get(opts.bot);
        const standardWebhooks = opts.standardWebhooks === true;
        return s.webhooks.create(opts.bot, opts.url, opts.events.split(','), { standardWebhooks });
      }),
    );
  webhook
    .command('configure')
    .requiredOption('--webhook <id>', 'webhook id')
    .requiredOption(
      '--standard-webhooks <on|off>',
      'send the Standard Webhooks headers besides X-Switchboard-Signature, or stop',
    )
    .action((opts: { webhook: string; standardWebhooks: string }) =>
      runCommand(async (s) => {
        const on = onOff('--standard-webhooks', opts.standardWebhooks);
        return withSecret(await s.webhooks.setStandardWebhooks(opts.webhook, on));
      }),
    );
  webhook
    .command('list')
    .requiredOption('--bot <id>', 'chatbot id')
    .action((opts: { bot: string }) =>
      runCommand(async (s) => {
        await s.chatbots.get(opts.bot);
        return (await s.webhooks.listForChatbot(opts.bot)).map(webhookView);
      }),
    );
  webhook
    .command('delete')
    .requiredOption('--webhook <id>', 'webhook id')
    .action((opts: { webhook: string }) =>
      runCommand(async (s) => {
        await s.webhooks.delete(opts.webhook);
        return { id: opts.webhook, deleted: true };
      }),
    );
  webhook
    .command('rotate-secret')
    .requiredOption('--webhook <id>', 'webhook id')
    .action((opts: { webhook: string }) => runCommand((s) => s.webhooks.rotateSecret(opts.webhook)));
  webhook
    .command('deliveries')
    .requiredOption('--webhook <id>', 'webhook id')
    .option('--limit <n>', 'deliveries per page (at most 1000)', '100')
    .option('--offset <n>', 'deliveries to skip, newest first', '0')
    .action((opts: { webhook: string; limit: string; offset: string }) =>
      runCommand(async (s) => {
        await s.webhooks.get(opts.webhook);
        return s.deliveries.log(opts.webhook, { limit: Number(opts.limit) || 100, offset: Number(opts.offset) || 0 });
      }),
    );
  webhook
    .command('redeliver')
    .requiredOption('--delivery <id>', 'delivery id')
    .action((opts: { delivery: string }) => runCommand((s) => s.deliveries.redeliver(opts.delivery)));
}
