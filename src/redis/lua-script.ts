import { createHash } from 'node:crypto';
import type { RedisClient } from './redis-client.ts';

/**
 * A Lua script run by SHA1 (EVALSHA), loaded on first use or after a server restart (NOSCRIPT).
 * Scripts receive only keys of one hash slot (see RedisKeys).
 */
export class LuaScript {
  /** Every script of the process (the cluster-readiness test checks that each keeps to one slot). */
  static readonly all: LuaScript[] = [];

  readonly sha1: string;

  readonly source: string;

  constructor(source: string) {
    this.source = source;
    this.sha1 = createHash('sha1').update(source).digest('hex');
    LuaScript.all.push(this);
  }

  async run(redis: RedisClient, keys: string[], args: Array<string | number>): Promise<unknown> {
    const options = { keys, arguments: args.map(String) };
    try {
      return await redis.evalSha(this.sha1, options);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return redis.eval(this.source, options);
    }
  }
}
