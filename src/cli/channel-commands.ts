import type { Command } from 'commander';
import { CliError, runCommand } from './cli-runtime.ts';

interface TelegramOptions {
  bot: string;
  token?: string;
  mode: string;
  disconnect?: boolean;
}

/** `channel telegram`: connects a chatbot to a Telegram bot (or disconnects it). */
export function registerChannelCommands(program: Command): void {
  const channel = program.command('channel').description('messaging channels');
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
