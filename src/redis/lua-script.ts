import { createHash } from 'node:crypto';
import { plainConnection, waitForReplicas, type RedisClient } from './redis-client.ts';

/**
 * What a script takes and answers: its keys and arguments as named tuples (a rest element where the
 * count varies), and its reply as RESP3 delivers a Lua value (integer → number, string → string,
 * false → null, table → array).
 */
export interface ScriptSignature {
  keys: string[];
  args: Array<string | number>;
  reply: unknown;
}

/**
 * A Lua script run by SHA1 (EVALSHA), loaded on first use or after a server restart (NOSCRIPT).
 * Scripts receive only keys of one hash slot (see RedisKeys). `S` is declared once with the script;
 * without it the script cannot be run (`never`).
 */
// Why not node-redis's own `defineScript` and the client's `scripts` option: those scripts are bound
// when the client is created, so redis-client.ts would import every store's and gate's scripts and the
// client's type would carry them all (plumbing depending on the domain), and each script would need a
// `parseCommand` and a `transformReply` whose reply is `any` — the reply type would still be declared
// by hand, only in more code. A script that is a value of its own module, typed here, gives the same
// EVALSHA/NOSCRIPT behaviour, typed keys, arguments and reply at every call site, and keeps `all`
// enumerable for the cluster test.
export class LuaScript<S extends ScriptSignature = never> {
  /** Every script of the process (the cluster-readiness test checks that each keeps to one slot). */
  static readonly all: Array<LuaScript<ScriptSignature>> = [];

  readonly sha1: string;

  readonly source: string;

  /** Runs on the client's plain connection (see plainConnection). */
  readonly plain: boolean;

  /**
   * `plain`: for a script whose keys this process reads on the plain connection too (or with
   * readPastCache), never through the client-side cache: the caching connection hears of the
   * script's writes by invalidations, which may arrive a moment after the script's reply.
   */
  constructor(source: string, options: { plain?: boolean } = {}) {
    this.source = source;
    this.plain = options.plain ?? false;
    this.sha1 = createHash('sha1').update(source).digest('hex');
    LuaScript.all.push(this);
  }

  async run(redis: RedisClient, keys: S['keys'], args: S['args']): Promise<S['reply']> {
    const options = { keys, arguments: args.map(String) };
    // The one place a reply is trusted to be what the script's signature says it returns: TypeScript
    // takes any reply for `S['reply']`, whose constraint is `unknown`, so no call site casts.
    let reply: S['reply'];
    const connection = this.plain ? plainConnection(redis) : redis;
    try {
      reply = await connection.evalSha(this.sha1, options);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      reply = await connection.eval(this.source, options);
    }
    if (keys[0] !== undefined) await waitForReplicas(connection, keys[0]);
    return reply;
  }
}
