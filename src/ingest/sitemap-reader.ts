import { gunzipSync } from 'node:zlib';
import { load } from 'cheerio';
import { FetchError } from './ingest-errors.ts';
import type { FetchedResource } from './page-fetcher.ts';

/** Bounds on reading a site's sitemaps. */
export interface SitemapLimits {
  /** Sitemap files read, index files included. */
  maxFiles: number;
  /** Page URLs collected. */
  maxUrls: number;
  /** Largest sitemap, unpacked. */
  maxBytes: number;
}

/** The page URLs found, and the sitemaps that could not be read. */
export interface SitemapResult {
  urls: string[];
  /** Each page's `<lastmod>` where the sitemap gives one, as written. */
  lastmod: Map<string, string>;
  errors: Array<{ url: string; message: string; statusCode: number | null }>;
}

/**
 * Reads sitemaps (`<urlset>`) and sitemap index files (`<sitemapindex>`, followed breadth-first),
 * gzipped or not, from the given roots, keeping the files and page URLs that `inScope` accepts. A
 * root that does not exist (404 or 410) is not an error: `/sitemap.xml` is only a guess.
 */
export async function readSitemaps(
  roots: string[],
  fetch: (url: string) => Promise<FetchedResource>,
  inScope: (url: string) => boolean,
  limits: SitemapLimits,
): Promise<SitemapResult> {
  const queue = [...new Set(roots.filter(inScope))];
  const seen = new Set(queue);
  const urls = new Set<string>();
  const lastmod = new Map<string, string>();
  const errors: SitemapResult['errors'] = [];
  for (let read = 0; queue.length > 0 && read < limits.maxFiles && urls.size < limits.maxUrls; read += 1) {
    const url = queue.shift()!;
    try {
      const { pages, sitemaps } = parseSitemap(unpack(await fetch(url), limits.maxBytes));
      for (const page of pages.filter(({ loc }) => inScope(loc))) {
        if (urls.size >= limits.maxUrls) break;
        urls.add(page.loc);
        if (page.lastmod) lastmod.set(page.loc, page.lastmod);
      }
      for (const sitemap of sitemaps.filter((next) => inScope(next) && !seen.has(next))) {
        seen.add(sitemap);
        queue.push(sitemap);
      }
    } catch (error) {
      const statusCode = error instanceof FetchError ? error.statusCode : null;
      if (roots.includes(url) && (statusCode === 404 || statusCode === 410)) continue;
      errors.push({ url, message: `sitemap: ${(error as Error).message}`, statusCode });
    }
  }
  return { urls: [...urls], lastmod, errors };
}

function unpack(resource: FetchedResource, maxBytes: number): string {
  const body = resource.body ?? Buffer.alloc(0);
  const gzipped = body[0] === 0x1f && body[1] === 0x8b;
  return (gzipped ? gunzipSync(body, { maxOutputLength: maxBytes }) : body).toString('utf8');
}

function parseSitemap(xml: string): { pages: Array<{ loc: string; lastmod: string }>; sitemaps: string[] } {
  const $ = load(xml, { xml: true });
  const pages = $('urlset > url')
    .toArray()
    .map((entry) => ({
      loc: $(entry).children('loc').text().trim(),
      lastmod: $(entry).children('lastmod').text().trim(),
    }))
    .filter(({ loc }) => loc !== '');
  const sitemaps = $('sitemapindex > sitemap > loc')
    .toArray()
    .map((loc) => $(loc).text().trim())
    .filter((loc) => loc !== '');
  return { pages, sitemaps };
}
