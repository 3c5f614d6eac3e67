import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { OAuthFake } from './fake-oauth.ts';

/** A file or folder in the fake account. `deleted` ones are only listed with `include_deleted`. */
export interface FakeDropboxEntry {
  tag: 'file' | 'folder';
  /** The cased path, `/Team/Handbook/Intro.pdf`. */
  path: string;
  id: string;
  rev: string;
  bytes: Buffer;
  deleted: boolean;
  /** False for Paper docs and cloud documents, which `files/download` refuses. */
  downloadable: boolean;
  /** Send the download without `Content-Length`, so its size is unknown until it has arrived. */
  chunked: boolean;
}

/** A request as the fake received it: the host it reached, the route and its JSON argument. */
export interface DropboxRequest {
  host: 'api' | 'content';
  method: string;
  /** `files/list_folder`, `oauth2/token`, … */
  route: string;
  headers: IncomingMessage['headers'];
  /** The JSON body of an RPC call, the `Dropbox-API-Arg` of a download; null for neither. */
  arg: unknown;
  /** The bearer token it carried ('' for none). */
  token: string;
  /** The status the fake answered, and the headers it set (OAuth answers' apart). */
  status: number;
  answered: Record<string, string>;
}

/** A canned answer for the next call of a route, in place of the real one. */
export interface CannedAnswer {
  status: number;
  headers?: Record<string, string>;
  body: string;
}

type Json = Record<string, unknown>;
type Answer = { status: number; headers?: Record<string, string>; body: string | Buffer };

const RPC_ROUTES = new Set([
  'files/get_metadata',
  'files/list_folder',
  'files/list_folder/continue',
  'sharing/get_shared_link_metadata',
]);
const DOWNLOAD_ROUTES = new Set(['files/download', 'sharing/get_shared_link_file']);
/** The scope each route needs (Dropbox's documented route scopes). */
const ROUTE_SCOPES: Record<string, string> = {
  'files/get_metadata': 'files.metadata.read',
  'files/list_folder': 'files.metadata.read',
  'files/list_folder/continue': 'files.metadata.read',
  'sharing/get_shared_link_metadata': 'sharing.read',
  'files/download': 'files.content.read',
  'sharing/get_shared_link_file': 'sharing.read',
};
const TIMESTAMP = '2025-03-14T09:26:53Z';

/**
 * A loopback Dropbox API v2 on two hosts, as the real one is: the RPC host (`api.dropboxapi.com`:
 * `POST /2/{namespace}/{route}` with a JSON body, the OAuth token endpoint at `/oauth2/token` and the
 * authorize page at `/oauth2/authorize`) and the content host (`content.dropboxapi.com`: downloads
 * with the argument in the `Dropbox-API-Arg` header and the metadata in `Dropbox-API-Result`, both
 * HTTP-header-safe JSON). Routes: `files/get_metadata`, `files/list_folder` (recursive, or through a
 * `shared_link`, non-recursive only) and `/continue` with `cursor` while `has_more`,
 * `sharing/get_shared_link_metadata`, `files/download`, `sharing/get_shared_link_file`. Errors as
 * Dropbox sends them: 409 `{error_summary, error}` for route errors, 401 for a bad token or a missing
 * scope, 400 plain text for a malformed call.
 */
export class FakeDropbox {
  readonly oauth = new OAuthFake({
    clientId: 'fake-app-key',
    clientSecret: 'fake-app-secret',
    tokenPath: '/oauth2/token',
    authorizePath: '/oauth2/authorize',
  });
  readonly requests: DropboxRequest[] = [];
  /** Entries per `list_folder` page. */
  pageSize = 3;
  /** The scopes the app was granted. */
  readonly scopes = new Set(Object.values(ROUTE_SCOPES));
  apiUrl = '';
  contentUrl = '';
  private readonly entries = new Map<string, FakeDropboxEntry>();
  private readonly links = new Map<string, { path: string; mounted: boolean }>();
  private readonly cursors = new Map<string, { entries: Json[]; offset: number }>();
  private readonly canned = new Map<string, CannedAnswer[]>();
  private readonly servers: Server[] = [];
  private readonly sockets = new Set<Socket>();
  private counter = 0;

