import { load, type CheerioAPI } from 'cheerio';
import { isTag, type AnyNode } from 'domhandler';
import { collapseWhitespace, sectionsFromHtml } from './html-sections.ts';
import { pageFromSections, type ParsedDocument } from './parsed-document.ts';

// Never content: code, media, form controls, and page chrome wherever it appears.
const ALWAYS_DROPPED = [
  'script',
  'style',
  'noscript',
  'template',
  'svg',
  'canvas',
  'iframe',
  'object',
  'embed',
  'audio',
  'video',
  'button',
  'select',
  'input',
  'textarea',
  'nav',
  'dialog',
  'menu',
  '[role="navigation"]',
  '[role="banner"]',
  '[role="contentinfo"]',
  '[role="search"]',
  '[role="dialog"]',
  '[role="alertdialog"]',
  '[role="menu"]',
  '[role="menubar"]',
].join(', ');
// header, footer and aside are page chrome at page level, but part of the content inside an article.
const PAGE_LEVEL_CHROME = 'header, footer, aside, [role="complementary"]';
const CONTENT_CONTAINERS = 'article, main, [role="main"], section';
const HIDDEN = '[hidden], [aria-hidden="true" i]';
const HIDDEN_STYLE = /(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)\s*(?:!\s*important\s*)?(?:;|$)/i;
// Whole class or id words (split on `-`, `_` and spaces) that mark boilerplate blocks.
const BOILERPLATE_WORDS = new Set([
  'breadcrumb',
  'breadcrumbs',
  'consent',
  'cookie',
  'cookies',
  'gdpr',
  'newsletter',
  'popup',
  'modal',
  'advert',
  'advertisement',
]);
// Whole class names or ids of screen-reader-only text, skip links and share widgets.
const BOILERPLATE_CLASSES = new Set([
  'sr-only',
  'visually-hidden',
  'visuallyhidden',
  'screen-reader-text',
  'skip-link',
  'skip-to-content',
  'share',
  'sharing',
  'share-buttons',
  'social',
  'social-share',
  'social-links',
]);
const NEVER_BOILERPLATE = new Set(['html', 'body', 'main', 'article']);

/**
 * Extracts a web page's main content as a one-page document: navigation, page headers and footers,
 * scripts, styles, form controls, cookie banners and similar boilerplate, and hidden elements
 * (`hidden`, `aria-hidden="true"`, inline `display:none` / `visibility:hidden`) are dropped; headings
 * stay as the sections' structure. The content root is `main` (or `role="main"`), else a single
 * `article`, else `body`. The title is `og:title`, else `<title>`, else the first `h1`.
 */
export function extractMainContent(html: string): ParsedDocument {
  const $ = load(html);
  const declaredTitle = collapseWhitespace($('meta[property="og:title"]').attr('content') ?? '') || titleElement($);
  dropNonContent($);
  const root = contentRoot($);
  const title = declaredTitle || collapseWhitespace($(root).find('h1').first().text());
  return { title, pages: [pageFromSections(sectionsFromHtml(root))] };
}

function titleElement($: CheerioAPI): string {
  return collapseWhitespace($('title').first().text());
}

function dropNonContent($: CheerioAPI): void {
  $(HIDDEN).remove();
  $('[style]')
    .filter((_, element) => HIDDEN_STYLE.test($(element).attr('style') ?? ''))
    .remove();
  $(ALWAYS_DROPPED).remove();
  $(PAGE_LEVEL_CHROME)
    .filter((_, element) => $(element).parents(CONTENT_CONTAINERS).length === 0)
    .remove();
  $('[class], [id]')
    .filter((_, element) => isBoilerplate($, element))
    .remove();
}

function isBoilerplate($: CheerioAPI, element: AnyNode): boolean {
  const node = $(element);
  if (!isTag(element) || NEVER_BOILERPLATE.has(element.name)) return false;
  const names = `${node.attr('class') ?? ''} ${node.attr('id') ?? ''}`.toLowerCase().split(/\s+/);
  const words = names.flatMap((name) => name.split(/[_-]+/));
  if (!names.some((name) => BOILERPLATE_CLASSES.has(name)) && !words.some((word) => BOILERPLATE_WORDS.has(word))) {
    return false;
  }
  // A wrapper that holds the page's main content is never dropped for its name.
  return node.find('main, article, [role="main"]').length === 0;
}

function contentRoot($: CheerioAPI): AnyNode {
  const main = $('main, [role="main"]').get(0);
  if (main) return main;
  const articles = $('article');
  if (articles.length === 1) return articles.get(0)!;
  return $('body').get(0) ?? $.root().get(0)!;
}
