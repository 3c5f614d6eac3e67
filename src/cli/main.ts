import { Command } from 'commander';
import { registerAccountCommands } from './account-commands.ts';
import { registerAgentCommands } from './agent-commands.ts';
import { registerCannedCommands } from './canned-commands.ts';
import { acceptChatbotNames } from './cli-runtime.ts';
import { registerChannelCommands } from './channel-commands.ts';
import { registerChatbotCommands } from './chatbot-commands.ts';
import { registerConnectionCommands } from './connection-commands.ts';
import { registerConversationCommands } from './conversation-commands.ts';
import { registerLeadCommands } from './lead-commands.ts';
import { registerSourceCommands } from './source-commands.ts';
import { registerStatusCommand } from './status-command.ts';
import { registerTransferCommands } from './transfer-commands.ts';
import { registerUnansweredCommands } from './unanswered-commands.ts';
import { registerWebhookCommands } from './webhook-commands.ts';

/** The operator CLI (DESIGN.md): one JSON value on stdout and exit 0, or one line on stderr and exit 1. */
export function buildProgram(): Command {
  const program = new Command('switchboard').description('Switchboard operator CLI');
  // Loaded on demand: the other commands need neither restify nor the rest of the gateway.
  program
    .command('serve')
    .description('start the gateway')
    .action(async () => (await import('../main.ts')).serve());
  registerAccountCommands(program);
  registerChatbotCommands(program);
  registerSourceCommands(program);
  registerConnectionCommands(program);
  registerConversationCommands(program);
  registerWebhookCommands(program);
  registerLeadCommands(program);
  registerUnansweredCommands(program);
  registerAgentCommands(program);
  registerCannedCommands(program);
  registerChannelCommands(program);
  registerStatusCommand(program);
  registerTransferCommands(program);
  acceptChatbotNames(program);
  return program;
}

await buildProgram().parseAsync(process.argv);
