import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * Paths that must never reach a log line: credentials in headers and anything named like a key,
 * token, hash or secret, at any depth we log.
 */
const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  '*.authorization',
  '*.key',
  '*.token',
  '*.secret',
  '*.hash',
  '*.password',
  'key',
  'token',
  'secret',
  'hash',
  'password',
];

/** Creates the process logger (JSON lines on stdout, or `destination` in tests). */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  const options = { level, redact: { paths: REDACT, censor: '[redacted]' }, base: { pid: process.pid } };
  return destination ? pino(options, destination) : pino(options);
}

/**
 * Log lines for a person at a terminal (pino-pretty): the time of day, the level, the message, and
 * each field on its own line; redaction happens before, in the logger. `destination` defaults to
 * stdout; tests pass a stream and no colours.
 */
export async function terminalLogStream(
  options: { destination?: NodeJS.WritableStream; colorize?: boolean } = {},
): Promise<pino.DestinationStream> {
  // Loaded only at a terminal: a gateway under a supervisor writes JSON and never needs it.
  const { default: pretty } = await import('pino-pretty');
  return pretty({
    colorize: options.colorize ?? true,
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'pid,hostname',
    sync: true,
    ...(options.destination && { destination: options.destination }),
  });
}
