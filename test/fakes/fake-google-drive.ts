import { createHash, verify } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { OAuthFake } from './fake-oauth.ts';

/** A file or folder in the fake Drive. Google's own files (Docs, Sheets, Slides) have `exports` instead of bytes. */
export interface FakeDriveFile {
  id: string;
  name: string;
  mimeType: string;
  parents: string[];
  /** The bytes `alt=media` sends (binary files). */
  content: Buffer;
  /** What `files.export` sends, by export mime type (Google's own files). */
  exports: Record<string, Buffer>;
  trashed: boolean;
  version: number;
  modifiedTime: string;
  /** The shared drive the item is in; undefined for My Drive. */
  driveId: string | undefined;
  /** Send the download without `Content-Length`, so its size is unknown until it has arrived. */
  chunked: boolean;
}

/** A request as the fake received it. */
export interface DriveRequest {
  /** `files.list`, `files.get`, `files.export`, `token`, or `other` for OAuth pages and unknown paths. */
  method: 'files.list' | 'files.get' | 'files.export' | 'token' | 'other';
  path: string;
  fileId: string | null;
  query: Record<string, string>;
  /** The form of a token request. */
  form: Record<string, string>;
  /** The bearer token it carried ('' for none). */
  token: string;
  status: number;
  answered: Record<string, string>;
}

/** A canned answer for the next call of a method, in place of the real one. */
export interface CannedAnswer {
  status: number;
  headers?: Record<string, string>;
  body: string;
}

type Json = Record<string, unknown>;
type Answer = { status: number; headers?: Record<string, string>; body: string | Buffer };

const FOLDER = 'application/vnd.google-apps.folder';
const NATIVE_PREFIX = 'application/vnd.google-apps.';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
const DRIVE_SCOPE = 'https://www.googleapis.com/auth/drive.readonly';
const TIMESTAMP = '2025-03-14T09:26:53.000Z';
/** Every field of the File resource the fake models; a mask naming another is refused. */
const FILE_KEYS = new Set([
  'kind',
  'id',
  'name',
  'mimeType',
  'parents',
  'trashed',
  'version',
  'modifiedTime',
  'webViewLink',
  'size',
  'md5Checksum',
  'driveId',
]);
const LIST_KEYS = new Set(['kind', 'nextPageToken', 'incompleteSearch', 'files']);
const DOCS_PATHS: Record<string, string> = {
  'application/vnd.google-apps.document': 'document',
  'application/vnd.google-apps.spreadsheet': 'spreadsheets',
  'application/vnd.google-apps.presentation': 'presentation',
};

/**
 * A loopback Google Drive API v3 (`files.list`, `files.get` with `alt=media`, `files.export`) with
 * Google's OAuth endpoints on the same server at their real paths (`/token`, `/o/oauth2/v2/auth`),
 * so one fake serves as the API root, the token URL and the authorize URL. It honours `fields`
 * masks, `q` (`'{id}' in parents`, `trashed = …`), `pageSize`/`pageToken`, the shared-drive flags,
 * and answers errors in Google's shape: `{error: {code, message, errors: [{domain, reason, …}], status}}`.
 * The token endpoint also takes the JWT-bearer grant of service accounts, checking the assertion's
 * RS256 signature against the public key added with `addServiceAccount`.
 */
