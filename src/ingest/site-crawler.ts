import { waitUnlessAborted } from '../wait-unless-aborted.ts';
import { crawlOptions, type CrawlOptions } from './crawl-options.ts';
import { extractMainContent } from './html-extractor.ts';
import { FetchError } from './ingest-errors.ts';
import { extractLinks } from './link-extractor.ts';
import { bodyText, fetchResource, type FetchedResource, type FetchOptions, type Validators } from './page-fetcher.ts';
import type { ParsedDocument } from './parsed-document.ts';
import { loadRobotsPolicy, type RobotsPolicy } from './robots-policy.ts';
import { SiteScope } from './site-scope.ts';
import { readSitemaps } from './sitemap-reader.ts';

/** A page kept by the crawl. */
export interface CrawledPage {
  /** The URL the content came from (after redirects), without fragment. */
  url: string;
  /** The page's title, or its URL when it has none. */
  title: string;
  document: ParsedDocument;
  depth: number;
  /** The page's `ETag` / `Last-Modified`, for a conditional request next time. */
  validators: Validators;
  /** Its sitemap `<lastmod>`, '' when the sitemap gives none. */
  lastmod: string;
  /** The links it gave the crawl (none when `nofollow`), so an unchanged page still leads on. */
  links: string[];
}

/** What an earlier crawl kept of a page: enough to ask whether it changed, and where it led. */
export interface PreviousPage {
  validators: Validators;
  lastmod: string;
  links: string[];
}

/** A page an earlier crawl kept that has not changed since: not modified (304) or the same sitemap `<lastmod>`. */
export interface UnchangedPage {
  url: string;
  depth: number;
  /** Its sitemap `<lastmod>` now ('' when the sitemap gives none), to record in place of the old one. */
  lastmod: string;
}

/** A page, sitemap or robots.txt that could not be fetched; the crawl goes on without it. */
export interface CrawlError {
  url: string;
  message: string;
  /** The HTTP status when the server answered with an error, else null. */
  statusCode: number | null;
}

/** Progress after each page: URLs done (kept, failed or skipped) and still queued. */
export interface CrawlProgress {
  done: number;
  queued: number;
  pages: number;
  failed: number;
}

/** Callbacks and cancellation from the caller. */
export interface CrawlHooks {
  onProgress?: (progress: CrawlProgress) => void;
  /** Aborting ends the crawl; what was kept so far is returned. */
  signal?: AbortSignal;
  /**
   * What an earlier crawl kept of a URL. A page whose sitemap `<lastmod>` is the one recorded is not
   * requested at all; others are requested conditionally, and a 304 keeps the page as it was. Either
   * way it is reported in `unchanged` and its recorded links are followed.
   */
  previous?: (url: string) => PreviousPage | undefined;
}

/** Why the crawl ended: nothing left to visit, or a limit or the caller stopped it. */
export type CrawlEnd = 'complete' | 'max-pages' | 'time-limit' | 'aborted';

/** The pages kept, the per-URL errors, and counts. */
export interface CrawlResult {
  pages: CrawledPage[];
  /** Pages kept as an earlier crawl read them (see `CrawlHooks.previous`); they count as kept. */
  unchanged: UnchangedPage[];
  errors: CrawlError[];
  /** `skipped`: disallowed by robots.txt, not HTML, `noindex`, or a redirect to a page already seen. */
  counts: { pages: number; failed: number; skipped: number; queued: number };
  endedBy: CrawlEnd;
}

interface QueuedPage {
  url: string;
  depth: number;
}

const PAGE_ACCEPT = 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.1';
const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);
const ROBOTS_MAX_BYTES = 512 * 1024;
const SITEMAP_MAX_BYTES = 50 * 1024 * 1024;
const SITEMAP_MAX_FILES = 50;
// Discovered URLs kept waiting, per page the crawl may keep: bounds memory on link-heavy sites.
const QUEUE_PER_PAGE = 50;
// Links recorded per page for the next crawl.
const LINKS_KEPT = 500;

/**
 * Crawls one site from `startUrl`: the start page and the entries of its sitemaps (`/sitemap.xml`
 * and those robots.txt names, index files followed) are visited breadth-first, then the same-host
 * links of every HTML page, up to `maxDepth` hops, `maxPages` pages and `totalTimeMs`. robots.txt is
 * obeyed for `SwitchboardBot/1.0`, including `Crawl-delay` and robots meta tags. Every request goes
 * through the SSRF-guarded fetcher. A page that fails is recorded in `errors` and the crawl goes on.
 * Throws only for a start URL that is not http(s) or for options out of range.
 */
