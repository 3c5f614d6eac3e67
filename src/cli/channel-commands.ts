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
 * `channel whatsapp`: links a WhatsApp account to a chatbot by QR code (or pairing code with
 * `--phone`), through the gateway that runs the socket; reports the link state with `--status`.
 */
function registerWhatsApp(channel: Command): void {
  channel
    .command('whatsapp')
    .description('link a WhatsApp account to a chatbot (QR code, or pairing code with --phone)')
    .requiredOption('--bot <id>', 'chatbot id')
    .option('--phone <number>', 'link with a pairing code for this number (with country code)')
    .option('--status', 'print the link state and change nothing')
    .option('--disconnect', 'unlink the device and stop answering on WhatsApp')
    .action((opts: WhatsAppOptions) =>
      runCommand(async (s) => {
        const chatbot = await s.chatbots.get(opts.bot.toLowerCase());
        if (opts.status) return s.whatsapp.get(chatbot.id);
        if (opts.disconnect) {
          if (!(await s.whatsappLinker.disconnect(chatbot.id))) {
            throw new CliError('WhatsApp is not connected for this chatbot.');
          }
          return { chatbot_id: chatbot.id, disconnected: true };
        }
        return linkWhatsApp(s, chatbot.id, opts.phone, process.stderr);
      }),
    );
}
