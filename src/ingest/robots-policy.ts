import robotsParserModule from 'robots-parser';
import { FetchError } from './ingest-errors.ts';
import { bodyText, CRAWLER_USER_AGENT, type FetchedResource } from './page-fetcher.ts';

/** What a site's robots.txt allows SwitchboardBot. */
export interface RobotsPolicy {
  isAllowed(url: string): boolean;
  /** Sitemap URLs the file declares. */
  sitemaps: string[];
  /** The `Crawl-delay` asked of this robot, in milliseconds (0 when none). */
  crawlDelayMs: number;
  /** Why the whole site is off limits, when robots.txt could not be read (RFC 9309 §2.3.1.4). */
  unavailable: string | null;
}

// robots-parser's typings declare an ES default export, but the package is CommonJS whose
// `module.exports` is the function: Node hands that function over as the default import.
const robotsParser = robotsParserModule as unknown as typeof robotsParserModule.default;

const ALLOW_ALL: RobotsPolicy = { isAllowed: () => true, sitemaps: [], crawlDelayMs: 0, unavailable: null };

/**
 * Reads `<origin>/robots.txt` with robots-parser and applies RFC 9309: a 4xx answer (no file) allows
 * everything; a 5xx answer or a failed request means the site may not be crawled at all. The
 * `fetch` function is the crawler's guarded fetch.
 */
export async function loadRobotsPolicy(
  origin: string,
  fetch: (url: string) => Promise<FetchedResource>,
): Promise<RobotsPolicy> {
  const robotsUrl = new URL('/robots.txt', origin).href;
  let text: string;
  try {
    text = bodyText(await fetch(robotsUrl));
  } catch (error) {
    const status = error instanceof FetchError ? error.statusCode : null;
    if (status !== null && status >= 400 && status < 500) return ALLOW_ALL;
    const reason = `robots.txt could not be read (${(error as Error).message}), so the site was not crawled`;
    return { isAllowed: () => false, sitemaps: [], crawlDelayMs: 0, unavailable: reason };
  }
  const robots = robotsParser(robotsUrl, text);
  return {
    // robots-parser answers undefined for another origin's URL; the crawler never asks about one.
    isAllowed: (url) => robots.isAllowed(url, CRAWLER_USER_AGENT) !== false,
    sitemaps: robots.getSitemaps(),
    crawlDelayMs: Math.max(0, (robots.getCrawlDelay(CRAWLER_USER_AGENT) ?? 0) * 1000),
    unavailable: null,
  };
}
