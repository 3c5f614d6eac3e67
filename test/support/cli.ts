import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readlinkSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

const BIN = path.resolve(import.meta.dirname, '../../bin/switchboard.js');

/** What one CLI run printed and how it exited. */
export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `switchboard <args>` on this Node with exactly the given environment (and `input` piped to stdin). */
export function runCli(args: string[], env: Record<string, string>, input?: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const stdin = input === undefined ? 'ignore' : 'pipe';
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: [stdin, 'pipe', 'pipe'] });
    child.stdin?.end(input);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk) => (stdout += chunk));
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Runs the CLI and parses its one line of JSON; anything else (exit code, stderr, more lines) throws. */
export async function runCliJson(args: string[], env: Record<string, string>, input?: string): Promise<any> {
  const result = await runCli(args, env, input);
  if (result.code !== 0) throw new Error(`${args.join(' ')} failed: ${result.stderr}`);
  const lines = result.stdout.split('\n');
  if (lines.length !== 2 || lines[1] !== '' || result.stderr !== '') {
    throw new Error(`not one JSON line: ${JSON.stringify(result)}`);
  }
  return JSON.parse(lines[0]!);
}

/** What a failed CLI run looks like: exit 1, nothing on stdout, one line on stderr. */
export function cliFailure(stderr: string): CliResult {
  return { code: 1, stdout: '', stderr: `${stderr}\n` };
}

/** A CLI run at a terminal (see {@link runCliAtTerminal}). */
export interface TerminalRun {
  /** The exit code. */
  exited: Promise<number | null>;
  /** What the terminal has shown so far. */
  screen: () => string;
  /** What the command wrote on stdout (once it has exited). */
  printed: () => Promise<string>;
  /** Types at the terminal. */
  type: (text: string) => void;
  /** Whether the terminal echoes what is typed. */
  echoes: () => boolean;
  /** Kills the run if it is still going and removes its files (a test's teardown). */
  end: () => Promise<void>;
}

/**
 * Runs `switchboard <args>` at a terminal: stdin and stderr on a pseudo-terminal (util-linux `script`)
 * of `columns` columns (none given: a terminal that reports no width, as an unsized one does), stdout
 * into a file of its own.
 */
export function runCliAtTerminal(args: string[], env: Record<string, string>, columns?: number): TerminalRun {
  const dir = mkdtempSync(path.join(tmpdir(), 'switchboard-tty-'));
  const stdoutFile = path.join(dir, 'stdout');
  const quote = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;
  const size = columns === undefined ? '' : `stty cols ${columns} rows 24 && `;
  const command = `${size}exec ${[process.execPath, BIN, ...args].map(quote).join(' ')} > ${quote(stdoutFile)}`;
  // -e: the command's exit code; -q: no start and end lines; /dev/null: no typescript file.
  const child = spawn('script', ['-qec', command, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'inherit'] });
  let screen = '';
  child.stdout.on('data', (chunk: Buffer) => (screen += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve(code));
  });
  return {
    exited,
    screen: () => screen,
    printed: () => readFile(stdoutFile, 'utf8'),
    type: (text) => void child.stdin.write(text),
    // The command's terminal (its stdin), and whether its line discipline echoes: `-echo` once off.
    echoes: () => {
      const [pid] = childrenOf(child.pid!);
      if (pid === undefined) throw new Error('the command is not running');
      const terminal = readlinkSync(`/proc/${pid}/fd/0`);
      return !/(^|\s)-echo(\s|$)/.test(execFileSync('stty', ['-F', terminal, '-a'], { encoding: 'utf8' }));
    },
    end: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        // The command is script's one child (its shell exec'd it), in a session of its own: killed by
        // pid, as one stuck in a loop never handles the terminal's hang-up.
        for (const pid of childrenOf(child.pid!)) signal(pid);
        child.kill('SIGKILL');
      }
      await rm(dir, { recursive: true });
    },
  };
}

/** The pids of a process's children; none once it has exited. */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

/** SIGKILL to a process, unless it has exited meanwhile. */
function signal(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}
