import type { Command } from 'commander';
import { CliError, runCommand } from './cli-runtime.ts';
import { linkWhatsApp } from './whatsapp-linking.ts';

interface TelegramOptions {
  bot: string;
  token?: string;
  mode: string;
  disconnect?: boolean;
}

interface WhatsAppOptions {
  bot: string;
  phone?: string;
  status?: boolean;
  disconnect?: boolean;
  cloud?: boolean;
  phoneNumberId?: string;
  token?: string;
  appSecret?: string;
  businessAccountId?: string;
  textOnlyNotice?: string;
}

/** `channel telegram` and `channel whatsapp`: connect a chatbot to a messaging account (or disconnect it). */
export function registerChannelCommands(program: Command): void {
  const channel = program.command('channel').description('messaging channels');
  registerWhatsApp(channel);
  channel
    .command('telegram')
    .description('connect a chatbot to a Telegram bot made with @BotFather')
    .requiredOption('--bot <id>', 'chatbot id')
    .option('--token <token>', "the bot's token from @BotFather")
    .option('--mode <mode>', 'webhook (needs PUBLIC_URL or a manual setWebhook) or polling', 'webhook')
    .option('--disconnect', 'stop answering on Telegram and forget the token')
    .action((opts: TelegramOptions) =>
      runCommand(async (s) => {
        const chatbot = await s.chatbots.get(opts.bot.toLowerCase());
        if (opts.disconnect) {
          if (!(await s.telegramConnector.disconnect(chatbot.id)))
            throw new CliError('Telegram is not connected for this chatbot.');
          return { chatbot_id: chatbot.id, disconnected: true };
        }
        if (opts.mode !== 'webhook' && opts.mode !== 'polling') {
          throw new CliError('channel telegram: --mode must be webhook or polling');
        }
        if (!opts.token) throw new CliError('channel telegram: --token is required');
        return s.telegramConnector.connect(chatbot.id, opts.token, opts.mode);
      }),
    );
}

/**
 * `channel whatsapp`: the chatbot's WhatsApp, by one of two transports. With `--cloud`, the Business
 * Cloud API (the number's id, a system-user token and the app secret; prints the webhook URL and the
 * verify token to give Meta, never the secrets). Otherwise a linked device, by QR code (or pairing code
 * with `--phone`), through the gateway that runs the socket. Choosing one ends the other; `--status`
 * reports whichever is connected, `--disconnect` ends it.
 */
function registerWhatsApp(channel: Command): void {
  channel
    .command('whatsapp')
    .description('connect a chatbot to WhatsApp: the Cloud API (--cloud), or a linked device by QR code or --phone')
    .requiredOption('--bot <id>', 'chatbot id')
    .option('--cloud', "use the official WhatsApp Business Cloud API (Meta's Graph API and webhooks)")
    .option('--phone-number-id <id>', 'Cloud API: the phone number id (WhatsApp → API Setup in the Meta app)')
    .option('--token <token>', "Cloud API: a system user's access token with whatsapp_business_messaging")
    .option('--app-secret <secret>', "Cloud API: the Meta app's secret (webhooks are signed with it)")
    .option(
      '--business-account-id <id>',
      'Cloud API: the WhatsApp Business account id (subscribes the app to its webhooks)',
    )
    .option(
      '--text-only-notice <text>',
      'Cloud API: what a visitor who sends a photo, a voice note or a location is told',
    )
    .option('--phone <number>', 'linked device: link with a pairing code for this number (with country code)')
    .option('--status', 'print the connection and change nothing')
    .option('--disconnect', 'stop answering on WhatsApp (a linked device is unlinked)')
    .action((opts: WhatsAppOptions) =>
      runCommand(async (s) => {
        const chatbot = await s.chatbots.get(opts.bot.toLowerCase());
        if (opts.status) return (await s.whatsappCloudConnector.status(chatbot.id)) ?? s.whatsapp.get(chatbot.id);
        if (opts.disconnect) {
          const disconnected =
            (await s.whatsappCloudConnector.disconnect(chatbot.id)) || (await s.whatsappLinker.disconnect(chatbot.id));
          if (!disconnected) throw new CliError('WhatsApp is not connected for this chatbot.');
          return { chatbot_id: chatbot.id, disconnected: true };
        }
        if (opts.cloud) {
          if (opts.phone) throw new CliError('channel whatsapp: --phone links a device; leave it out with --cloud');
          return s.whatsappCloudConnector.connect(chatbot.id, {
            phone_number_id: opts.phoneNumberId,
            business_account_id: opts.businessAccountId,
            token: opts.token,
            app_secret: opts.appSecret,
            text_only_notice: opts.textOnlyNotice,
          });
        }
        const cloudOnly = [opts.phoneNumberId, opts.token, opts.appSecret, opts.businessAccountId, opts.textOnlyNotice];
        if (cloudOnly.some((value) => value !== undefined)) {
          throw new CliError('channel whatsapp: --phone-number-id, --token, --app-secret and the like need --cloud');
        }
        return linkWhatsApp(s, chatbot.id, opts.phone, process.stderr);
      }),
    );
}
