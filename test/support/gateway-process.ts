import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { freePort } from './redis-server.ts';

const MAIN = path.resolve(import.meta.dirname, '../../src/main.ts');

/** `node src/main.ts` as a child process, with its log lines collected. */
export interface GatewayProcess {
  child: ChildProcess;
  port: number;
  baseUrl: string;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts the gateway process and resolves once it is listening. With `terminal`, its stdout is a
 * pseudo-terminal (util-linux `script`), as when a person runs it.
 */
export async function spawnGateway(
  env: Record<string, string>,
  options: { terminal?: boolean } = {},
): Promise<GatewayProcess> {
  const port = await freePort();
  const [command, args] = options.terminal
    ? ['script', ['-qfec', `${process.execPath} ${MAIN}`, '/dev/null']]
    : [process.execPath, [MAIN]];
  const child = spawn(command, args, {
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  child.stderr.on('data', (chunk) => (err += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  // Ready once it logs that it listens, or (at a log level that hides that line) once /readyz says so.
  const listening = new Promise<void>((resolve, reject) => {
    let settled = false;
    const settle = (error?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(poll);
      if (error) reject(error);
      else resolve();
    };
    const timer = setTimeout(() => settle(new Error(`gateway did not start: ${out}${err}`)), 30_000);
    const poll = setInterval(() => {
      fetch(`http://127.0.0.1:${port}/readyz`).then(
        (response) => response.ok && settle(),
        () => {},
      );
    }, 100);
    child.stdout.on('data', () => {
      if (out.includes('"gateway listening"')) settle();
    });
    void exited.then(() => settle(new Error(`gateway exited: ${out}${err}`)));
  });
  await listening;
  return {
    child,
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    stdout: () => out,
    stderr: () => err,
    exited,
  };
}