export class FakeGoogleDrive {
  readonly oauth = new OAuthFake({
    clientId: 'fake-client.apps.googleusercontent.com',
    clientSecret: 'fake-client-secret',
    tokenPath: '/token',
    authorizePath: '/o/oauth2/v2/auth',
  });
  readonly requests: DriveRequest[] = [];
  /** Most files per page, whatever `pageSize` asks (Drive may return fewer, as it documents). */
  maxPageSize = 100;
  /** `files.export` refuses a larger export with `exportSizeLimitExceeded` (Drive's limit is 10 MB). */
  exportLimitBytes = 10 * 1024 * 1024;
  url = '';
  private readonly files = new Map<string, FakeDriveFile>();
  private readonly serviceAccounts = new Map<string, string>();
  private readonly pageTokens = new Map<string, { query: string; offset: number }>();
  private readonly canned = new Map<string, CannedAnswer[]>();
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private counter = 0;

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => this.route(req, Buffer.concat(chunks), res));
    });
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
    return this;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  /** Forgets files, page tokens, canned answers and requests; limits back to their defaults. */
  reset(): void {
    for (const store of [this.files, this.pageTokens, this.canned]) store.clear();
    this.requests.length = 0;
    this.maxPageSize = 100;
    this.exportLimitBytes = 10 * 1024 * 1024;
  }

  /** The next call of `method` (`files.list`, `files.get`, `files.export`, `token`) gets `answer`. */
  answerNext(method: DriveRequest['method'], answer: CannedAnswer): void {
    this.canned.set(method, [...(this.canned.get(method) ?? []), answer]);
  }

  /** A service account whose assertions the token endpoint accepts, by its public key (PEM). */
  addServiceAccount(email: string, publicKeyPem: string): void {
    this.serviceAccounts.set(email, publicKeyPem);
  }

  addFolder(name: string, parent?: string, options: { driveId?: string } = {}): FakeDriveFile {
    return this.add({ name, mimeType: FOLDER, parents: parent ? [parent] : [], driveId: options.driveId });
  }

  /** A binary file (PDF, DOCX, text, an image, …). */
  addFile(
    name: string,
    mimeType: string,
    content: string | Buffer,
    parent?: string,
    options: { chunked?: boolean; driveId?: string } = {},
  ): FakeDriveFile {
    return this.add({ name, mimeType, content: Buffer.from(content), parents: parent ? [parent] : [], ...options });
  }

  /** A Google Doc, Sheet, Slides deck, Form…: `exports` is what each export mime type gives. */
  addNative(name: string, kind: string, exports: Record<string, string | Buffer>, parent?: string): FakeDriveFile {
    const bytes = Object.fromEntries(Object.entries(exports).map(([type, body]) => [type, Buffer.from(body)]));
    return this.add({ name, mimeType: `${NATIVE_PREFIX}${kind}`, exports: bytes, parents: parent ? [parent] : [] });
  }

  file(id: string): FakeDriveFile {
    const file = this.files.get(id);
    if (!file) throw new Error(`no file ${id}`);
    return file;
  }

  /** Moves an item to the trash (its children stay in it, as in Drive). */
  trash(id: string): void {
    this.file(id).trashed = true;
  }

  /** Deletes an item for good: every call for it is then a 404. */
  remove(id: string): void {
    this.files.delete(id);
  }

  static md5(bytes: Buffer): string {
    return createHash('md5').update(bytes).digest('hex');
  }

  private add(partial: Partial<FakeDriveFile> & Pick<FakeDriveFile, 'name' | 'mimeType' | 'parents'>) {
    this.counter += 1;
    // Drive ids are 33 characters of [A-Za-z0-9_-].
    const id = `1Fk${this.counter.toString().padStart(4, '0')}aZq9XbT2mLr7VwC4pN8sKd6Hj`;
    const file: FakeDriveFile = {
      id,
      content: Buffer.alloc(0),
      exports: {},
      trashed: false,
      version: 40 + this.counter,
      modifiedTime: TIMESTAMP,
      driveId: undefined,
      chunked: false,
      ...partial,
    };
    this.files.set(id, file);
    return file;
  }

  private route(req: IncomingMessage, body: Buffer, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://fake');
    const match = /^\/drive\/v3\/files(?:\/([^/]+)(\/export)?)?$/.exec(url.pathname);
    const record: DriveRequest = {
      method: match ? (match[2] ? 'files.export' : match[1] ? 'files.get' : 'files.list') : 'other',
      path: url.pathname,
      fileId: match?.[1] ? decodeURIComponent(match[1]) : null,
      query: Object.fromEntries(url.searchParams),
      form: {},
      token: /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '',
      status: 0,
      answered: {},
    };
    this.requests.push(record);
    if (url.pathname === this.oauth.tokenPath && req.method === 'POST') {
      record.method = 'token';
      record.form = Object.fromEntries(new URLSearchParams(body.toString('utf8')));
      const canned = this.canned.get('token')?.shift();
      if (canned) return this.send(res, record, canned);
      if (record.form.grant_type === JWT_BEARER) return this.send(res, record, this.jwtGrant(record.form));
    }
    if (this.oauth.handle(req, res, body)) {
      res.once('finish', () => (record.status = res.statusCode));
      return;
    }
    this.send(res, record, match && req.method === 'GET' ? this.answer(record, req) : text(404, 'Not Found'));
  }

  private send(res: ServerResponse, record: DriveRequest, answer: Answer): void {
    record.status = answer.status;
    record.answered = answer.headers ?? {};
    res.writeHead(answer.status, answer.headers ?? {});
    // A chunked download: written in two parts, so no Content-Length is sent.
    if (answer.headers?.['transfer-encoding'] === 'chunked' && Buffer.isBuffer(answer.body)) {
      res.write(answer.body.subarray(0, 1));
      res.end(answer.body.subarray(1));
    } else res.end(answer.body);
  }

  private answer(record: DriveRequest, req: IncomingMessage): Answer {
    if (!req.headers.authorization) {
      const message =
        "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.";
      return googleError(403, message, 'forbidden', { status: 'PERMISSION_DENIED' });
    }
    if (!this.oauth.isValid(record.token)) {
      return {
        ...googleError(401, 'Invalid Credentials', 'authError', {
          status: 'UNAUTHENTICATED',
          location: ['Authorization', 'header'],
          message:
            'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.',
        }),
        headers: {
          'content-type': 'application/json; charset=UTF-8',
          'www-authenticate': 'Bearer realm="https://accounts.google.com/", error="invalid_token"',
        },
      };
    }
    const canned = this.canned.get(record.method)?.shift();
    if (canned) return canned;
    if (record.method === 'files.list') return this.list(record.query);
    const file = this.visible(
      record.fileId!,
      record.method === 'files.export' || record.query.supportsAllDrives === 'true',
    );
    if (!file) return notFound(record.fileId!);
    if (record.method === 'files.export') return this.export(file, record.query.mimeType);
    if ((record.query.alt ?? 'json') === 'media') return this.media(file);
    if (record.query.alt !== undefined && record.query.alt !== 'json') {
      return invalidValue('alt', `Invalid value '${record.query.alt}'. Values must be one of: json, media, proto`);
    }
    return this.masked(resource(file), record.query.fields, FILE_KEYS, ['kind', 'id', 'name', 'mimeType']);
  }

  /** A shared drive's items are 404 unless the caller says it supports shared drives. */
  private visible(id: string, allDrives: boolean): FakeDriveFile | undefined {
    const file = this.files.get(id);
    return file && (file.driveId === undefined || allDrives) ? file : undefined;
  }

  private list(query: Record<string, string>): Answer {
    const filter = parseQuery(query.q);
    if (!filter) return invalidValue('q', 'Invalid Value');
    const pageSize = query.pageSize === undefined ? 100 : Number(query.pageSize);
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 1000) {
      return invalidValue('pageSize', `Invalid value '${query.pageSize}'. Values must be within the range: [1, 1000]`);
    }
    const key = JSON.stringify({ ...query, pageToken: undefined });
    let offset = 0;
    if (query.pageToken !== undefined) {
      const state = this.pageTokens.get(query.pageToken);
      if (!state || state.query !== key) return invalidValue('pageToken', 'Invalid Value');
      offset = state.offset;
    }
    const allDrives = query.includeItemsFromAllDrives === 'true' && query.supportsAllDrives === 'true';
    const matching = [...this.files.values()].filter(
      (file) =>
        (filter.parent === undefined || file.parents.includes(filter.parent)) &&
        (filter.trashed === undefined || file.trashed === filter.trashed) &&
        (file.driveId === undefined || allDrives),
    );
    const files = matching.slice(offset, offset + Math.min(pageSize, this.maxPageSize));
    const next = offset + files.length;
    const page: Json = { kind: 'drive#fileList', incompleteSearch: false, files: files.map(resource) };
    if (next < matching.length) {
      const token = `~!!~AI9FV7T${(this.pageTokens.size + 1).toString().padStart(3, '0')}pgTk`;
      this.pageTokens.set(token, { query: key, offset: next });
      page.nextPageToken = token;
    }
    const defaults = ['kind', 'nextPageToken', 'incompleteSearch', 'files(kind,id,name,mimeType)'];
    return this.masked(page, query.fields, LIST_KEYS, defaults);
  }

  private masked(value: Json, fields: string | undefined, known: Set<string>, defaults: string[]): Answer {
    const mask = fields === undefined ? defaults : splitMask(fields);
    if (!mask) return invalidValue('fields', `Invalid field selection ${fields}`);
    const selected = select(value, mask, known);
    if (typeof selected === 'string') return invalidValue('fields', `Invalid field selection ${selected}`);
    return json(200, selected);
  }

  private media(file: FakeDriveFile): Answer {
    if (file.mimeType.startsWith(NATIVE_PREFIX)) {
      return googleError(
        403,
        'Only files with binary content can be downloaded. Use Export with Docs Editors files.',
        'fileNotDownloadable',
        { location: ['alt', 'parameter'] },
      );
    }
    const headers: Record<string, string> = { 'content-type': file.mimeType };
    if (file.chunked) headers['transfer-encoding'] = 'chunked';
    else headers['content-length'] = String(file.content.length);
    return { status: 200, headers, body: file.content };
  }

  private export(file: FakeDriveFile, mimeType: string | undefined): Answer {
    if (mimeType === undefined) return googleError(400, 'Required parameter: mimeType', 'required');
    if (!file.mimeType.startsWith(NATIVE_PREFIX) || file.mimeType === FOLDER) {
      return googleError(403, 'Export only supports Docs Editors files.', 'fileNotExportable');
    }
    const bytes = file.exports[mimeType];
    if (!bytes) return googleError(400, 'The requested conversion is not supported.', 'badRequest');
    if (bytes.length > this.exportLimitBytes) {
      return googleError(403, 'This file is too large to be exported.', 'exportSizeLimitExceeded');
    }
    return { status: 200, headers: { 'content-type': mimeType, 'content-length': String(bytes.length) }, body: bytes };
  }

  /** RFC 7523 as Google runs it: an RS256 assertion by a known account, for Google's token URL. */
  private jwtGrant(form: Record<string, string>): Answer {
    const refuse = (description: string) => json(400, { error: 'invalid_grant', error_description: description });
    const [header = '', payload = '', signature = ''] = (form.assertion ?? '').split('.');
    let claims: Json;
    try {
      claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Json;
      if ((JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as Json).alg !== 'RS256') throw new Error();
    } catch {
      return refuse('Invalid JWT: could not decode the assertion.');
    }
    const key = this.serviceAccounts.get(String(claims.iss));
    if (!key) return refuse('Invalid grant: account not found');
    const signed = Buffer.from(`${header}.${payload}`);
    if (!verify('RSA-SHA256', signed, key, Buffer.from(signature, 'base64url'))) {
      return refuse('Invalid JWT Signature.');
    }
    const now = Math.floor(Date.now() / 1000);
    const [iat, exp] = [Number(claims.iat), Number(claims.exp)];
    if (!(iat <= now + 60 && exp > now && exp - iat <= 3600)) {
      return refuse('Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.');
    }
    if (claims.aud !== GOOGLE_TOKEN_URL) return refuse('Invalid JWT: audience is not the token endpoint.');
    const scopes = typeof claims.scope === 'string' ? claims.scope.split(' ') : [];
    if (!scopes.includes(DRIVE_SCOPE)) {
      return json(400, {
        error: 'invalid_scope',
        error_description: 'Invalid OAuth scope or ID token audience provided.',
      });
    }
    return json(200, { access_token: this.oauth.issueGrant().access_token, expires_in: 3599, token_type: 'Bearer' });
  }
}