export async function crawlSite(
  startUrl: string,
  options: Partial<CrawlOptions> = {},
  hooks: CrawlHooks = {},
): Promise<CrawlResult> {
  const settings = crawlOptions(options);
  const start = URL.parse(startUrl);
  if (!start || (start.protocol !== 'http:' && start.protocol !== 'https:')) {
    throw new FetchError(startUrl, 'the start URL must be an http:// or https:// URL');
  }
  start.hash = '';
  return new SiteCrawl(start, settings, hooks).run();
}

class SiteCrawl {
  private readonly scope: SiteScope;
  private readonly controller = new AbortController();
  private readonly queue: QueuedPage[] = [];
  private readonly seen = new Set<string>();
  private readonly pages: CrawledPage[] = [];
  private readonly unchanged: UnchangedPage[] = [];
  private readonly lastmod = new Map<string, string>();
  private readonly errors: CrawlError[] = [];
  private robots: RobotsPolicy | null = null;
  private endedBy: CrawlEnd | null = null;
  private failed = 0;
  private skipped = 0;
  private done = 0;
  private inFlight = 0;
  private waiting: Array<() => void> = [];
  private readonly start: URL;
  private readonly settings: CrawlOptions;
  private readonly hooks: CrawlHooks;

  constructor(start: URL, settings: CrawlOptions, hooks: CrawlHooks) {
    this.start = start;
    this.settings = settings;
    this.hooks = hooks;
    this.scope = new SiteScope(start);
  }

  async run(): Promise<CrawlResult> {
    const timer = setTimeout(() => this.stop('time-limit'), this.settings.totalTimeMs);
    const onAbort = () => this.stop('aborted');
    if (this.hooks.signal?.aborted) this.stop('aborted');
    this.hooks.signal?.addEventListener('abort', onAbort);
    try {
      await this.seed();
      const workers = this.robots!.crawlDelayMs > 0 ? 1 : this.settings.concurrency;
      await Promise.all(Array.from({ length: workers }, () => this.work()));
    } finally {
      clearTimeout(timer);
      this.hooks.signal?.removeEventListener('abort', onAbort);
    }
    return this.result();
  }

  private async seed(): Promise<void> {
    this.robots = await loadRobotsPolicy(this.start.origin, (url) => this.fetch(url, 'robots'));
    if (this.endedBy) return;
    const unavailable = this.robots.unavailable;
    if (unavailable) {
      this.errors.push({ url: new URL('/robots.txt', this.start).href, message: unavailable, statusCode: null });
      return;
    }
    this.enqueue(this.start.href, 0);
    const roots = [...this.robots.sitemaps, new URL('/sitemap.xml', this.start).href];
    const inScope = (url: string) => URL.canParse(url) && this.scope.contains(new URL(url));
    const limits = { maxFiles: SITEMAP_MAX_FILES, maxUrls: this.queueLimit(), maxBytes: SITEMAP_MAX_BYTES };
    const sitemaps = await readSitemaps(roots, (url) => this.fetch(url, 'sitemap'), inScope, limits);
    if (this.endedBy) return;
    this.errors.push(...sitemaps.errors);
    for (const [url, lastmod] of sitemaps.lastmod) this.lastmod.set(url, lastmod);
    for (const url of sitemaps.urls) this.enqueue(url, 0);
  }

  private async work(): Promise<void> {
    while (!this.endedBy) {
      if (this.kept() >= this.settings.maxPages) {
        if (this.queue.length > 0) this.endedBy = 'max-pages';
        return;
      }
      // Only as many pages are fetched at once as could still be kept.
      const next = this.kept() + this.inFlight < this.settings.maxPages ? this.queue.shift() : undefined;
      if (!next) {
        if (this.inFlight === 0) return;
        // Idle until a page in flight finishes: it may queue new links.
        await new Promise<void>((resolve) => this.waiting.push(resolve));
        continue;
      }
      this.inFlight += 1;
      await this.visit(next);
      this.inFlight -= 1;
      this.done += 1;
      this.report();
      this.wake();
      await this.politeDelay();
    }
  }

  private async visit(page: QueuedPage): Promise<void> {
    if (!this.robots!.isAllowed(page.url)) {
      this.skipped += 1;
      // Other pages are skipped quietly; a start page robots.txt forbids is why nothing was crawled.
      if (page.url === this.start.href) {
        this.errors.push({ url: page.url, message: 'robots.txt disallows this page', statusCode: null });
      }
      return;
    }
    const before = this.hooks.previous?.(page.url);
    const lastmod = this.lastmod.get(page.url) ?? '';
    if (before && lastmod !== '' && before.lastmod === lastmod) {
      this.keepUnchanged(page, before, lastmod);
      return;
    }
    try {
      const resource = await this.fetch(page.url, 'page', before?.validators);
      if (resource.statusCode === 304) this.keepUnchanged(page, before!, lastmod);
      else this.keep(page, resource, lastmod);
    } catch (error) {
      // Requests cut short by the time limit or the caller are not the site's failures.
      if (this.endedBy) return;
      this.failed += 1;
      const statusCode = error instanceof FetchError ? error.statusCode : null;
      this.errors.push({ url: page.url, message: (error as Error).message, statusCode });
    }
  }

