import { iteratePaginatedAPI, type Client } from '@notionhq/client';

// A Notion page's body: its block tree, read through the SDK, and the Markdown it is indexed as.

/** The most Notion hands out per page of block children. */
const PAGE_SIZE = 100;

/**
 * A Notion block as `blocks.children.list` sends it: its `type` names the field that holds its
 * content (`paragraph: {rich_text, color}`, `to_do: {rich_text, checked}`, `table_row: {cells}`, …).
 */
export interface NotionBlock {
  id: string;
  type: string;
  has_children: boolean;
  in_trash?: boolean;
  archived?: boolean;
  [content: string]: unknown;
}

/** A block with the children read for it (none for child pages and databases: they are documents of their own). */
export interface NotionBlockNode {
  block: NotionBlock;
  children: NotionBlockNode[];
}

/** The text a page may still hold before it is refused, and the error to refuse it with. */
export interface TextBudget {
  left: number;
  over: () => Error;
}

/** Whether a page, database or block is in the trash (`archived` is the older name). */
export function trashed(item: { in_trash?: boolean; archived?: boolean }): boolean {
  return item.in_trash === true || item.archived === true;
}

/**
 * A block's (or page's) children, recursively for blocks with `has_children`, page by page, except
 * what child pages and databases hold: those are documents of their own. Trashed blocks are left
 * out. Each block's own text is taken from `budget`, when one is given.
 */
export async function readBlocks(
  notion: Client,
  blockId: string,
  budget?: TextBudget,
  signal?: AbortSignal,
): Promise<NotionBlockNode[]> {
  const blocks: NotionBlock[] = [];
  for await (const result of iteratePaginatedAPI(notion.blocks.children.list, {
    block_id: blockId,
    page_size: PAGE_SIZE,
  })) {
    signal?.throwIfAborted();
    if (!('type' in result) || trashed(result)) continue;
    const block = result as NotionBlock;
    if (budget) {
      budget.left -= Buffer.byteLength(blockText(block));
      if (budget.left < 0) throw budget.over();
    }
    blocks.push(block);
  }
  const nodes: NotionBlockNode[] = [];
  for (const block of blocks) {
    const separate = block.type === 'child_page' || block.type === 'child_database';
    const children = block.has_children && !separate ? await readBlocks(notion, block.id, budget, signal) : [];
    nodes.push({ block, children });
  }
  return nodes;
}

interface RichText {
  plain_text?: string;
}

/** The fields of block content that are read: rich text and the few others that carry words. */
interface BlockContent {
  rich_text?: RichText[];
  caption?: RichText[];
  checked?: boolean;
  language?: string;
  expression?: string;
  url?: string;
  cells?: RichText[][];
  icon?: { type?: string; emoji?: string } | null;
}

const HEADINGS: Record<string, string> = { heading_1: '#', heading_2: '##', heading_3: '###', heading_4: '####' };
const LIST_ITEMS = new Set(['bulleted_list_item', 'numbered_list_item', 'to_do']);
/** Blocks that only hold other blocks: their children are rendered in their place. */
const CONTAINERS = new Set([
  'column_list',
  'column',
  'synced_block',
  'tab',
  'template',
  'meeting_notes',
  'transcription',
]);
const LINKS = new Set(['bookmark', 'embed', 'link_preview']);
const MEDIA = new Set(['image', 'video', 'pdf', 'file', 'audio']);

/** Rich text as the words it shows. */
export function plainText(rich: RichText[] | undefined): string {
  return (rich ?? []).map((item) => item.plain_text ?? '').join('');
}

function contentOf(block: NotionBlock): BlockContent {
  const content = block[block.type];
  return typeof content === 'object' && content !== null ? content : {};
}

/** The words a block itself holds (not its children's), as counted against the document size cap. */
function blockText(block: NotionBlock): string {
  const content = contentOf(block);
  const cells = (content.cells ?? []).map(plainText).join(' ');
  return [plainText(content.rich_text), plainText(content.caption), content.expression ?? '', cells].join('');
}

/**
 * A page's blocks as Markdown: headings, paragraphs, bulleted, numbered and to-do lists (nested),
 * toggles, quotes and callouts, code, tables, dividers, equations, links and media captions. Child
 * pages and databases, links to pages, tables of contents, breadcrumbs and unsupported blocks are left
 * out; columns and synced blocks give their contents.
 */
