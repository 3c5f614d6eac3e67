import { ConfigError } from '../config.ts';
import type { Logger } from '../logger.ts';
import type { RedisClient } from '../redis/redis-client.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';
import { loadSecretKey, SecretBox } from './secret-box.ts';

/** This process's key is not the one the deployment's connection secrets are sealed with. */
export class SecretKeyMismatchError extends ConfigError {
  override name = 'SecretKeyMismatchError';
}

/**
 * The deployment's SecretBox, opened on first use: the key comes from `SECRET_KEY` or the key file in
 * `DATA_DIR` (generated there when neither exists), and its fingerprint is checked against the one
 * recorded in Redis by the first process that used a key, so a gateway or CLI with another key
 * fails with a clear message instead of sealing secrets nobody else can open.
 */
export class SecretKeyring {
  private readonly redis: RedisClient;
  private readonly keys: RedisKeys;
  private readonly secretKey: string | undefined;
  private readonly dataDir: string;
  private readonly logger: Logger;
  private opened: Promise<SecretBox> | undefined;

  constructor(deps: {
    redis: RedisClient;
    keys: RedisKeys;
    secretKey: string | undefined;
    dataDir: string;
    logger: Logger;
  }) {
    this.redis = deps.redis;
    this.keys = deps.keys;
    this.secretKey = deps.secretKey;
    this.dataDir = deps.dataDir;
    this.logger = deps.logger;
  }

  box(): Promise<SecretBox> {
    if (!this.opened) {
      this.opened = this.open();
      // A failed opening (a mismatch fixed by a restart with the right key) is tried again next time;
      // the caller of this call gets the failure itself.
      this.opened.catch(() => (this.opened = undefined));
    }
    return this.opened;
  }

  private async open(): Promise<SecretBox> {
    const { key, generated } = await loadSecretKey(this.secretKey, this.dataDir);
    const box = new SecretBox(key);
    if (generated) {
      this.logger.warn(
        { data_dir: this.dataDir },
        'SECRET_KEY is unset: generated one into DATA_DIR/secret.key; every gateway sharing this Redis needs the same SECRET_KEY',
      );
    }
    await this.redis.set(this.keys.secretKeyCheck(), box.fingerprint, { NX: true });
    const recorded = await this.redis.get(this.keys.secretKeyCheck());
    if (recorded !== box.fingerprint) {
      throw new SecretKeyMismatchError(
        'SECRET_KEY does not match the key this deployment seals connection secrets with; give every gateway and the CLI the same SECRET_KEY.',
      );
    }
    return box;
  }
}
