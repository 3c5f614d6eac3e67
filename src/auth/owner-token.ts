import { randomBytes } from 'node:crypto';
import { sha256Hex } from './secret-hash.ts';

/**
 * A credential that names its owner: `<user id>.<32 random bytes, base64url>`. The user id places
 * what it opens in the owner's hash slot; only the SHA-256 of the secret part is ever stored.
 */
export interface OwnerToken {
  token: string;
  userId: string;
  /** SHA-256 (hex) of the secret part: what Redis keeps. */
  hash: string;
}

const TOKEN = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.([A-Za-z0-9_-]{43})$/;

/** A new random token for the owner. */
export function newOwnerToken(userId: string): OwnerToken {
  const secret = randomBytes(32).toString('base64url');
  return { token: `${userId}.${secret}`, userId, hash: sha256Hex(secret) };
}

/** Reads a presented token; undefined when it is not one. */
export function parseOwnerToken(token: unknown): OwnerToken | undefined {
  const match = typeof token === 'string' ? TOKEN.exec(token) : null;
  if (!match) return undefined;
  return { token: match[0], userId: match[1]!, hash: sha256Hex(match[2]!) };
}
