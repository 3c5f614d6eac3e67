/**
 * Builds the retrieval eval's corpus, `test/fixtures/eval/corpus.jsonl`, from the API documentation
 * comments of the installed `@types/node` (DefinitelyTyped, MIT; see test/fixtures/eval/LICENSE.md).
 *
 * Each module (`fs`, `fs/promises`, `http`, …) becomes one `ParsedDocument`: a section per documented
 * declaration, its heading trail being the module, the containing classes, interfaces or namespaces
 * and the declaration (`fs > FileHandle > read()`), its blocks the paragraphs and code examples of the
 * JSDoc comment and its `@param`, `@returns`, `@throws`, `@default`, `@deprecated`, `@legacy` and
 * `@experimental` tags. The documents are chunked by the ingestion chunker (`chunkDocument`, ~300
 * tokens), and every chunk becomes one JSON line: `{"id", "title", "content"}`, ids being
 * `<module>:<position>`.
 *
 * The output depends only on the installed `@types/node` version (checked against EXPECTED_VERSION),
 * so rebuilding gives byte-identical lines and the question labels in questions.json stay valid.
 *
 *   node scripts/build-eval-corpus.ts
 */

import { readdirSync, readFileSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { chunkDocument } from '../src/ingest/chunk-document.ts';
import type { ParsedDocument, Section } from '../src/ingest/parsed-document.ts';
import { pageFromSections } from '../src/ingest/parsed-document.ts';

/** The `@types/node` version whose documentation the fixture and its question labels were built from. */
export const EXPECTED_VERSION = '24.19.2';

const ROOT = path.resolve(import.meta.dirname, '..');
const TYPES_DIR = path.join(ROOT, 'node_modules/@types/node');
const OUT_DIR = path.join(ROOT, 'test/fixtures/eval');
/** Compatibility copies for older TypeScript versions, and the generated inspector protocol (field lists). */
const SKIPPED = [/^ts5\.\d+\//, /^compatibility\//, /^inspector\.generated\.d\.ts$/, /^index\.d\.ts$/];
const CHATBOT_ID = 'eval';

/** One line of corpus.jsonl. */
export interface CorpusLine {
  id: string;
  title: string;
  content: string;
}

/** The documentation of one module, section by section, in source order. */
interface ModuleDoc {
  name: string;
  sections: Section[];
  /** `headings + text` of every section already taken, so overloads with the same comment count once. */
  seen: Set<string>;
}

/** The tags whose text is documentation; the others (`@since`, `@see`, `@template`, …) are dropped. */
const KEPT_TAGS: Readonly<Record<string, string>> = {
  param: 'Parameter',
  returns: 'Returns',
  return: 'Returns',
  throws: 'Throws',
  default: 'Default',
  deprecated: 'Deprecated',
  legacy: 'Legacy',
  experimental: 'Experimental',
};

function declarationFiles(dir: string, prefix = ''): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const full = path.join(dir, name);
      const relative = prefix + name;
      if (statSync(full).isDirectory()) return declarationFiles(full, `${relative}/`);
      return relative.endsWith('.d.ts') ? [relative] : [];
    })
    .filter((relative) => !SKIPPED.some((pattern) => pattern.test(relative)));
}

/** Turns inline JSDoc and Markdown links into their text: `{@link stat}` → `stat`, `[a](url)` → `a`. */
function plainLinks(text: string): string {
  return text
    .replace(/\{@link(?:code|plain)?\s+([^}|\s]+)(?:\s*\|\s*|\s+)?([^}]*)\}/g, (_, target: string, label: string) =>
      label.trim() === '' ? target : label.trim(),
    )
    .replace(/\[([^\]]+)\]\([^)\s]+\)/g, '$1');
}

/** The lines of a `/** … *\/` comment without the comment markers and the leading ` * `. */
function commentLines(raw: string): string[] {
  const body = raw.replace(/^\/\*\*/, '').replace(/\*\/$/, '');
  return body.split('\n').map((line) => line.replace(/^\s*\* ?/, '').trimEnd());
}

