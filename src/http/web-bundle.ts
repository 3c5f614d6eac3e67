import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/** A bundled browser script, ready to serve. */
export interface WebBundle {
  body: Buffer;
  etag: string;
}

/**
 * Browser scripts under web/ (plain TypeScript), bundled and minified by esbuild the first time
 * they are asked for and kept in memory: no build step, and the served bundle always matches the
 * sources of the running version.
 */
export class WebBundles {
  private readonly cache = new Map<string, Promise<WebBundle>>();

  /** `entry` is relative to web/, e.g. `widget/widget.ts`. */
  get(entry: string): Promise<WebBundle> {
    let bundle = this.cache.get(entry);
    if (!bundle) {
      bundle = bundleOf(entry);
      // A failed build is not cached: the next request tries again (and logs again).
      bundle.catch(() => this.cache.delete(entry));
      this.cache.set(entry, bundle);
    }
    return bundle;
  }
}

async function bundleOf(entry: string): Promise<WebBundle> {
  const result = await build({
    entryPoints: [fileURLToPath(new URL(`../../web/${entry}`, import.meta.url))],
    bundle: true,
    minify: true,
    format: 'iife',
    target: 'es2020',
    write: false,
    logLevel: 'silent',
  });
  const body = Buffer.from(result.outputFiles[0]!.contents);
  return { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}
