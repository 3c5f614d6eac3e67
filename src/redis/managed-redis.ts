import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { createClient } from 'redis';
import type { Logger } from '../logger.ts';

/** redis-server is not installed, or would not start. */
export class ManagedRedisError extends Error {
  override name = 'ManagedRedisError';
}

const INSTALL_HINT = 'redis-server is not installed: install it (apt-get install redis-server) or set REDIS_URL';

/**
 * The local redis-server used when REDIS_URL is unset: data and AOF under `<DATA_DIR>/redis`, reached
 * only through the unix socket `<DATA_DIR>/redis.sock` (no TCP port), so the gateway and the CLI find
 * the same server. Whoever started it stops it; a process that found one running leaves it alone.
 */
export class ManagedRedis {
  readonly socketPath: string;
  private child: ChildProcess | undefined;
  private exited: Promise<void> | undefined;

  private readonly dataDir: string;
  private readonly logger: Logger;

  constructor(dataDir: string, logger: Logger) {
    this.dataDir = dataDir;
    this.logger = logger;
    this.socketPath = path.resolve(dataDir, 'redis.sock');
  }

  /** Uses the running server when one answers on the socket, else starts one and waits for it. */
  async start(): Promise<void> {
    if (await this.answers()) return;
    const dir = path.resolve(this.dataDir, 'redis');
    await mkdir(dir, { recursive: true });
    await rm(this.socketPath, { force: true });
    const args = ['--port', '0', '--unixsocket', this.socketPath, '--unixsocketperm', '700'];
    args.push('--dir', dir, '--appendonly', 'yes', '--appendfsync', 'everysec', '--save', '');
    const child = spawn('redis-server', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    const started = await new Promise<Error | undefined>((resolve) => {
      child.once('error', (error: NodeJS.ErrnoException) =>
        resolve(new ManagedRedisError(error.code === 'ENOENT' ? INSTALL_HINT : error.message)),
      );
      child.once('spawn', () => resolve(undefined));
    });
    if (started) throw started;
    child.once('exit', (code, signal) => {
      if (this.child === child) this.logger.error({ code, signal }, 'managed redis-server exited');
    });
    await this.waitUntilAnswering();
    this.logger.info({ socket: this.socketPath }, 'managed redis-server started');
  }

  /** Stops the server if this process started it (SHUTDOWN flushes the AOF). */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = undefined;
    child.kill('SIGTERM');
    await this.exited;
  }

  private async waitUntilAnswering(): Promise<void> {
    for (let attempt = 0; attempt < 200; attempt += 1) {
      if (!this.child) throw new ManagedRedisError('redis-server exited during startup');
      if (await this.answers()) return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new ManagedRedisError(`redis-server did not answer on ${this.socketPath} within 5 s`);
  }

  private async answers(): Promise<boolean> {
    const exists = await stat(this.socketPath).then(
      (s) => s.isSocket(),
      () => false,
    );
    if (!exists) return false;
    const client = createClient({ socket: { path: this.socketPath, reconnectStrategy: false } });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.ping();
      return true;
    } catch {
      return false;
    } finally {
      if (client.isOpen) client.destroy();
    }
  }
}
