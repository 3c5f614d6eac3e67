import { load } from 'cheerio';

/** What a page tells a crawler: its links, and its robots meta directives. */
export interface PageLinks {
  /** `href`s of `<a>` and `<area>` elements not marked `rel="nofollow"`, resolved and deduplicated. */
  links: string[];
  /** `<meta name="robots" content="noindex">` (or `none`): the page is not to be kept. */
  noindex: boolean;
  /** `<meta name="robots" content="nofollow">` (or `none`): its links are not to be followed. */
  nofollow: boolean;
}

/**
 * Reads the links of a whole HTML page (navigation included: that is how a site's pages are found)
 * against its `<base href>` or its own URL, and the robots meta directives addressed to all robots
 * or to SwitchboardBot.
 */
export function extractLinks(html: string, pageUrl: string): PageLinks {
  const $ = load(html);
  const base = URL.parse($('base[href]').first().attr('href') ?? '', pageUrl)?.href ?? pageUrl;
  const links = new Set<string>();
  $('a[href], area[href]').each((_, element) => {
    const rel = ($(element).attr('rel') ?? '').toLowerCase().split(/\s+/);
    const url = rel.includes('nofollow') ? null : URL.parse($(element).attr('href')!, base);
    if (url) links.add(url.href);
  });
  const directives = $('meta[name="robots" i], meta[name="switchboardbot" i]')
    .toArray()
    .flatMap((meta) => ($(meta).attr('content') ?? '').toLowerCase().split(/\s*,\s*/));
  return {
    links: [...links],
    noindex: directives.includes('noindex') || directives.includes('none'),
    nofollow: directives.includes('nofollow') || directives.includes('none'),
  };
}