  async start(): Promise<this> {
    this.apiUrl = await this.listen('api');
    this.contentUrl = await this.listen('content');
    return this;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await Promise.all(this.servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }

  /** Forgets entries, links, cursors, canned answers and requests; grants all scopes again. */
  reset(): void {
    for (const store of [this.entries, this.links, this.cursors, this.canned]) store.clear();
    this.requests.length = 0;
    this.pageSize = 3;
    for (const scope of Object.values(ROUTE_SCOPES)) this.scopes.add(scope);
  }

  /** The next call of `route` (e.g. `files/list_folder`) gets `answer`. */
  answerNext(route: string, answer: CannedAnswer): void {
    this.canned.set(route, [...(this.canned.get(route) ?? []), answer]);
  }

  /** Adds a folder and its missing parents. */
  addFolder(path: string): FakeDropboxEntry {
    const existing = this.entries.get(path.toLowerCase());
    if (existing) return existing;
    const parent = path.slice(0, path.lastIndexOf('/'));
    if (parent !== '') this.addFolder(parent);
    return this.add({ tag: 'folder', path, bytes: Buffer.alloc(0) });
  }

  /** Adds a file (and its missing folders). */
  addFile(path: string, content: string | Buffer, options: { downloadable?: boolean; chunked?: boolean } = {}) {
    const parent = path.slice(0, path.lastIndexOf('/'));
    if (parent !== '') this.addFolder(parent);
    return this.add({ tag: 'file', path, bytes: Buffer.from(content), ...options });
  }

  /** Deletes an entry and everything under it. */
  delete(path: string): void {
    const lower = path.toLowerCase();
    for (const [key, entry] of this.entries) if (key === lower || key.startsWith(`${lower}/`)) entry.deleted = true;
  }

  entry(path: string): FakeDropboxEntry {
    const entry = this.entries.get(path.toLowerCase());
    if (!entry) throw new Error(`no entry at ${path}`);
    return entry;
  }

  /**
   * Shares an entry and returns its link as Dropbox hands it out (`/scl/fi/…` for a file, `/scl/fo/…`
   * for a folder, with `rlkey` and `dl=0`). `mounted` says whether the entry is in the connected
   * account's own Dropbox (links of others have no `path_lower`).
   */
  share(path: string, options: { mounted?: boolean } = {}): string {
    const entry = this.entry(path);
    const n = this.links.size + 1;
    const id = `${entry.tag === 'file' ? 'fi' : 'fo'}/lnk${n}x7q2m9`;
    const tail =
      entry.tag === 'file' ? encodeURIComponent(entry.path.slice(entry.path.lastIndexOf('/') + 1)) : 'AAB9k2';
    const url = `https://www.dropbox.com/scl/${id}/${tail}?rlkey=rk${n}a8f3k2lq9`;
    this.links.set(url, { path: entry.path, mounted: options.mounted ?? false });
    return `${url}&dl=0`;
  }

  /** Dropbox's content hash: SHA-256 over the SHA-256 of each 4 MiB block. */
  static contentHash(bytes: Buffer): string {
    const blocks: Buffer[] = [];
    for (let at = 0; at < bytes.length; at += 4 * 1024 * 1024) {
      blocks.push(
        createHash('sha256')
          .update(bytes.subarray(at, at + 4 * 1024 * 1024))
          .digest(),
      );
    }
    return createHash('sha256').update(Buffer.concat(blocks)).digest('hex');
  }

  private add(partial: Pick<FakeDropboxEntry, 'tag' | 'path' | 'bytes'> & Partial<FakeDropboxEntry>) {
    this.counter += 1;
    const n = this.counter.toString().padStart(6, '0');
    const entry: FakeDropboxEntry = {
      id: `id:a4ayc_80_OEAAAA${n}`,
      rev: `5f0c1d2e${n}`,
      deleted: false,
      downloadable: true,
      chunked: false,
      ...partial,
    };
    this.entries.set(entry.path.toLowerCase(), entry);
    return entry;
  }

  private async listen(host: 'api' | 'content'): Promise<string> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => this.route(host, req, Buffer.concat(chunks), res));
    });
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    this.servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  }

  private route(host: 'api' | 'content', req: IncomingMessage, body: Buffer, res: ServerResponse): void {
    const path = new URL(req.url ?? '/', 'http://fake').pathname;
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    const record: DropboxRequest = {
      host,
      method: req.method ?? 'GET',
      route: path.replace(/^\/(2\/)?/, ''),
      headers: req.headers,
      arg: null,
      token: bearer,
      status: 0,
      answered: {},
    };
    this.requests.push(record);
    if (host === 'api' && this.oauth.handle(req, res, body)) {
      res.once('finish', () => (record.status = res.statusCode));
      return;
    }
    const answer = this.answer(host, record, body);
    record.status = answer.status;
    record.answered = answer.headers ?? {};
    res.writeHead(answer.status, answer.headers ?? {});
    // A chunked download: written in two parts, so no Content-Length is sent.
    if (answer.headers?.['transfer-encoding'] === 'chunked' && Buffer.isBuffer(answer.body)) {
      res.write(answer.body.subarray(0, 1));
      res.end(answer.body.subarray(1));
    } else res.end(answer.body);
  }

  private answer(host: 'api' | 'content', record: DropboxRequest, body: Buffer): Answer {
    const route = record.route;
    const download = DOWNLOAD_ROUTES.has(route);
    if (record.method !== 'POST' || (!download && !RPC_ROUTES.has(route))) {
      return text(404, `Unknown API function: "${route}"`);
    }
    if ((host === 'content') !== download) {
      return text(400, callError(route, `This function is served by ${download ? 'content' : 'api'}.dropboxapi.com.`));
    }
    const raw = download ? String(record.headers['dropbox-api-arg'] ?? '') : body.toString('utf8');
    if (download && /[^\x20-\x7e]/.test(raw)) {
      return text(400, callError(route, 'HTTP header "Dropbox-API-Arg": could not decode input as JSON'));
    }
    if (!download && !/^application\/json\b/.test(record.headers['content-type'] ?? '')) {
      return text(400, callError(route, 'Bad HTTP "Content-Type" header. Expecting "application/json".'));
    }
    try {
      record.arg = JSON.parse(raw);
    } catch {
      return text(
        400,
        callError(
          route,
          `${download ? 'HTTP header "Dropbox-API-Arg"' : 'request body'}: could not decode input as JSON`,
        ),
      );
    }
    if (!record.headers.authorization) {
      return text(400, callError(route, 'Must provide HTTP header "Authorization" or URL parameter "authorization".'));
    }
    if (!this.oauth.isValid(record.token)) {
      // OAuthFake's tokens start `at-`: one of them that no longer works has expired.
      const tag = record.token.startsWith('at-') ? 'expired_access_token' : 'invalid_access_token';
      return json(401, { error_summary: `${tag}/`, error: { '.tag': tag } });
    }
    const scope = ROUTE_SCOPES[route]!;
    if (!this.scopes.has(scope)) {
      return json(401, { error_summary: 'missing_scope/', error: { '.tag': 'missing_scope', required_scope: scope } });
    }
    const canned = this.canned.get(route)?.shift();
    if (canned) return canned;
    return this.call(route, record.arg as Json);
  }

  private call(route: string, arg: Json): Answer {
    switch (route) {
      case 'files/get_metadata':
        return this.getMetadata(arg);
      case 'files/list_folder':
        return this.listFolder(arg);
      case 'files/list_folder/continue':
        return this.listFolderContinue(arg);
      case 'sharing/get_shared_link_metadata':
        return this.linkMetadata(arg);
      case 'files/download':
        return this.download(arg);
      default:
        return this.linkFile(arg);
    }
  }

  private lookup(path: unknown): FakeDropboxEntry | 'malformed' | undefined {
    if (typeof path !== 'string' || (!/^(\/.*)?$/s.test(path) && !path.startsWith('id:'))) return 'malformed';
    if (path.endsWith('/')) return 'malformed';
    const entry = path.startsWith('id:')
      ? [...this.entries.values()].find((candidate) => candidate.id === path)
      : this.entries.get(path.toLowerCase());
    return entry && !entry.deleted ? entry : undefined;
  }

  private getMetadata(arg: Json): Answer {
    if (arg.path === '') return text(400, callError('files/get_metadata', 'The root folder is unsupported.'));
    const entry = this.lookup(arg.path);
    if (entry === 'malformed' || entry === undefined) return pathError(entry);
    return json(200, metadata(entry, true));
  }

  private listFolder(arg: Json): Answer {
    const link = arg.shared_link as { url?: string } | undefined;
    if (link && arg.recursive === true) {
      return json(409, { error_summary: 'other/..', error: { '.tag': 'other' } });
    }
    let root: FakeDropboxEntry | undefined;
    let mounted = true;
    if (link) {
      const shared = this.sharedLink(link.url);
      if (!shared) return json(409, sharedLinkError('shared_link_not_found'));
      mounted = shared.mounted;
      const found = this.lookup(`${shared.path}${String(arg.path)}`);
      if (found === 'malformed' || found === undefined) return pathError(found);
      root = found;
    } else if (arg.path !== '') {
      const found = this.lookup(arg.path);
      if (found === 'malformed' || found === undefined) return pathError(found);
      root = found;
    }
    if (root && root.tag !== 'folder') {
      return json(409, {
        error_summary: 'path/not_folder/..',
        error: { '.tag': 'path', path: { '.tag': 'not_folder' } },
      });
    }
    const prefix = root ? `${root.path.toLowerCase()}/` : '/';
    const under = [...this.entries.entries()]
      .filter(([key, entry]) => key.startsWith(prefix) && (arg.include_deleted === true || !entry.deleted))
      .filter(([key]) => arg.recursive === true || !key.slice(prefix.length).includes('/'))
      .map(([, entry]) => entry);
    // A recursive listing starts with the folder itself, as Dropbox's does.
    const listed = arg.recursive === true && root ? [root, ...under] : under;
    const entries = listed.map((entry) => (entry.deleted ? deletedMetadata(entry) : metadata(entry, mounted)));
    return this.page(entries, 0);
  }

  private listFolderContinue(arg: Json): Answer {
    const state = typeof arg.cursor === 'string' ? this.cursors.get(arg.cursor) : undefined;
    if (!state) return json(409, { error_summary: 'reset/..', error: { '.tag': 'reset' } });
    return this.page(state.entries, state.offset);
  }

  /** One page from `offset`, with a new cursor for the rest, as Dropbox hands out one per page. */
  private page(all: Json[], offset: number): Answer {
    const entries = all.slice(offset, offset + this.pageSize);
    const cursor = `AAH${(this.cursors.size + 1).toString(36)}cUrS0r`;
    this.cursors.set(cursor, { entries: all, offset: offset + entries.length });
    return json(200, { entries, cursor, has_more: offset + entries.length < all.length });
  }

  private sharedLink(url: unknown): { path: string; mounted: boolean } | undefined {
    if (typeof url !== 'string' || !URL.canParse(url)) return undefined;
    const shared = this.links.get(linkKey(url));
    return shared && !this.entry(shared.path).deleted ? shared : undefined;
  }

  private linkTarget(arg: Json): FakeDropboxEntry | Answer {
    const shared = this.sharedLink(arg.url);
    if (!shared) return json(409, sharedLinkError('shared_link_not_found'));
    const found = this.lookup(typeof arg.path === 'string' ? `${shared.path}${arg.path}` : shared.path);
    if (found === 'malformed' || found === undefined) return json(409, sharedLinkError('shared_link_not_found'));
    return found;
  }

  private linkMetadata(arg: Json): Answer {
    const found = this.linkTarget(arg);
    if (!('tag' in found)) return found;
    return json(200, linkMetadata(found, String(arg.url), this.links.get(linkKey(String(arg.url)))?.mounted ?? false));
  }

  private download(arg: Json): Answer {
    const entry = this.lookup(arg.path);
    if (entry === 'malformed' || entry === undefined) return pathError(entry);
    if (entry.tag === 'folder') {
      return json(409, { error_summary: 'path/not_file/..', error: { '.tag': 'path', path: { '.tag': 'not_file' } } });
    }
    if (!entry.downloadable) {
      return json(409, { error_summary: 'unsupported_file/..', error: { '.tag': 'unsupported_file' } });
    }
    return fileAnswer(entry, metadata(entry, true));
  }

  private linkFile(arg: Json): Answer {
    const found = this.linkTarget(arg);
    if (!('tag' in found)) return found;
    if (found.tag === 'folder') return json(409, sharedLinkError('shared_link_is_directory'));
    const mounted = this.links.get(linkKey(String(arg.url)))?.mounted ?? false;
    return fileAnswer(found, linkMetadata(found, String(arg.url), mounted));
  }
}

