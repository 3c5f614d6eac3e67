import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createClient } from 'redis';

/** A throwaway redis-server for one test file, on a free port (never 6379), keeping nothing on disk. */
export interface TestRedis {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** Where freePort looks: above the well-known services' ports (6379 among them). */
const LOWEST_PORT = 10_000;

/**
 * A free TCP port on loopback for a server that needs its port before it starts (a redis-server, a
 * gateway whose PUBLIC_URL names it), chosen at random below the kernel's ephemeral range. A port the
 * kernel hands out for `listen(0)` is also one it hands out for outgoing connections: with test files
 * running side by side and making thousands of loopback connections, one of them could take the port
 * between this check and the server's bind.
 */
export async function freePort(): Promise<number> {
  const ephemeralLow = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
  if (!(ephemeralLow > LOWEST_PORT + 1000)) return kernelPort();
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const port = LOWEST_PORT + Math.floor(Math.random() * (ephemeralLow - LOWEST_PORT));
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port between ${LOWEST_PORT} and ${ephemeralLow}`);
}

/** A port as the kernel hands it out for `listen(0)`. */
function kernelPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Starts redis-server and waits until it answers PING. */
export async function startRedis(extraArgs: string[] = []): Promise<TestRedis> {
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const port = await freePort();
    if (port === 6379) continue;
    // Its own working directory, removed when it stops: a replica writes the RDB its master sends
    // there (it once landed in the repository as dump.rdb).
    const dir = mkdtempSync(path.join(tmpdir(), 'sb-redis-'));
    const child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...extraArgs],
      { stdio: 'ignore', cwd: dir },
    );
    const url = `redis://127.0.0.1:${port}`;
    const stop = async () => {
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    };
    if (await answers(url, child)) return { url, port, stop };
    await stop();
  }
  throw new Error('could not start redis-server on a free port');
}

/**
 * Whether our redis-server answers at `url`. Test files run in parallel: the port may have been taken
 * by another file's server meanwhile (ours then fails to bind), so the answer must come from our
 * process.
 */
async function answers(url: string, child: ChildProcess): Promise<boolean> {
  for (let i = 0; i < 100 && child.exitCode === null; i += 1) {
    const client = createClient({ url, socket: { reconnectStrategy: false } });
    client.on('error', () => {});
    try {
      await client.connect();
      const info = await client.info('server');
      client.destroy();
      return /^process_id:(\d+)/m.exec(info)?.[1] === String(child.pid);
    } catch {
      if (client.isOpen) client.destroy();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  return false;
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/**
 * A redis-server in cluster mode that serves every hash slot itself: a real Redis Cluster of one
 * shard, which refuses a script or transaction whose keys span slots (CROSSSLOT), as any cluster does.
 */
export async function startClusterRedis(): Promise<TestRedis> {
  const dir = mkdtempSync(path.join(tmpdir(), 'sb-cluster-'));
  const redis = await startRedis(['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--dir', dir]);
  const client = createClient({ url: redis.url });
  await client.connect();
  try {
    await client.sendCommand(['CLUSTER', 'ADDSLOTSRANGE', '0', '16383']);
    for (let i = 0; ; i += 1) {
      const info = await client.sendCommand<string>(['CLUSTER', 'INFO']);
      if (info.includes('cluster_state:ok')) break;
      if (i === 200) {
        await redis.stop();
        throw new Error('the one-shard Redis Cluster did not reach cluster_state:ok within 10 s');
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    client.destroy();
  }
  return {
    ...redis,
    stop: async () => {
      await redis.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
