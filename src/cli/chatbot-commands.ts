import type { Command } from 'commander';
import { chatbotDetailView } from '../views.ts';
import { runCommand } from './cli-runtime.ts';

interface CreateOptions {
  user: string;
  name: string;
  provider?: string;
  model?: string;
  systemPrompt?: string;
  fallbackMessage?: string;
}

/** `bot create|pause|resume|delete`. */
export function registerChatbotCommands(program: Command): void {
  const bot = program.command('bot').description('chatbots');
  bot
    .command('create')
    .requiredOption('--user <id>', 'owner account id')
    .requiredOption('--name <name>', 'display name')
    .option('--provider <provider>', 'gemini, chatgpt or ollama')
    .option('--model <model>', 'provider model name')
    .option('--system-prompt <text>', 'persona / system prompt')
    .option('--fallback-message <text>', 'reply when the LLM cannot answer')
    .action((opts: CreateOptions) =>
      runCommand(async (s) => {
        const created = await s.chatbots.create(opts.user, {
          name: opts.name,
          provider: opts.provider,
          model: opts.model,
          systemPrompt: opts.systemPrompt,
          fallbackMessage: opts.fallbackMessage,
        });
        return chatbotDetailView(created);
      }),
    );
  for (const [name, active] of [
    ['pause', false],
    ['resume', true],
  ] as const) {
    bot
      .command(name)
      .requiredOption('--bot <id>', 'chatbot id')
      .action((opts: { bot: string }) =>
        runCommand(async (s) => chatbotDetailView(await s.chatbots.setActive(opts.bot, active))),
      );
  }
  bot
    .command('delete')
    .requiredOption('--bot <id>', 'chatbot id')
    .action((opts: { bot: string }) =>
      runCommand(async (s) => {
        await s.chatbots.softDelete(opts.bot);
        return { id: opts.bot, deleted: true };
      }),
    );
}
