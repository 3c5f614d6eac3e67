// Links to files the crawler would fetch only to find they are not HTML.
const NON_PAGE_EXTENSION =
  /\.(?:7z|avi|bmp|css|csv|docx?|eot|exe|gif|gz|ico|jpe?g|js|json|mjs|mov|mp3|mp4|ogg|otf|pdf|png|pptx?|rar|rss|svg|tar|tgz|tiff?|ttf|txt|wav|webm|webp|woff2?|xlsx?|xml|zip)$/i;

/**
 * The pages a crawl may visit: http(s) URLs on the start URL's host (host name and port; the scheme
 * may change, so an http start follows its https pages).
 */
export class SiteScope {
  readonly host: string;

  constructor(startUrl: URL) {
    this.host = startUrl.host;
  }

  /** True when the URL belongs to the site. */
  contains(url: URL): boolean {
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.host === this.host;
  }

  /** The page URL a link points to, fragment removed, or null when it is off-site or not a page. */
  pageUrl(href: string, base: string): string | null {
    const url = URL.parse(href.trim(), base);
    if (!url || !this.contains(url) || url.username || url.password) return null;
    if (NON_PAGE_EXTENSION.test(url.pathname)) return null;
    url.hash = '';
    return url.href;
  }
}
