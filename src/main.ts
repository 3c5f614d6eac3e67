import { startApp } from './app.ts';
import { ListenError } from './http/http-server.ts';
import { ConfigError, loadConfig } from './config.ts';
import { createLogger, terminalLogStream } from './logger.ts';
import { UnservableEmbeddingSpaceError } from './rag/retrieval-setup.ts';
import { ManagedRedisError } from './redis/managed-redis.ts';
import { RedisUnreachableError } from './redis/redis-client.ts';
import { gatewaySetup, startupBanner, startupFacts } from './startup.ts';

/** Starts the gateway and stops it cleanly on SIGTERM / SIGINT. */
export async function serve(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`switchboard: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  // At a terminal, log lines a person reads; otherwise one JSON object per line for a collector.
  const logger = createLogger(config.LOG_LEVEL, process.stdout.isTTY ? await terminalLogStream() : undefined);
  let app;
  try {
    app = await startApp(config, logger);
  } catch (error) {
    if (
      error instanceof ListenError ||
      error instanceof ManagedRedisError ||
      error instanceof RedisUnreachableError ||
      error instanceof UnservableEmbeddingSpaceError
    ) {
      process.stderr.write(`switchboard: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  // Where to go next: for a person at a terminal in words, for a log collector as one line.
  const facts = startupFacts(config, gatewaySetup(config, app.port), await app.services.ownerAuth.firstRunToken());
  if (process.stdout.isTTY) process.stdout.write(startupBanner(facts));
  else logger.info(facts, 'gateway ready');
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    app.stop().then(
      // Exit by running out of work, so stdout (a pipe under a supervisor) is flushed; the timer is
      // the backstop for a handle that would keep the process alive.
      () => setTimeout(() => process.exit(0), 5000).unref(),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exitCode = 1;
        setTimeout(() => process.exit(1), 5000).unref();
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

if (import.meta.main) await serve();
