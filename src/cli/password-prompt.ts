import { CliError } from './cli-runtime.ts';

/**
 * Reads a password from stdin: on a terminal, a prompt on stderr whose typing is not echoed, asked
 * twice; from a pipe, the first line (so scripts and tests can drive it). Never from an argument,
 * which would sit in the shell's history and in `ps`.
 */
export async function readPassword(stdin: NodeJS.ReadStream, stderr: NodeJS.WriteStream): Promise<string> {
  if (stdin.isTTY !== true) return firstLine(stdin);
  const first = await hiddenPrompt(stdin, stderr, 'New password: ');
  const second = await hiddenPrompt(stdin, stderr, 'Repeat it: ');
  if (first !== second) throw new CliError('The two passwords differ.');
  return first;
}

async function firstLine(stdin: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stdin) {
    text += String(chunk);
    if (text.includes('\n')) break;
  }
  const line = text.split('\n')[0]!.replace(/\r$/, '');
  if (line === '') throw new CliError('user password: no password on stdin (give it as one line)');
  return line;
}

function hiddenPrompt(stdin: NodeJS.ReadStream, stderr: NodeJS.WriteStream, prompt: string): Promise<string> {
  stderr.write(prompt);
  stdin.setRawMode(true);
  stdin.resume();
  stdin.setEncoding('utf8');
  return new Promise((resolve, reject) => {
    let typed = '';
    const finish = (error?: Error) => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      stderr.write('\n');
      if (error) reject(error);
      else resolve(typed);
    };
    const onData = (chunk: string) => {
      for (const char of chunk) {
        if (char === '\r' || char === '\n') return finish();
        if (char === '\u0003') return finish(new CliError('Cancelled.'));
        if (char === '\u007f' || char === '\b') typed = typed.slice(0, -1);
        else if (char >= ' ') typed += char;
      }
    };
    stdin.on('data', onData);
  });
}
