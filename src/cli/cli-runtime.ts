import { systemClock } from '../clock.ts';
import { ConfigError, loadConfig, type Config } from '../config.ts';
import { DomainError } from '../errors.ts';
import { createLogger, type Logger } from '../logger.ts';
import { SearchEngineUnavailableError } from '../rag/retrieval-setup.ts';
import { createServices, type Services } from '../services.ts';
import { ManagedRedisError } from '../redis/managed-redis.ts';
import { openRedis, RedisUnreachableError, type RedisClient } from '../redis/redis-client.ts';

/** What a command may need beyond the service layer. */
export interface CommandContext {
  redis: RedisClient;
  config: Config;
  logger: Logger;
}

/** A command failed in a way the operator can act on; the message is printed as is. */
export class CliError extends Error {
  override name = 'CliError';
}

/**
 * Runs one CLI command against the service layer: prints its result as one JSON value on stdout,
 * or a one-line error on stderr (the API's `detail` where there is one) and exit code 1.
 */
export async function runCommand(
  action: (services: Services, context: CommandContext) => Promise<unknown>,
): Promise<void> {
  try {
    const config = loadConfig();
    // Logs would break the one-JSON-value contract on stdout: the CLI reports through its exit.
    const logger = createLogger('silent');
    const handle = await openRedis({ redisUrl: config.REDIS_URL, dataDir: config.DATA_DIR }, logger);
    try {
      const services = createServices(handle.redis, config, systemClock, logger);
      const result = await action(services, { redis: handle.redis, config, logger });
      process.stdout.write(`${JSON.stringify(result)}\n`);
    } finally {
      await handle.close();
    }
  } catch (error) {
    process.stderr.write(`${oneLine(error)}\n`);
    process.exitCode = 1;
  }
}

function oneLine(error: unknown): string {
  if (error instanceof DomainError) return error.detail;
  if (
    error instanceof ConfigError ||
    error instanceof ManagedRedisError ||
    error instanceof RedisUnreachableError ||
    error instanceof SearchEngineUnavailableError ||
    error instanceof CliError
  ) {
    return error.message;
  }
  const message = error instanceof Error ? error.message : String(error);
  return `switchboard: ${message.split('\n')[0]}`;
}
