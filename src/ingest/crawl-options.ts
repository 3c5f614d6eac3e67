import type { Egress } from '../net/ssrf-guard.ts';

/** Limits and switches of one crawl. */
export interface CrawlOptions {
  /** Lifts the SSRF guard so that private and loopback hosts may be crawled (`CRAWL_ALLOW_PRIVATE`). */
  allowPrivate: boolean;
  /** How hosts are resolved and reached (tests inject a fake resolver); the system's by default. */
  egress?: Egress;
  /** Pages kept, at most. */
  maxPages: number;
  /** Link hops from the start URL or a sitemap entry (both depth 0). */
  maxDepth: number;
  /** Largest page body read, decompressed; larger pages fail. */
  maxPageBytes: number;
  /** Per request (each redirect hop afresh). */
  requestTimeoutMs: number;
  /** The whole crawl; pages in flight when it runs out are abandoned. */
  totalTimeMs: number;
  /** Requests in flight at once (1 when robots.txt sets a Crawl-delay). */
  concurrency: number;
  maxRedirects: number;
  /** The longest robots.txt `Crawl-delay` honoured; a longer one is cut to this. */
  maxCrawlDelayMs: number;
}

/** 200 pages, 3 hops, 2 MB a page, 15 s a request, 10 minutes in all, 4 at once, 5 redirects. */
export const DEFAULT_CRAWL_OPTIONS: CrawlOptions = {
  allowPrivate: false,
  maxPages: 200,
  maxDepth: 3,
  maxPageBytes: 2 * 1024 * 1024,
  requestTimeoutMs: 15_000,
  totalTimeMs: 10 * 60_000,
  concurrency: 4,
  maxRedirects: 5,
  maxCrawlDelayMs: 5_000,
};

/** Merges options with the defaults; throws `RangeError` naming the first option out of range. */
export function crawlOptions(options: Partial<CrawlOptions> = {}): CrawlOptions {
  const merged = { ...DEFAULT_CRAWL_OPTIONS, ...options };
  const minimums: Array<[Exclude<keyof CrawlOptions, 'allowPrivate' | 'egress'>, number]> = [
    ['maxPages', 1],
    ['maxDepth', 0],
    ['maxPageBytes', 1],
    ['requestTimeoutMs', 1],
    ['totalTimeMs', 1],
    ['concurrency', 1],
    ['maxRedirects', 0],
    ['maxCrawlDelayMs', 0],
  ];
  for (const [name, minimum] of minimums) {
    const value = merged[name];
    if (typeof value !== 'number' || !Number.isInteger(value) || value < minimum) {
      throw new RangeError(`crawl option ${name} must be an integer >= ${minimum}, got ${String(value)}`);
    }
  }
  return merged;
}
