import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, readlinkSync } from 'node:fs';
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

/**
 * Runs `switchboard <args>` at a terminal: stdin and stderr on a pseudo-terminal (util-linux `script`)
 * of `columns` columns (none given: a terminal that reports no width, as an unsized one does), stdout
 * into `stdoutFile`. `screen` is called with what the terminal shows, as it shows it; `type` types at
 * it; `echoes` tells whether the terminal echoes what is typed. `exited` resolves with the exit code;
 * `kill` ends the run.
 */
export function runCliAtTerminal(
  args: string[],
  env: Record<string, string>,
  options: { stdoutFile: string; columns?: number; screen: (text: string) => void },
): { exited: Promise<number | null>; type: (text: string) => void; echoes: () => boolean; kill: () => void } {
  const quote = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;
  const size = options.columns === undefined ? '' : `stty cols ${options.columns} rows 24 && `;
  const command = `${size}exec ${[process.execPath, BIN, ...args].map(quote).join(' ')} > ${quote(options.stdoutFile)}`;
  // -e: the command's exit code; -q: no start and end lines; /dev/null: no typescript file.
  const child = spawn('script', ['-qec', command, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'inherit'] });
  child.stdout.on('data', (chunk: Buffer) => options.screen(chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve(code));
  });
  const kill = () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    // The command is script's one child (its shell exec'd it), in a session of its own: killed by pid,
    // as one stuck in a loop never handles the terminal's hang-up.
    for (const pid of childrenOf(child.pid!)) signal(pid);
    child.kill('SIGKILL');
  };
  const type = (text: string) => void child.stdin.write(text);
  // The command's terminal (its stdin), and whether its line discipline echoes: `-echo` once off.
  const echoes = () => {
    const [pid] = childrenOf(child.pid!);
    if (pid === undefined) throw new Error('the command is not running');
    const terminal = readlinkSync(`/proc/${pid}/fd/0`);
    return !/(^|\s)-echo(\s|$)/.test(execFileSync('stty', ['-F', terminal, '-a'], { encoding: 'utf8' }));
  };
  return { exited, type, echoes, kill };
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