/** The File resource Drive sends: `size` and `md5Checksum` for binary files only, int64s as strings. */
function resource(file: FakeDriveFile): Json {
  const docs = DOCS_PATHS[file.mimeType];
  const webViewLink =
    file.mimeType === FOLDER
      ? `https://drive.google.com/drive/folders/${file.id}`
      : docs
        ? `https://docs.google.com/${docs}/d/${file.id}/edit?usp=drivesdk`
        : `https://drive.google.com/file/d/${file.id}/view?usp=drivesdk`;
  const binary = !file.mimeType.startsWith(NATIVE_PREFIX);
  return {
    kind: 'drive#file',
    id: file.id,
    name: file.name,
    mimeType: file.mimeType,
    parents: file.parents,
    trashed: file.trashed,
    version: String(file.version),
    modifiedTime: file.modifiedTime,
    webViewLink,
    ...(binary ? { size: String(file.content.length), md5Checksum: FakeGoogleDrive.md5(file.content) } : {}),
    ...(file.driveId !== undefined ? { driveId: file.driveId } : {}),
  };
}

/** `'{id}' in parents`, `trashed = true|false`, joined by `and`; undefined for anything else. */
function parseQuery(q: string | undefined): { parent?: string; trashed?: boolean } | undefined {
  const filter: { parent?: string; trashed?: boolean } = {};
  if (q === undefined || q.trim() === '') return filter;
  for (const term of q.trim().split(/\s+and\s+/i)) {
    const parent = /^'((?:[^'\\]|\\.)*)'\s+in\s+parents$/.exec(term);
    const trashed = /^trashed\s*=\s*(true|false)$/.exec(term);
    if (parent) filter.parent = parent[1]!.replace(/\\(.)/g, '$1');
    else if (trashed) filter.trashed = trashed[1] === 'true';
    else return undefined;
  }
  return filter;
}

