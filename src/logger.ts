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