export function blocksToMarkdown(nodes: NotionBlockNode[]): string {
  const parts: { text: string; list: string | null }[] = [];
  let number = 0;
  for (const node of nodes) {
    const type = node.block.type;
    number = type === 'numbered_list_item' ? number + 1 : 0;
    const text = CONTAINERS.has(type) ? blocksToMarkdown(node.children) : renderBlock(node, number);
    if (text !== '') parts.push({ text, list: LIST_ITEMS.has(type) ? type : null });
  }
  // The items of one list stay on consecutive lines; every other block is its own paragraph.
  const joint = (index: number) => {
    const list = parts[index]!.list;
    return index === 0 ? '' : list !== null && list === parts[index - 1]!.list ? '\n' : '\n\n';
  };
  return parts.map((part, index) => joint(index) + part.text).join('');
}

function renderBlock(node: NotionBlockNode, number: number): string {
  const { block, children } = node;
  const content = contentOf(block);
  const text = plainText(content.rich_text);
  const after = (own: string) => [own, blocksToMarkdown(children)].filter((part) => part !== '').join('\n\n');
  const type = block.type;
  if (HEADINGS[type]) return after(text === '' ? '' : `${HEADINGS[type]} ${oneLine(text)}`);
  switch (type) {
    case 'paragraph':
    case 'toggle':
      return after(text);
    case 'bulleted_list_item':
      return listItem('- ', text, node);
    case 'numbered_list_item':
      return listItem(`${number}. `, text, node);
    case 'to_do':
      return listItem(content.checked ? '- [x] ' : '- [ ] ', text, node);
    case 'quote':
      return prefixLines(after(text), '> ');
    case 'callout': {
      const emoji = content.icon?.type === 'emoji' && content.icon.emoji ? `${content.icon.emoji} ` : '';
      return prefixLines(after(text === '' ? '' : `${emoji}${text}`), '> ');
    }
    case 'code':
      return codeBlock(text, content.language, plainText(content.caption));
    case 'table':
      return table(children);
    case 'divider':
      return '---';
    case 'equation':
      return content.expression ? `$$\n${content.expression}\n$$` : '';
    default:
      return after(linkOrCaption(type, content));
  }
}

function listItem(marker: string, text: string, node: NotionBlockNode): string {
  const indent = ' '.repeat(marker.startsWith('- ') ? 2 : marker.length);
  const own = `${marker}${indentLines(text, indent).trimStart()}`;
  const nested = blocksToMarkdown(node.children);
  if (nested === '') return own;
  // A nested list follows its item's line; a paragraph there would run on into the item's text.
  const joint = LIST_ITEMS.has(node.children[0]!.block.type) ? '\n' : '\n\n';
  return `${own}${joint}${indentLines(nested, indent)}`;
}

function codeBlock(code: string, language: string | undefined, caption: string): string {
  // A fence longer than any run of backticks in the code, so the code cannot close it.
  const longest = Math.max(2, ...(code.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  const lang = language && language !== 'plain text' ? language.replace(/\s+/g, '-') : '';
  const block = `${fence}${lang}\n${code}\n${fence}`;
  return caption === '' ? block : `${block}\n\n${caption}`;
}

/** A table's rows (its `table_row` children) as a Markdown table; the first row is the header. */
function table(rows: NotionBlockNode[]): string {
  const cells = rows
    .filter((row) => row.block.type === 'table_row')
    .map((row) => (contentOf(row.block).cells ?? []).map((cell) => tableCell(plainText(cell))));
  if (cells.length === 0) return '';
  const width = Math.max(...cells.map((row) => row.length));
  const line = (row: string[]) => `| ${Array.from({ length: width }, (_, i) => row[i] ?? '').join(' | ')} |`;
  const [header, ...body] = cells;
  return [line(header!), line(Array.from({ length: width }, () => '---')), ...body.map(line)].join('\n');
}

function tableCell(text: string): string {
  return oneLine(text).replace(/\|/g, '\\|');
}

/** Bookmarks and embeds as links; media by their captions (their file links expire within the hour). */
function linkOrCaption(type: string, content: BlockContent): string {
  const caption = plainText(content.caption);
  if (LINKS.has(type) && content.url) return `[${caption || content.url}](${content.url})`;
  if (MEDIA.has(type)) return caption;
  return '';
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

function indentLines(text: string, indent: string): string {
  return text
    .split('\n')
    .map((line) => (line === '' ? line : `${indent}${line}`))
    .join('\n');
}

function prefixLines(text: string, prefix: string): string {
  if (text === '') return '';
  return text
    .split('\n')
    .map((line) => (line === '' ? prefix.trimEnd() : `${prefix}${line}`))
    .join('\n');
}
