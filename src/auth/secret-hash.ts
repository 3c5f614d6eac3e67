import { createHash } from 'node:crypto';

/** What Redis keeps of a secret (an API key, an agent or owner token, a setup token): its SHA-256, hex. */
export function sha256Hex(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}
