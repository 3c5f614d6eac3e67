import type { Command } from 'commander';
import type { Services } from '../services.ts';
import { runCommand } from './cli-runtime.ts';

interface ConversationOptions {
  bot: string;
  session: string;
  agent?: string;
}

type Action = (s: Services, o: ConversationOptions) => Promise<unknown>;

const ACTIONS: Array<[string, string, Action]> = [
  ['show', 'the conversation and its transcript', (s, o) => s.control.show(o.bot, o.session)],
  [
    'escalate',
    'flag the conversation as needing a human (conversation.escalated the first time)',
    async (s, o) => (await s.control.escalate(o.bot, o.session)).conversation,
  ],
  [
    'takeover',
    'put a human agent in charge: the AI stops answering',
    (s, o) => s.control.takeOver(o.bot, o.session, o.agent ?? 'operator'),
  ],
  ['release', 'hand the conversation back to the AI', (s, o) => s.control.release(o.bot, o.session, o.agent ?? '')],
];

/** `conversation show|escalate|takeover|release`. */
export function registerConversationCommands(program: Command): void {
  const conversation = program.command('conversation').description('conversations');
  for (const [name, description, action] of ACTIONS) {
    conversation
      .command(name)
      .description(description)
      .requiredOption('--bot <id>', 'chatbot id')
      .requiredOption('--session <id>', 'session id')
      .option('--agent <name>', 'agent name (takeover: defaults to "operator"; release: only if this agent holds it)')
      .action((opts: ConversationOptions) =>
        runCommand(async (s) => {
          await s.chatbots.get(opts.bot);
          return action(s, opts);
        }),
      );
  }
}