/** Paragraphs and fenced code blocks of a Markdown text, each as one block. */
function blocksOf(lines: string[]): string[] {
  const blocks: string[] = [];
  let current: string[] = [];
  let inFence = false;
  const flush = () => {
    const text = current.join('\n').trim();
    if (text !== '') blocks.push(text);
    current = [];
  };
  for (const line of lines) {
    if (line.trimStart().startsWith('```')) {
      if (!inFence) flush();
      current.push(line);
      inFence = !inFence;
      if (!inFence) flush();
    } else if (!inFence && line.trim() === '') {
      flush();
    } else {
      current.push(line);
    }
  }
  flush();
  return blocks;
}

/** The documentation blocks of one JSDoc comment: its description, then its kept tags. */
function commentBlocks(raw: string): string[] {
  const lines = commentLines(raw);
  const description: string[] = [];
  const tags: Array<{ name: string; lines: string[] }> = [];
  let inFence = false;
  for (const line of lines) {
    if (line.trimStart().startsWith('```')) inFence = !inFence;
    const tag = inFence ? null : /^@(\w+)\s?(.*)$/.exec(line.trim());
    if (tag) tags.push({ name: tag[1]!, lines: [tag[2]!] });
    else if (tags.length > 0) tags.at(-1)!.lines.push(line);
    else description.push(line);
  }
  const blocks = blocksOf(description.map(plainLinks));
  for (const tag of tags) {
    const label = KEPT_TAGS[tag.name];
    if (label === undefined) continue;
    const [first = '', ...rest] = blocksOf(tag.lines.map(plainLinks));
    if (tag.name === 'param') {
      const param = /^(?:\{[^}]*\}\s*)?\[?([\w.$]+)(?:=[^\]]*)?\]?\s*(?:-\s*)?([\s\S]*)$/.exec(first);
      if (param === null || param[2]!.trim() === '') continue;
      blocks.push(`${label} \`${param[1]}\`: ${param[2]!.trim()}`, ...rest);
    } else if (first === '' && rest.length === 0) {
      if (tag.name === 'deprecated' || tag.name === 'legacy' || tag.name === 'experimental') blocks.push(`${label}.`);
    } else {
      blocks.push(`${label}: ${first}`, ...rest);
    }
  }
  return blocks;
}

/** The last JSDoc comment of a node (the one TypeScript attaches to the declaration), raw. */
function jsDocOf(node: ts.Node, file: ts.SourceFile): string | undefined {
  const docs = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc);
  const doc = docs.at(-1);
  return doc === undefined ? undefined : file.text.slice(doc.getStart(file), doc.end);
}

function nameOf(node: ts.Node, file: ts.SourceFile): string | undefined {
  if (ts.isVariableStatement(node)) {
    const first = node.declarationList.declarations[0];
    return first === undefined ? undefined : nameOf(first, file);
  }
  if (ts.isConstructorDeclaration(node) || ts.isConstructSignatureDeclaration(node)) return 'constructor';
  if (ts.isCallSignatureDeclaration(node)) return '(call)';
  if (ts.isIndexSignatureDeclaration(node)) return '[index]';
  const name = (node as ts.Node & { name?: ts.Node }).name;
  if (name === undefined) return undefined;
  if (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isPrivateIdentifier(name)) return name.text;
  return name.getText(file);
}

function isCallable(node: ts.Node): boolean {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isMethodSignature(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isConstructSignatureDeclaration(node)
  );
}

class CorpusBuilder {
  readonly modules = new Map<string, ModuleDoc>();

  addFile(relative: string): void {
    const text = readFileSync(path.join(TYPES_DIR, relative), 'utf8');
    const file = ts.createSourceFile(relative, text, ts.ScriptTarget.Latest, true);
    const fallbackModule = relative.replace(/\.d\.ts$/, '');
    for (const statement of file.statements) this.#visit(statement, file, fallbackModule, []);
  }