/** A `fields` mask split at its top-level commas: `nextPageToken,files(id,name)`. */
function splitMask(fields: string): string[] | undefined {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i <= fields.length; i += 1) {
    const c = fields[i];
    if (c === '(') depth += 1;
    else if (c === ')') depth -= 1;
    if (depth < 0) return undefined;
    if ((c === ',' || c === undefined) && depth === 0) {
      parts.push(fields.slice(start, i).trim());
      start = i + 1;
    }
  }
  return depth === 0 && parts.every(Boolean) ? parts : undefined;
}

/** The value cut to the mask; a field the resource does not have is returned as the error. */
function select(value: Json, mask: string[], known: Set<string>): Json | string {
  if (mask.includes('*')) return value;
  const out: Json = {};
  for (const part of mask) {
    const nested = /^(\w+)\((.*)\)$/.exec(part);
    const name = nested ? nested[1]! : part;
    if (!known.has(name)) return part;
    if (!(name in value)) continue;
    if (!nested) {
      out[name] = value[name];
      continue;
    }
    const inner = splitMask(nested[2]!);
    if (!inner || !Array.isArray(value[name])) return part;
    const items = (value[name] as Json[]).map((item) => select(item, inner, FILE_KEYS));
    const bad = items.find((item) => typeof item === 'string');
    if (bad !== undefined) return bad;
    out[name] = items;
  }
  return out;
}

function googleError(
  status: number,
  message: string,
  reason: string,
  extra: { status?: string; location?: [string, string]; message?: string } = {},
): Answer {
  const item: Json = { message, domain: 'global', reason };
  if (extra.location) Object.assign(item, { location: extra.location[0], locationType: extra.location[1] });
  const error: Json = { code: status, message: extra.message ?? message, errors: [item] };
  if (extra.status) error.status = extra.status;
  return json(status, { error });
}

function notFound(id: string): Answer {
  return googleError(404, `File not found: ${id}.`, 'notFound', { location: ['fileId', 'parameter'] });
}

function invalidValue(parameter: string, message: string): Answer {
  return googleError(400, message, 'invalid', { location: [parameter, 'parameter'], status: 'INVALID_ARGUMENT' });
}

function json(status: number, body: unknown): Answer {
  return { status, headers: { 'content-type': 'application/json; charset=UTF-8' }, body: JSON.stringify(body) };
}

function text(status: number, body: string): Answer {
  return { status, headers: { 'content-type': 'text/html; charset=UTF-8' }, body };
}
