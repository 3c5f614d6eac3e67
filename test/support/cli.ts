import { spawn } from 'node:child_process';
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
