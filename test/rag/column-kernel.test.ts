import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { createColumnKernel } from '../../src/rag/column-kernel.ts';

const SOURCE = new URL('../../src/rag/column-kernel.wat', import.meta.url);
const BINARY = new URL('../../src/rag/column-kernel.wasm', import.meta.url);

t.test('accumulate adds eight weighted 16-bit columns in single precision, or starts from zero', async (t) => {
  const kernel = createColumnKernel();
  const rows = 16;
  const floats = new Float32Array(kernel.memory.buffer);
  const ints = new Int32Array(kernel.memory.buffer);
  const shorts = new Int16Array(kernel.memory.buffer);
  const out = 1024;
  const column = (k: number) => 2048 + k * rows * 2;
  const weights = [0.5, -1.25, 3, 0.1, -0.7, 2.5, 0, 1e-3];
  const value = (k: number, i: number) => Math.round((32767 * Math.sin(k * 31 + i)) / (i + 1));
  for (let k = 0; k < 8; k++) {
    ints[k] = column(k);
    floats[8 + k] = weights[k]!;
    for (let i = 0; i < rows; i++) shorts[column(k) / 2 + i] = value(k, i);
  }
  t.equal(shorts[column(0) / 2 + 1], 13786, 'the columns hold integers');
  floats.fill(7, out / 4, out / 4 + rows);
  // The kernel's order of operations in float32: acc + w0·c0, then + w1·c1, and so on.
  const expected = (start: number) =>
    Array.from({ length: rows }, (_, i) => {
      let sum = Math.fround(start);
      for (let k = 0; k < 8; k++) sum = Math.fround(sum + Math.fround(Math.fround(weights[k]!) * value(k, i)));
      return sum;
    });
  kernel.accumulate(out, 0, rows, 0);
  t.same(Array.from(floats.subarray(out / 4, out / 4 + rows)), expected(7));
  kernel.accumulate(out, 0, rows, 1);
  t.same(Array.from(floats.subarray(out / 4, out / 4 + rows)), expected(0));
  t.equal(kernel.memory.buffer.byteLength, 65536, 'one page until the caller grows it');
  t.not(createColumnKernel().memory, kernel.memory, 'each instance has its own memory');
});

const wat2wasm = spawnSync('wat2wasm', ['--version'], { encoding: 'utf8' });
t.test(
  'the committed binary is the assembled source',
  {
    skip:
      wat2wasm.status === 0
        ? false
        : 'wat2wasm is not installed (Debian package wabt): the committed column-kernel.wasm is used as it is',
  },
  async (t) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'column-kernel-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const built = path.join(dir, 'column-kernel.wasm');
    const run = spawnSync('wat2wasm', [SOURCE.pathname, '-o', built], { encoding: 'utf8' });
    t.equal(run.stderr, '');
    t.ok(readFileSync(built).equals(readFileSync(BINARY)));
  },
);