/** A link as the fake stores it: Dropbox reads one with or without its `dl`, `raw` and `st` parameters. */
function linkKey(url: string): string {
  const parsed = new URL(url);
  const rlkey = parsed.searchParams.get('rlkey');
  return `https://www.dropbox.com${parsed.pathname}${rlkey !== null ? `?rlkey=${rlkey}` : ''}`;
}

function nameOf(entry: FakeDropboxEntry): string {
  return entry.path.slice(entry.path.lastIndexOf('/') + 1);
}

/** `FileMetadata` / `FolderMetadata`; paths only when the entry is in the caller's own Dropbox. */
function metadata(entry: FakeDropboxEntry, mounted: boolean): Json {
  const paths = mounted ? { path_lower: entry.path.toLowerCase(), path_display: entry.path } : {};
  if (entry.tag === 'folder') return { '.tag': 'folder', name: nameOf(entry), ...paths, id: entry.id };
  return {
    '.tag': 'file',
    name: nameOf(entry),
    ...paths,
    id: entry.id,
    client_modified: TIMESTAMP,
    server_modified: TIMESTAMP,
    rev: entry.rev,
    size: entry.bytes.length,
    is_downloadable: entry.downloadable,
    content_hash: FakeDropbox.contentHash(entry.bytes),
  };
}

