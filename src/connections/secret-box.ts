import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError } from '../config.ts';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A sealed value that cannot be opened: another key sealed it, or it was altered. */
export class SecretBoxError extends Error {
  override name = 'SecretBoxError';
}

/**
 * Encrypts secrets at rest with AES-256-GCM (node:crypto): a fresh 96-bit IV per value, the tag
 * checked on open, and associated data that binds a sealed value to its record (a connection id), so
 * a ciphertext copied onto another record does not open.
 */
export class SecretBox {
  private readonly key: Buffer;
  /** Names the key without revealing it (HMAC of a constant), so processes can tell they share one. */
  readonly fingerprint: string;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('SecretBox needs a 32-byte key');
    this.key = key;
    this.fingerprint = createHmac('sha256', key).update('switchboard secret key check').digest('hex').slice(0, 32);
  }

  /** `v1.<base64url of iv | tag | ciphertext>`. */
  seal(plaintext: string, associatedData: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(associatedData, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
  }

  open(sealed: string, associatedData: string): string {
    const [version, payload] = sealed.split('.', 2);
    if (version !== VERSION || !payload) throw new SecretBoxError('not a sealed secret');
    const bytes = Buffer.from(payload, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', this.key, bytes.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(associatedData, 'utf8'));
    decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch (error) {
      throw new SecretBoxError('the secret was sealed with another key, or altered', { cause: error });
    }
  }
}

/** The key file written into DATA_DIR when SECRET_KEY is unset. */
const SECRET_KEY_FILE = 'secret.key';

/**
 * The key from `SECRET_KEY` (32 bytes, base64 or hex), or from `DATA_DIR/secret.key`, generated there
 * (mode 600) on first use. `generated` tells the caller to say that other gateways need the same key.
 */
export async function loadSecretKey(
  secretKey: string | undefined,
  dataDir: string,
): Promise<{ key: Buffer; generated: boolean }> {
  if (secretKey !== undefined) return { key: decodeKey(secretKey, 'SECRET_KEY'), generated: false };
  const file = path.join(dataDir, SECRET_KEY_FILE);
  const existing = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (existing !== undefined) return { key: decodeKey(existing.trim(), file), generated: false };
  await mkdir(dataDir, { recursive: true });
  const key = randomBytes(32);
  try {
    // `wx`: when two processes start at once, the second reads the first one's key.
    await writeFile(file, `${key.toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return { key: decodeKey((await readFile(file, 'utf8')).trim(), file), generated: false };
  }
  await chmod(file, 0o600);
  return { key, generated: true };
}

function decodeKey(text: string, where: string): Buffer {
  const key = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
  if (key.length !== 32 || (!/^[0-9a-fA-F]{64}$/.test(text) && !/^[A-Za-z0-9+/_-]{43}=?$/.test(text))) {
    throw new ConfigError(`Invalid ${where}: must be 32 bytes as base64 or hex (openssl rand -base64 32)`);
  }
  return key;
}
