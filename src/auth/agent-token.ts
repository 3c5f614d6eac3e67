import { randomBytes } from 'node:crypto';
import { sha256Hex } from './secret-hash.ts';

const SHAPE = /^ag_[A-Za-z0-9_-]{43}$/;

/** A new agent sign-in token: `ag_` and 32 random bytes in URL-safe base64. */
export function generateAgentToken(): string {
  return `ag_${randomBytes(32).toString('base64url')}`;
}

/** True when the value has the shape of an agent token, so a made-up one costs no Redis call. */
export function isWellFormedAgentToken(token: unknown): token is string {
  return typeof token === 'string' && SHAPE.test(token);
}

/** The only form of an agent token that is stored: its SHA-256, hex. */
export function hashAgentToken(token: string): string {
  return sha256Hex(token);
}