  #module(name: string): ModuleDoc {
    let module = this.modules.get(name);
    if (module === undefined) {
      module = { name, sections: [], seen: new Set() };
      this.modules.set(name, module);
    }
    return module;
  }

  #visit(node: ts.Node, file: ts.SourceFile, moduleName: string, containers: string[]): void {
    if (ts.isModuleDeclaration(node)) {
      if (ts.isStringLiteral(node.name)) {
        // `declare module "node:fs" { export * from "fs"; }` only re-exports: its module is `fs`.
        const name = node.name.text.replace(/^node:/, '');
        this.#document(node, file, name, []);
        this.#visitBody(node.body, file, name, []);
      } else if (node.name.text === 'global') {
        this.#visitBody(node.body, file, moduleName, []);
      } else {
        const name = node.name.text;
        this.#document(node, file, moduleName, [...containers, name]);
        this.#visitBody(node.body, file, moduleName, [...containers, name]);
      }
      return;
    }
    const name = nameOf(node, file);
    if (name === undefined) return;
    const label = isCallable(node) ? `${name}()` : name;
    this.#document(node, file, moduleName, [...containers, label]);
    if (ts.isClassDeclaration(node) || ts.isInterfaceDeclaration(node)) {
      for (const member of node.members) this.#visit(member, file, moduleName, [...containers, name]);
    }
  }

  #visitBody(body: ts.ModuleBody | undefined, file: ts.SourceFile, moduleName: string, containers: string[]): void {
    if (body === undefined) return;
    if (ts.isModuleDeclaration(body)) {
      this.#visit(body, file, moduleName, containers);
      return;
    }
    if (ts.isModuleBlock(body))
      for (const statement of body.statements) this.#visit(statement, file, moduleName, containers);
  }

  #document(node: ts.Node, file: ts.SourceFile, moduleName: string, trail: string[]): void {
    const raw = jsDocOf(node, file);
    if (raw === undefined) return;
    const blocks = commentBlocks(raw);
    if (blocks.length === 0) return;
    const module = this.#module(moduleName);
    const headings = [moduleName, ...trail];
    const key = `${headings.join('\u0000')}\u0001${blocks.join('\u0000')}`;
    if (module.seen.has(key)) return;
    module.seen.add(key);
    module.sections.push({ headings, blocks });
  }
}

/** The corpus lines of the installed `@types/node`, in module order. */
export function buildCorpus(): CorpusLine[] {
  const builder = new CorpusBuilder();
  for (const relative of declarationFiles(TYPES_DIR)) builder.addFile(relative);
  const names = [...builder.modules.keys()].sort();
  return names.flatMap((name) => {
    const module = builder.modules.get(name)!;
    const doc: ParsedDocument = { title: `Node.js ${name} module`, pages: [pageFromSections(module.sections)] };
    return chunkDocument(doc, { chatbotId: CHATBOT_ID, sourceId: name, url: `node:${name}` }).map((chunk) => ({
      id: chunk.id,
      title: chunk.title,
      content: chunk.content,
    }));
  });
}

function main(): void {
  const { version } = JSON.parse(readFileSync(path.join(TYPES_DIR, 'package.json'), 'utf8')) as { version: string };
  if (version !== EXPECTED_VERSION) {
    throw new Error(
      `@types/node is ${version}, the eval fixture was built from ${EXPECTED_VERSION}: rebuilding would invalidate ` +
        'the question labels; update EXPECTED_VERSION only together with questions.json',
    );
  }
  const lines = buildCorpus();
  mkdirSync(OUT_DIR, { recursive: true });
  const out = path.join(OUT_DIR, 'corpus.jsonl');
  writeFileSync(out, lines.map((line) => JSON.stringify(line)).join('\n') + '\n');
  const modules = new Set(lines.map((line) => line.id.slice(0, line.id.lastIndexOf(':')))).size;
  const bytes = statSync(out).size;
  console.log(`${path.relative(ROOT, out)}: ${modules} documents, ${lines.length} chunks, ${bytes} bytes`);
}

if (import.meta.main) main();
