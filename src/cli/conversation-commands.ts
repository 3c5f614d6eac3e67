import type { Command } from 'commander';
import type { Services } from '../services.ts';
import { CliError, runCommand } from './cli-runtime.ts';

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

/** Conversations read per round trip while listing. */
const LIST_PAGE = 200;

/** `conversation list|show|escalate|takeover|release|delete`. */
export function registerConversationCommands(program: Command): void {
  const conversation = program.command('conversation').description('conversations');
  conversation
    .command('list')
    .description("a chatbot's conversations, newest activity first, each with its last message")
    .requiredOption('--bot <id>', 'chatbot id')
    .option('--escalated', 'only those escalated to a human')
    .option('--limit <n>', 'at most this many', '100')
    .action((opts: { bot: string; escalated?: boolean; limit: string }) =>
      runCommand(async (s) => {
        const limit = Number(opts.limit);
        if (!Number.isInteger(limit) || limit < 1)
          throw new CliError('conversation list: --limit must be a positive integer');
        await s.chatbots.get(opts.bot);
        const total = await s.conversations.count(opts.bot);
        const rows = [];
        for (let offset = 0; offset < total && rows.length < limit; offset += LIST_PAGE) {
          const page = await s.conversations.recent(opts.bot, LIST_PAGE, offset);
          rows.push(...page.filter((row) => !opts.escalated || row.escalated_at !== null));
        }
        return rows.slice(0, limit);
      }),
    );
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
  conversation
    .command('delete')
    .description(
      "a visitor's erasure request: deletes the conversation with everything keyed by it, and the lead it left",
    )
    .requiredOption('--bot <id>', 'chatbot id')
    .requiredOption('--session <id>', 'session id')
    .action((opts: { bot: string; session: string }) =>
      runCommand(async (s) => {
        await s.chatbots.get(opts.bot);
        return s.conversationErasure.erase(opts.bot, opts.session);
      }),
    );
}
