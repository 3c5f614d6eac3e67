import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { startRedis } from './support/redis-server.ts';

// Libraries loaded when first used, not with their importers (src/lazy-module.ts): Baileys is 15.5 MB
// of a gateway's heap, and got, grammY, ora and qrcode a quarter of a CLI command's start-up. The
// tests that link a device, run a Telegram bot, send a webhook or wait at a terminal load them then.

const root = path.resolve(import.meta.dirname, '..');
const LAZY = ['@whiskeysockets/baileys', 'got', 'grammy', '@grammyjs/auto-retry', 'ora', 'qrcode'];

/** The packages of LAZY that loading `entry` (with `argv`) resolved, and how many modules it resolved. */
async function resolvedBy(entry: string, argv: string[], env: Record<string, string> = {}) {
  // Records every module the entry's module graph resolves, then reports when the process exits.
  const probe = `
import { registerHooks } from 'node:module';
const resolved = [];
registerHooks({ resolve(specifier, context, next) { const result = next(specifier, context); resolved.push(result.url); return result; } });
process.on('exit', () => process.stderr.write('\\n' + JSON.stringify({
  modules: resolved.length,
  lazy: ${JSON.stringify(LAZY)}.filter((name) => resolved.some((url) => url.includes('/node_modules/' + name + '/'))),
})));
process.argv = ['node', 'switchboard', ...${JSON.stringify(argv)}];
await import(${JSON.stringify(path.join(root, entry))});
`;
  const { stderr } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', probe], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', ...env },
  });
  return JSON.parse(stderr.trim().split('\n').at(-1)!) as { modules: number; lazy: string[] };
}

t.test('loading the gateway loads none of them', async (t) => {
  const { modules, lazy } = await resolvedBy('src/app.ts', []);
  t.ok(modules > 100, `the probe saw the gateway's modules (${modules})`);
  t.same(lazy, []);
});

t.test('a CLI command that uses none of them loads none of them', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const { modules, lazy } = await resolvedBy('src/cli/main.ts', ['user', 'list'], { REDIS_URL: redis.url });
  t.ok(modules > 100, `the probe saw the CLI's modules (${modules})`);
  t.same(lazy, []);
});
