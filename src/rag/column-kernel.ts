/**
 * The column scan's WebAssembly kernel (column-kernel.wat, assembled into column-kernel.wasm): one
 * instance per column scan, each with its own linear memory, in which the scan keeps its columns
 * and partial scores so that the kernel can read them.
 */

import { readFileSync } from 'node:fs';

const WASM_FILE = new URL('./column-kernel.wasm', import.meta.url);

/** A WebAssembly memory: its bytes, and growth by 64 KiB pages (which replaces `buffer`). */
export interface KernelMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}

/** A kernel instance and its memory. Addresses are byte offsets into the memory. */
export interface ColumnKernel {
  memory: KernelMemory;
  /**
   * out[i] = (first ? 0 : out[i]) + Σ w_k · column_k[i] for k < 8 and i < rows (a multiple of 8),
   * out in f32, the columns in i16; `args` holds the eight column addresses (i32) and then the
   * eight weights (f32).
   */
  accumulate(out: number, args: number, rows: number, first: number): void;
}

/** The WebAssembly API as far as it is used here (TypeScript declares it only in its DOM library). */
interface WebAssemblyApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
}

const { WebAssembly } = globalThis as unknown as { WebAssembly: WebAssemblyApi };

/** The module, compiled on first use (the file is under 1 KB). */
let compiled: object | undefined;

/** A new kernel instance with a memory of its own (one 64 KiB page, grown by the caller). */
export function createColumnKernel(): ColumnKernel {
  compiled ??= new WebAssembly.Module(readFileSync(WASM_FILE));
  const { exports } = new WebAssembly.Instance(compiled, {});
  return {
    memory: exports.memory as KernelMemory,
    accumulate: exports.accumulate as ColumnKernel['accumulate'],
  };
}
