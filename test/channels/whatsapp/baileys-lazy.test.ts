import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';

// Baileys is 15.5 MB of a gateway's heap: it is loaded when a linked device connects, never by
// loading the gateway (the WhatsApp tests with a linked device show it loaded then).

const root = path.resolve(import.meta.dirname, '../../..');
// Records every module the gateway's module graph resolves, then loads it.
const probe = `
import { registerHooks } from 'node:module';
const resolved = [];
registerHooks({ resolve(specifier, context, next) { const result = next(specifier, context); resolved.push(result.url); return result; } });
await import(${JSON.stringify(path.join(root, 'src/app.ts'))});
process.stdout.write(JSON.stringify({
  modules: resolved.length,
  baileys: resolved.filter((url) => url.includes('@whiskeysockets/baileys')),
}));
`;

t.test('loading the gateway does not load Baileys', async (t) => {
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', probe], { cwd: root });
  const { modules, baileys } = JSON.parse(stdout) as { modules: number; baileys: string[] };
  t.ok(modules > 100, `the probe saw the gateway's modules (${modules})`);
  t.same(baileys, []);
});
