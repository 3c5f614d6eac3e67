import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import pLimit from 'p-limit';
import { ValidationError } from '../errors.ts';

/** Shortest and longest password an owner may set. */
export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 256;

/**
 * scrypt's cost parameters for new hashes: N = 2^15, r = 8, p = 3 (32 MiB per hash), one of OWASP's
 * equivalent recommendations. They are stored beside every hash, so raising them later leaves the
 * old hashes verifiable.
 */
const PARAMS = { N: 2 ** 15, r: 8, p: 3 } as const;
const KEY_BYTES = 32;
const SALT_BYTES = 16;

/**
 * How many scrypt computations run at once in this process; the rest wait in a queue, first come
 * first served. Each one holds a thread of libuv's pool (4 by default) and 32 MiB for about 230 ms:
 * unbounded, a burst of sign-ins would take every thread from what shares the pool (DNS lookups of
 * webhook deliveries and crawls, file reads) and its memory would grow with the burst.
 */
export const PASSWORD_WORK_CONCURRENCY = 2;
/**
 * How many sign-in checks may wait for a turn; one more is refused at once with
 * {@link PasswordWorkBusyError} instead of queueing behind the others. So a sign-in waits for at most
 * this many checks ahead of it (two rounds of the pool, about half a second here), however many
 * guesses arrive. Setting a password always waits its turn: it is never a stranger's request.
 */
export const PASSWORD_WORK_QUEUE = 4;
const work = pLimit(PASSWORD_WORK_CONCURRENCY);

/** Every scrypt slot and queue place is taken: the sign-in is refused rather than kept waiting. */
export class PasswordWorkBusyError extends Error {
  override name = 'PasswordWorkBusyError';
}

/** scrypt computations running now and waiting for a turn (hashes, verifications, the decoy's). */
export function passwordWorkLoad(): { running: number; waiting: number } {
  return { running: work.activeCount, waiting: work.pendingCount };
}

/** Refuses a password outside the length rules; the message names the field. */
export function checkPassword(password: unknown): string {
  if (typeof password !== 'string' || password.length < PASSWORD_MIN_LENGTH || password.length > PASSWORD_MAX_LENGTH) {
    throw new ValidationError(`password must be ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters.`);
  }
  return password;
}

/** `scrypt$N$r$p$salt$hash` (salt and hash base64url): a fresh random salt per password. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const hash = await derive(password, salt, PARAMS);
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

/**
 * Whether `password` matches a stored hash; the comparison takes the same time wherever they differ.
 * Throws {@link PasswordWorkBusyError} at once when {@link PASSWORD_WORK_QUEUE} checks are waiting
 * already.
 */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  if (work.activeCount + work.pendingCount >= PASSWORD_WORK_CONCURRENCY + PASSWORD_WORK_QUEUE) {
    throw new PasswordWorkBusyError('every password check slot is taken');
  }
  const expected = Buffer.from(hash, 'base64url');
  const actual = await derive(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/**
 * A hash of a password nobody has, so that a sign-in with an unknown email costs the same scrypt
 * work as one with a wrong password and the two cannot be told apart by their timing.
 */
export function decoyHash(): Promise<string> {
  decoy ??= hashPassword(randomBytes(24).toString('base64url'));
  return decoy;
}
let decoy: Promise<string> | undefined;

// Every hash and every verification (an unknown email's against the decoy included) waits in the
// same queue, so a sign-in's timing still tells nothing about whether the email exists.
function derive(password: string, salt: Buffer, params: { N: number; r: number; p: number }): Promise<Buffer> {
  // Node's default memory cap (32 MiB) is exactly what N=2^15, r=8 needs; leave headroom.
  const options: ScryptOptions = { ...params, maxmem: 256 * params.N * params.r };
  return work(
    () =>
      new Promise<Buffer>((resolve, reject) => {
        scrypt(password.normalize('NFC'), salt, KEY_BYTES, options, (error, key) =>
          error ? reject(error) : resolve(key),
        );
      }),
  );
}