function deletedMetadata(entry: FakeDropboxEntry): Json {
  return { '.tag': 'deleted', name: nameOf(entry), path_lower: entry.path.toLowerCase(), path_display: entry.path };
}

/** `FileLinkMetadata` / `FolderLinkMetadata`. */
function linkMetadata(entry: FakeDropboxEntry, url: string, mounted: boolean): Json {
  const base: Json = {
    '.tag': entry.tag,
    url,
    id: entry.id,
    name: nameOf(entry),
    ...(mounted ? { path_lower: entry.path.toLowerCase() } : {}),
    link_permissions: { resolved_visibility: { '.tag': 'public' }, can_revoke: false },
  };
  if (entry.tag === 'folder') return base;
  return { ...base, client_modified: TIMESTAMP, server_modified: TIMESTAMP, rev: entry.rev, size: entry.bytes.length };
}

function fileAnswer(entry: FakeDropboxEntry, result: Json): Answer {
  const headers: Record<string, string> = {
    'content-type': 'application/octet-stream',
    'dropbox-api-result': headerSafeJson(result),
  };
  if (entry.chunked) headers['transfer-encoding'] = 'chunked';
  else headers['content-length'] = String(entry.bytes.length);
  return { status: 200, headers, body: entry.bytes };
}

/** JSON with every character past ASCII escaped as `\uXXXX`, as Dropbox's API headers carry it. */
function headerSafeJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

function pathError(found: 'malformed' | undefined): Answer {
  const tag = found === 'malformed' ? 'malformed_path' : 'not_found';
  return json(409, { error_summary: `path/${tag}/..`, error: { '.tag': 'path', path: { '.tag': tag } } });
}

function sharedLinkError(tag: string): Json {
  return { error_summary: `${tag}/..`, error: { '.tag': tag } };
}

function callError(route: string, message: string): string {
  return `Error in call to API function "${route}": ${message}`;
}

function json(status: number, body: unknown): Answer {
  return { status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

function text(status: number, body: string): Answer {
  return { status, headers: { 'content-type': 'text/plain; charset=utf-8' }, body };
}