  private keepUnchanged(page: QueuedPage, before: PreviousPage, lastmod: string): void {
    if (page.depth < this.settings.maxDepth) {
      for (const link of before.links) this.enqueue(link, page.depth + 1);
    }
    if (this.kept() >= this.settings.maxPages) {
      this.skipped += 1;
      return;
    }
    this.unchanged.push({ url: page.url, depth: page.depth, lastmod });
  }

  private keep(page: QueuedPage, resource: FetchedResource, lastmod: string): void {
    const url = resource.url.replace(/#.*$/, '');
    const redirectedToSeen = url !== page.url && this.seen.has(url);
    if (!resource.body || redirectedToSeen || !this.robots!.isAllowed(url)) {
      this.skipped += 1;
      return;
    }
    this.seen.add(url);
    const html = bodyText(resource);
    const extracted = extractLinks(html, url);
    const links = extracted.nofollow ? [] : extracted.links;
    if (page.depth < this.settings.maxDepth) {
      for (const link of links) this.enqueue(link, page.depth + 1);
    }
    if (extracted.noindex || this.kept() >= this.settings.maxPages) {
      this.skipped += 1;
      return;
    }
    const document = extractMainContent(html);
    this.pages.push({
      url,
      title: document.title || url,
      document,
      depth: page.depth,
      validators: resource.validators,
      lastmod: url === page.url ? lastmod : '',
      links: links.slice(0, LINKS_KEPT),
    });
  }

  private enqueue(href: string, depth: number): void {
    const url = depth === 0 && href === this.start.href ? href : this.scope.pageUrl(href, this.start.href);
    if (!url || this.seen.has(url) || this.queue.length >= this.queueLimit()) return;
    this.seen.add(url);
    this.queue.push({ url, depth });
  }

  /** Pages kept: read now, or unchanged since the earlier crawl. */
  private kept(): number {
    return this.pages.length + this.unchanged.length;
  }

  private fetch(url: string, kind: 'robots' | 'sitemap' | 'page', validators?: Validators): Promise<FetchedResource> {
    const options: FetchOptions = {
      allowPrivate: this.settings.allowPrivate,
      egress: this.settings.egress,
      timeoutMs: this.settings.requestTimeoutMs,
      maxRedirects: this.settings.maxRedirects,
      signal: this.controller.signal,
      accept: kind === 'page' ? PAGE_ACCEPT : kind === 'robots' ? 'text/plain' : 'application/xml, text/xml, */*',
      maxBytes: kind === 'page' ? this.settings.maxPageBytes : kind === 'robots' ? ROBOTS_MAX_BYTES : SITEMAP_MAX_BYTES,
    };
    // robots.txt may redirect anywhere (RFC 9309); pages and sitemaps stay on the site.
    if (kind !== 'robots') options.allowRedirect = (target) => this.scope.contains(target);
    if (kind === 'page') options.wantsBody = (type) => HTML_TYPES.has(type);
    if (validators && (validators.etag || validators.lastModified)) options.validators = validators;
    return fetchResource(url, options);
  }

  private async politeDelay(): Promise<void> {
    const delay = Math.min(this.robots!.crawlDelayMs, this.settings.maxCrawlDelayMs);
    if (delay === 0 || this.endedBy) return;
    await waitUnlessAborted(delay, this.controller.signal);
  }

  private report(): void {
    const progress = { done: this.done, queued: this.queue.length, pages: this.kept(), failed: this.failed };
    try {
      this.hooks.onProgress?.(progress);
    } catch (error) {
      // A broken progress callback must not end the crawl; it is reported with the results.
      this.errors.push({
        url: this.start.href,
        message: `progress callback: ${(error as Error).message}`,
        statusCode: null,
      });
    }
  }

  private wake(): void {
    for (const resolve of this.waiting.splice(0)) resolve();
  }

  private stop(reason: CrawlEnd): void {
    this.endedBy ??= reason;
    this.controller.abort();
    this.wake();
  }

  private queueLimit(): number {
    return this.settings.maxPages * QUEUE_PER_PAGE;
  }

  private result(): CrawlResult {
    return {
      pages: this.pages,
      unchanged: this.unchanged,
      errors: this.errors,
      counts: { pages: this.kept(), failed: this.failed, skipped: this.skipped, queued: this.queue.length },
      endedBy: this.endedBy ?? 'complete',
    };
  }
}
