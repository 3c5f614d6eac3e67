import type { Command } from 'commander';
import type { Chatbot } from '../chatbots/chatbot.ts';
import { systemClock } from '../clock.ts';
import { ConfigError, loadConfig, type Config } from '../config.ts';
import { DomainError, NotFoundError } from '../errors.ts';
import { createLogger, type Logger } from '../logger.ts';
import { SearchEngineUnavailableError } from '../rag/retrieval-setup.ts';
import { createServices, type Services } from '../services.ts';
import { ManagedRedisError } from '../redis/managed-redis.ts';
import { openRedis, type RedisClient } from '../redis/redis-client.ts';
import { isUuid } from '../uuid.ts';

/** What a command may need beyond the service layer. */
export interface CommandContext {
  redis: RedisClient;
  config: Config;
  logger: Logger;
  /**
   * Says something the operator should know beside the result, as a `warning: …` line on stderr
   * (the command still succeeds, and stdout still carries only its JSON value).
   */
  warn: (line: string) => void;
}

/** A command failed in a way the operator can act on; the message is printed as is. */
export class CliError extends Error {
  override name = 'CliError';
}

/** An `<on|off>` option's value as a boolean; anything else is refused naming the option. */
export function onOff(option: string, value: string): boolean {
  if (value === 'on' || value === 'off') return value === 'on';
  throw new CliError(`${option} must be on or off`);
}

/** A `--bot` given by name rather than id, resolved once Redis is open (see acceptChatbotNames). */
let chatbotName: { command: Command; name: string } | undefined;

/**
 * Lets every command's `--bot` take a chatbot's name or slug (compared case-insensitively) instead of
 * its id, when exactly one live chatbot has it: the name is looked up before the command runs, and
 * the command sees the id. Several chatbots with the name are refused with their ids.
 */
export function acceptChatbotNames(program: Command): void {
  program.hook('preAction', (_program, command) => {
    const bot: unknown = command.getOptionValue('bot');
    if (typeof bot === 'string' && !isUuid(bot)) chatbotName = { command, name: bot };
  });
}

/** Every live chatbot of every owner: owners newest first, then each owner's newest first. */
export async function everyChatbot(s: Services): Promise<Chatbot[]> {
  const owners = await s.accounts.list();
  return (await Promise.all(owners.map((owner) => s.chatbots.listForUser(owner.id)))).flat();
}

async function chatbotNamed(s: Services, name: string): Promise<string> {
  const wanted = name.trim().toLowerCase();
  const chatbots = (await everyChatbot(s)).filter(
    (chatbot) => chatbot.name.toLowerCase() === wanted || chatbot.slug === wanted,
  );
  if (chatbots.length === 0) throw new NotFoundError('Chatbot not found.');
  if (chatbots.length > 1) {
    const ids = chatbots.map((chatbot) => chatbot.id).join(', ');
    throw new CliError(`${chatbots.length} chatbots are named "${name}": give --bot the id of one (${ids})`);
  }
  return chatbots[0]!.id;
}

/**
 * Runs one CLI command against the service layer: prints its result as one JSON value on stdout,
 * or a one-line error on stderr (the API's `detail` where there is one) and exit code 1.
 */
export async function runCommand(
  action: (services: Services, context: CommandContext) => Promise<unknown>,
): Promise<void> {
  await runWithServices(async (services, context) => {
    const result = await action(services, context);
    return () => writeOut(`${JSON.stringify(result)}\n`);
  });
}

/**
 * Runs a command that prints a stream of lines (`export`: JSON Lines) instead of one JSON value:
 * `write` puts each line on stdout as it comes, waiting while stdout is full. A failure midway ends
 * the stream where it is, with the one-line error on stderr and exit code 1.
 */
export async function runStreamingCommand(
  action: (services: Services, context: CommandContext, write: (line: string) => Promise<void>) => Promise<void>,
): Promise<void> {
  await runWithServices(async (services, context) => {
    await action(services, context, (line) => writeOut(`${line}\n`));
    return () => Promise.resolve();
  });
}

/** Opens Redis and the service layer for a command; what the command returns is printed once it succeeded. */
async function runWithServices(
  action: (services: Services, context: CommandContext) => Promise<() => Promise<void>>,
): Promise<void> {
  try {
    const config = loadConfig();
    // Logs would break the one-JSON-value contract on stdout: the CLI reports through its exit.
    const logger = createLogger('silent');
    const handle = await openRedis(config, logger);
    try {
      const services = createServices(handle.redis, config, systemClock, logger);
      if (chatbotName) chatbotName.command.setOptionValue('bot', await chatbotNamed(services, chatbotName.name));
      const warnings: string[] = [];
      const warn = (line: string) => void warnings.push(line);
      const print = await action(services, { redis: handle.redis, config, logger, warn });
      // An escalation noted a question for the unanswered inbox: it is recorded before Redis closes.
      await services.unansweredRecorder.settled();
      await print();
      for (const line of warnings) process.stderr.write(`warning: ${line}\n`);
    } finally {
      await handle.close();
    }
  } catch (error) {
    process.stderr.write(`${oneLine(error)}\n`);
    process.exitCode = 1;
  }
}

/** Writes to stdout, resolving once the text is handed on (at once, or when a full pipe drains). */
function writeOut(text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    process.stdout.write(text, (error) => (error ? reject(error) : resolve()));
  });
}

function oneLine(error: unknown): string {
  if (error instanceof DomainError) return error.detail;
  if (
    error instanceof ConfigError ||
    error instanceof ManagedRedisError ||
    error instanceof SearchEngineUnavailableError ||
    error instanceof CliError
  ) {
    return error.message;
  }
  const message = error instanceof Error ? error.message : String(error);
  return `switchboard: ${message.split('\n')[0]}`;
}
