import { randomBytes } from 'node:crypto';
import { sha256Hex } from './secret-hash.ts';
import { crc32 } from 'node:zlib';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SHAPE = /^ic_([A-Za-z0-9_-]{43})([0-9A-Za-z]{6})$/;

function checksum(body: string): string {
  let value = crc32(body);
  let out = '';
  for (let i = 0; i < 6; i += 1) {
    out = BASE62[value % 62] + out;
    value = Math.floor(value / 62);
  }
  return out;
}

/**
 * A new API key: `ic_`, 32 random bytes in URL-safe base64 (43 characters), and a 6-character base62
 * CRC32 of those characters, so a mistyped or made-up key is refused without a Redis call.
 */
export function generateApiKey(): string {
  const body = randomBytes(32).toString('base64url');
  return `ic_${body}${checksum(body)}`;
}

/** True when the token has the shape of an API key and its checksum matches. */
export function isWellFormedApiKey(token: string): boolean {
  const match = SHAPE.exec(token);
  return match !== null && checksum(match[1]!) === match[2];
}

/** The only form of a key that is stored: its SHA-256, hex. */
export function hashApiKey(token: string): string {
  return sha256Hex(token);
}

/** The part of a key shown in listings: its first 8 characters. */
export function apiKeyPrefix(token: string): string {
  return token.slice(0, 8);
}
