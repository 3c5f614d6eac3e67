import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { OAuthFake } from './fake-oauth.ts';

/** A drive: a personal OneDrive, a work or school OneDrive, or a SharePoint document library. */
export interface FakeGraphDrive {
  id: string;
  name: string;
  driveType: 'personal' | 'business' | 'documentLibrary';
  /** The drive's web address; items' `webUrl`s are under it (personal drives use `redir` links). */
  webUrl: string;
  rootId: string;
  /** Where the drive's sharing links live: `https://1drv.ms`, `https://contoso-my.sharepoint.com`… */
  linkBase: string;
  /** The link path after the type segment: `g/personal/ada_contoso_com`, `s/marketing`, `c/{cid}`. */
  linkScope: string;
}

/** A file or folder. Deleted items are in the recycle bin: Graph no longer lists or serves them. */
export interface FakeGraphItem {
  id: string;
  driveId: string;
  parentId: string | null;
  name: string;
  folder: boolean;
  bytes: Buffer;
  /** The GUID in the item's eTag and cTag; `version` counts its content changes. */
  guid: string;
  version: number;
  deleted: boolean;
  /** Serve the download without `Content-Length`, so its size is unknown until it has arrived. */
  chunked: boolean;
}

/** A SharePoint site, its default document library, and its Site Pages. */
export interface FakeGraphSite {
  id: string;
  hostname: string;
  /** `/sites/marketing`. */
  path: string;
  name: string;
  displayName: string;
  driveId: string;
  /** A classic site has no Site Pages library: its pages collection answers 404. */
  classic: boolean;
}

/** A web part of a page: text (its HTML) or any other kind (an image here), which has no HTML. */
export type FakeWebPart = { html: string } | { image: string };

/** A modern page. `published: false` is a draft never published (version 0.1). */
export interface FakeGraphPage {
  id: string;
  siteId: string;
  name: string;
  title: string;
  parts: FakeWebPart[];
  /** Web parts of the vertical section, at the page's side. */
  side: FakeWebPart[];
  published: boolean;
  guid: string;
  version: number;
  deleted: boolean;
}

/** A request as the fake received it. */
export interface GraphRequest {
  host: 'graph' | 'download';
  method: string;
  /** The path and query as sent (`/v1.0/drives/…/children?$skiptoken=…`). */
  url: string;
  /** `shares`, `item`, `children`, `content`, `site`, `drive`, `pages`, `page`, `download`, `oauth`, `unknown`. */
  route: string;
  headers: IncomingMessage['headers'];
  /** The bearer token it carried ('' for none). */
  token: string;
  status: number;
}

/** A canned answer for the next call of a route, in place of the real one. */
export interface CannedAnswer {
  status: number;
  headers?: Record<string, string>;
  body: string;
}

type Json = Record<string, unknown>;
type Answer = { status: number; headers?: Record<string, string>; body: string | Buffer; chunked?: boolean };

const TIMESTAMP = '2025-03-14T09:26:53Z';
const MIME: Record<string, string> = {
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  txt: 'text/plain',
  md: 'text/markdown',
  csv: 'text/csv',
};
/** The type segment of a sharing link by extension, as OneDrive and SharePoint write it. */
const LINK_TYPES: Record<string, string> = { docx: 'w', pptx: 'p', xlsx: 'x', pdf: 'b' };

/**
 * A loopback Microsoft Graph v1.0 for OneDrive and SharePoint, on two hosts as the real service is:
 * Graph itself (which also serves the Microsoft identity platform's `/{tenant}/oauth2/v2.0/token` and
 * `/authorize` through OAuthFake, so it can stand in for the login host) and a download host that
 * serves the pre-authenticated URLs `…/content` redirects to (302). Routes: `GET /shares/{u!key}/driveItem`,
 * `/drives/{d}/items/{i}`, `/drives/{d}/items/{i}/children` and `/drives/{d}/root/children` (paged by
 * `$top`, with an absolute `@odata.nextLink` carrying `$skiptoken`), `/drives/{d}/items/{i}/content`,
 * `/sites/{host}:/{path}`, `/sites/{id}/drive`, `/sites/{id}/pages/microsoft.graph.sitePage` (paged)
 * and `/sites/{id}/pages/{p}/microsoft.graph.sitePage` (`$expand=canvasLayout` adds the web parts).
 * Errors are Graph's `{"error":{"code","message","innerError"}}` with its statuses.
 */
export class FakeMicrosoftGraph {
  readonly oauth = new OAuthFake({
    clientId: 'fake-microsoft-client',
    clientSecret: 'fake-microsoft-secret',
    tokenPath: '/common/oauth2/v2.0/token',
    authorizePath: '/common/oauth2/v2.0/authorize',
  });
  readonly requests: GraphRequest[] = [];
  /** Items per collection page when the request has no `$top`. */
  pageSize = 3;
  graphUrl = '';
  downloadUrl = '';
  private readonly drives = new Map<string, FakeGraphDrive>();
  private readonly items = new Map<string, FakeGraphItem>();
  private readonly sites = new Map<string, FakeGraphSite>();
  private readonly pages = new Map<string, FakeGraphPage>();
  private readonly links = new Map<string, string>();
  private readonly tickets = new Map<string, string>();
  private readonly canned = new Map<string, CannedAnswer[]>();
  private readonly servers: Server[] = [];
  private readonly sockets = new Set<Socket>();
  private counter = 0;

  async start(): Promise<this> {
    this.graphUrl = await this.listen('graph');
    this.downloadUrl = await this.listen('download');
    return this;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await Promise.all(this.servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }

  /** Forgets drives, items, sites, pages, links, canned answers and requests; ids count from 1 again. */
  reset(): void {
    for (const store of [this.drives, this.items, this.sites, this.pages, this.links, this.tickets, this.canned]) {
      store.clear();
    }
    this.requests.length = 0;
    this.pageSize = 3;
    this.counter = 0;
  }

  /** The next call of `route` (see GraphRequest.route) gets `answer`. */
  answerNext(route: string, answer: CannedAnswer): void {
    this.canned.set(route, [...(this.canned.get(route) ?? []), answer]);
  }

  /** A personal OneDrive (`1drv.ms` links) or a work or school one (`{tenant}-my.sharepoint.com`). */
  addOneDrive(kind: 'personal' | 'business'): FakeGraphDrive {
    if (kind === 'personal') {
      const cid = randomBytes(8).toString('hex');
      return this.addDrive({
        name: 'OneDrive',
        driveType: 'personal',
        webUrl: `https://onedrive.live.com/?cid=${cid}`,
        linkBase: 'https://1drv.ms',
        linkScope: `c/${cid}`,
      });
    }
    return this.addDrive({
      name: 'OneDrive',
      driveType: 'business',
      webUrl: 'https://contoso-my.sharepoint.com/personal/ada_contoso_com/Documents',
      linkBase: 'https://contoso-my.sharepoint.com',
      linkScope: 'g/personal/ada_contoso_com',
    });
  }

  /** A site with its default document library ("Documents"). */
  addSite(options: { hostname: string; path: string; displayName: string; classic?: boolean }): FakeGraphSite {
    const webUrl = `https://${options.hostname}${options.path}`;
    const drive = this.addDrive({
      name: 'Documents',
      driveType: 'documentLibrary',
      webUrl: `${webUrl}/Shared%20Documents`,
      linkBase: `https://${options.hostname}`,
      linkScope: `s/${options.path.split('/').pop()}`,
    });
    const site: FakeGraphSite = {
      id: `${options.hostname},${randomUUID()},${randomUUID()}`,
      hostname: options.hostname,
      path: options.path,
      name: options.path.split('/').pop()!,
      displayName: options.displayName,
      driveId: drive.id,
      classic: options.classic ?? false,
    };
    this.sites.set(site.id, site);
    return site;
  }

  /** Adds a page to a site's Site Pages, after the ones already there. */
  addPage(
    site: FakeGraphSite,
    page: { name: string; title: string; parts: FakeWebPart[]; side?: FakeWebPart[]; published?: boolean },
  ): FakeGraphPage {
    const added: FakeGraphPage = {
      id: randomUUID(),
      siteId: site.id,
      side: [],
      published: true,
      guid: randomUUID().toUpperCase(),
      version: 1,
      deleted: false,
      ...page,
    };
    this.pages.set(added.id, added);
    return added;
  }

  /** Adds a folder (and its missing parents) at a path like `/Handbook/Guides`. */
  addFolder(drive: FakeGraphDrive, path: string): FakeGraphItem {
    const existing = this.find(drive, path);
    if (existing) return existing;
    const slash = path.lastIndexOf('/');
    const parent = slash > 0 ? this.addFolder(drive, path.slice(0, slash)) : this.items.get(drive.rootId)!;
    return this.addItem(drive.id, parent.id, path.slice(slash + 1), true, Buffer.alloc(0));
  }

  /** Adds a file (and its missing folders). */
  addFile(drive: FakeGraphDrive, path: string, content: string | Buffer, options: { chunked?: boolean } = {}) {
    const slash = path.lastIndexOf('/');
    const parent = slash > 0 ? this.addFolder(drive, path.slice(0, slash)) : this.items.get(drive.rootId)!;
    const item = this.addItem(drive.id, parent.id, path.slice(slash + 1), false, Buffer.from(content));
    item.chunked = options.chunked ?? false;
    return item;
  }

  /** The live item at a path of a drive. */
  item(drive: FakeGraphDrive, path: string): FakeGraphItem {
    const found = this.find(drive, path);
    if (!found) throw new Error(`no item at ${path}`);
    return found;
  }

  /** Moves an item and everything under it to the recycle bin. */
  delete(item: FakeGraphItem): void {
    item.deleted = true;
    for (const child of this.items.values()) if (child.parentId === item.id) this.delete(child);
  }

  /** Replaces a file's content: its cTag and eTag change. */
  update(item: FakeGraphItem, content: string | Buffer): void {
    item.bytes = Buffer.from(content);
    item.version += 1;
  }

  /** Creates a sharing link to an item, as OneDrive or SharePoint hands it out (with its `e` parameter). */
  share(item: FakeGraphItem): string {
    const drive = this.drives.get(item.driveId)!;
    const type = item.folder ? 'f' : (LINK_TYPES[extension(item.name)] ?? 'u');
    const token = `E${randomBytes(18).toString('base64url')}`;
    const e = randomBytes(4).toString('base64url');
    const link =
      drive.driveType === 'personal'
        ? `${drive.linkBase}/${type}/${drive.linkScope}/${token}?e=${e}`
        : `${drive.linkBase}/:${type}:/${drive.linkScope}/${token}?e=${e}`;
    this.links.set(link, item.id);
    return link;
  }

  /** The drive a site's document library is. */
  drive(id: string): FakeGraphDrive {
    return this.drives.get(id)!;
  }

  /** eTag and cTag as SharePoint and OneDrive for Business write them. */
  static eTag(item: { guid: string; version: number }): string {
    return `"{${item.guid}},${item.version}"`;
  }

  static cTag(item: { guid: string; version: number }): string {
    return `"c:{${item.guid}},${item.version}"`;
  }

  /** The `webUrl` of an item. */
  webUrl(item: FakeGraphItem): string {
    const drive = this.drives.get(item.driveId)!;
    if (drive.driveType === 'personal') return `https://onedrive.live.com/redir?resid=${encodeURIComponent(item.id)}`;
    return `${drive.webUrl}${this.pathOf(item).split('/').map(encodeURIComponent).join('/')}`;
  }

  /** A page's `webUrl`. */
  pageUrl(page: FakeGraphPage): string {
    const site = this.sites.get(page.siteId)!;
    return `https://${site.hostname}${site.path}/SitePages/${encodeURIComponent(page.name)}`;
  }

  private addDrive(partial: Omit<FakeGraphDrive, 'id' | 'rootId'>): FakeGraphDrive {
    const id =
      partial.driveType === 'personal'
        ? randomBytes(8).toString('hex').toUpperCase()
        : `b!${randomBytes(48).toString('base64url')}`;
    const drive: FakeGraphDrive = { ...partial, id, rootId: '' };
    this.drives.set(id, drive);
    drive.rootId = this.addItem(id, null, 'root', true, Buffer.alloc(0)).id;
    return drive;
  }

  private addItem(driveId: string, parentId: string | null, name: string, folder: boolean, bytes: Buffer) {
    this.counter += 1;
    const personal = this.drives.get(driveId)!.driveType === 'personal';
    const n = this.counter.toString();
    const id = personal ? `${driveId}!${100 + this.counter}` : `01BYE5RZ${n.padStart(6, '0')}Q3VHPZ7JMGHMYXK4T`;
    const item: FakeGraphItem = {
      ...{ id, driveId, parentId, name, folder, bytes },
      guid: randomUUID().toUpperCase(),
      version: 1,
      deleted: false,
      chunked: false,
    };
    this.items.set(id, item);
    return item;
  }

  private find(drive: FakeGraphDrive, path: string): FakeGraphItem | undefined {
    let current = this.items.get(drive.rootId);
    for (const name of path.split('/').filter(Boolean)) {
      current = [...this.items.values()].find(
        (item) => item.parentId === current?.id && !item.deleted && item.name.toLowerCase() === name.toLowerCase(),
      );
    }
    return current;
  }

  private pathOf(item: FakeGraphItem): string {
    if (item.parentId === null) return '';
    return `${this.pathOf(this.items.get(item.parentId)!)}/${item.name}`;
  }

  private async listen(host: 'graph' | 'download'): Promise<string> {
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

  private route(host: 'graph' | 'download', req: IncomingMessage, body: Buffer, res: ServerResponse): void {
    const record: GraphRequest = {
      host,
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      route: 'unknown',
      headers: req.headers,
      token: /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '',
      status: 0,
    };
    this.requests.push(record);
    const path = new URL(record.url, 'http://fake').pathname;
    // The identity platform's endpoints, for any tenant (`common`, `organizations`, a tenant id).
    const login = /^\/[A-Za-z0-9.-]+(\/oauth2\/v2\.0\/(?:token|authorize(?:\/allow)?))$/.exec(path);
    if (host === 'graph' && login) {
      record.route = 'oauth';
      req.url = `/common${login[1]}${record.url.slice(path.length)}`;
      res.once('finish', () => (record.status = res.statusCode));
      if (this.oauth.handle(req, res, body)) return;
    }
    const answer = host === 'graph' ? this.graph(record) : this.download(record);
    record.status = answer.status;
    res.writeHead(answer.status, { 'request-id': randomUUID(), ...answer.headers });
    // A chunked download: written in two parts, so no Content-Length is sent.
    if (answer.chunked && Buffer.isBuffer(answer.body)) {
      res.write(answer.body.subarray(0, 1));
      res.end(answer.body.subarray(1));
    } else res.end(answer.body);
  }

  private graph(record: GraphRequest): Answer {
    const url = new URL(record.url, 'http://fake');
    const matched = matchRoute(url.pathname);
    record.route = matched?.route ?? 'unknown';
    if (record.method !== 'GET' && matched) {
      return graphError(405, 'BadRequest', 'Specified HTTP method is not allowed for the request target.');
    }
    if (!record.token) return unauthorized('Access token is empty.');
    if (!this.oauth.isValid(record.token)) return unauthorized('Access token has expired or is not yet valid.');
    if (!matched) {
      const segment = url.pathname.split('/').filter(Boolean).pop() ?? '';
      return graphError(400, 'BadRequest', `Resource not found for the segment '${segment}'.`);
    }
    const canned = this.canned.get(matched.route)?.shift();
    if (canned) return canned;
    return this.answer(matched, url.searchParams);
  }

  private answer(matched: { route: string; args: string[] }, query: URLSearchParams): Answer {
    const [a = '', b = ''] = matched.args;
    switch (matched.route) {
      case 'shares':
        return this.sharedItem(a);
      case 'item':
        return this.liveItem(a, b, (item) => json(200, this.itemJson(item)));
      case 'children':
        return this.liveItem(a, b || this.drives.get(a)?.rootId || '', (item) => this.children(item, query));
      case 'content':
        return this.liveItem(a, b, (item) => this.content(item));
      case 'site':
        return this.siteByPath(a, b);
      case 'drive':
        return this.siteDrive(a);
      case 'pages':
        return this.pageList(a, query);
      default:
        return this.page(a, b, query);
    }
  }

  private liveItem(driveId: string, itemId: string, then: (item: FakeGraphItem) => Answer): Answer {
    const item = this.items.get(itemId);
    if (!this.drives.has(driveId)) return graphError(404, 'itemNotFound', 'The resource could not be found.');
    if (!item || item.driveId !== driveId || item.deleted) {
      return graphError(404, 'itemNotFound', 'The resource could not be found.');
    }
    return then(item);
  }

  private sharedItem(key: string): Answer {
    if (!key.startsWith('u!') || /[^A-Za-z0-9_-]/.test(key.slice(2))) {
      return graphError(400, 'invalidRequest', 'Invalid shares key.');
    }
    const link = Buffer.from(key.slice(2), 'base64url').toString('utf8');
    // Graph resolves a link with or without its query (the `e` parameter).
    const id = this.links.get(link) ?? [...this.links].find(([known]) => known.split('?')[0] === link)?.[1];
    const item = id === undefined ? undefined : this.items.get(id);
    if (!item || item.deleted) return graphError(404, 'itemNotFound', 'The resource could not be found.');
    return json(200, this.itemJson(item));
  }

  private children(folder: FakeGraphItem, query: URLSearchParams): Answer {
    const path = `/v1.0/drives/${folder.driveId}/items/${folder.id}/children`;
    const live = [...this.items.values()].filter((item) => item.parentId === folder.id && !item.deleted);
    return this.collection(path, live, query, (item) => this.itemJson(item));
  }

  /** One page of a collection from `$skiptoken`, `$top` long, with an absolute nextLink for the rest. */
  private collection<T>(path: string, all: T[], query: URLSearchParams, render: (value: T) => Json): Answer {
    const top = Number(query.get('$top') ?? this.pageSize);
    const offset = Number(Buffer.from(query.get('$skiptoken') ?? '', 'base64url').toString('utf8') || 0);
    const value = all.slice(offset, offset + top).map(render);
    const body: Json = { '@odata.context': `${this.graphUrl}/v1.0/$metadata#Collection`, value };
    if (offset + top < all.length) {
      const next = new URLSearchParams(query);
      next.set('$skiptoken', Buffer.from(String(offset + top)).toString('base64url'));
      body['@odata.nextLink'] = `${this.graphUrl}${path}?${next.toString().replaceAll('%24', '$')}`;
    }
    return json(200, body);
  }

  private content(item: FakeGraphItem): Answer {
    if (item.folder) return graphError(400, 'invalidRequest', 'Only files can be downloaded.');
    const ticket = randomBytes(24).toString('base64url');
    this.tickets.set(ticket, item.id);
    const location = `${this.downloadUrl}/_layouts/15/download.aspx?UniqueId=${item.guid}&tempauth=${ticket}`;
    return { status: 302, headers: { location, 'content-length': '0' }, body: '' };
  }

  private download(record: GraphRequest): Answer {
    record.route = 'download';
    const url = new URL(record.url, 'http://fake');
    const item = this.items.get(this.tickets.get(url.searchParams.get('tempauth') ?? '') ?? '');
    if (url.pathname !== '/_layouts/15/download.aspx' || !item || item.deleted) {
      return { status: 403, headers: { 'content-type': 'text/plain' }, body: 'Access denied.' };
    }
    const headers: Record<string, string> = {
      'content-type': MIME[extension(item.name)] ?? 'application/octet-stream',
    };
    if (!item.chunked) headers['content-length'] = String(item.bytes.length);
    return { status: 200, headers, body: item.bytes, chunked: item.chunked };
  }

  private siteByPath(hostname: string, path: string): Answer {
    const site = [...this.sites.values()].find(
      (candidate) =>
        candidate.hostname === hostname.toLowerCase() && candidate.path.toLowerCase() === path.toLowerCase(),
    );
    if (!site) return graphError(404, 'itemNotFound', 'Requested site could not be found');
    return json(200, {
      id: site.id,
      name: site.name,
      displayName: site.displayName,
      webUrl: `https://${site.hostname}${site.path}`,
      createdDateTime: TIMESTAMP,
      lastModifiedDateTime: TIMESTAMP,
      siteCollection: { hostname: site.hostname },
    });
  }

  private siteDrive(siteId: string): Answer {
    const site = this.sites.get(siteId);
    if (!site) return graphError(404, 'itemNotFound', 'Requested site could not be found');
    const drive = this.drives.get(site.driveId)!;
    const { id, name, driveType, webUrl } = drive;
    return json(200, { id, name, driveType, webUrl, createdDateTime: TIMESTAMP, lastModifiedDateTime: TIMESTAMP });
  }

  private pageList(siteId: string, query: URLSearchParams): Answer {
    const site = this.sites.get(siteId);
    if (!site) return graphError(404, 'itemNotFound', 'Requested site could not be found');
    if (site.classic) return graphError(404, 'itemNotFound', 'Item not found');
    const live = [...this.pages.values()].filter((page) => page.siteId === siteId && !page.deleted);
    // Graph sorts the pages by name.
    live.sort((x, y) => x.name.localeCompare(y.name));
    const expand = query.get('$expand') === 'canvasLayout';
    const path = `/v1.0/sites/${siteId}/pages/microsoft.graph.sitePage`;
    return this.collection(path, live, query, (page) => this.pageJson(page, expand));
  }

  private page(siteId: string, pageId: string, query: URLSearchParams): Answer {
    const page = this.pages.get(pageId);
    if (!this.sites.has(siteId)) return graphError(404, 'itemNotFound', 'Requested site could not be found');
    if (!page || page.siteId !== siteId || page.deleted) return graphError(404, 'itemNotFound', 'Item not found');
    return json(200, this.pageJson(page, query.get('$expand') === 'canvasLayout'));
  }

  private pageJson(page: FakeGraphPage, expand: boolean): Json {
    const body: Json = {
      '@odata.type': '#microsoft.graph.sitePage',
      id: page.id,
      name: page.name,
      title: page.title,
      webUrl: this.pageUrl(page),
      eTag: FakeMicrosoftGraph.eTag(page),
      createdDateTime: TIMESTAMP,
      lastModifiedDateTime: TIMESTAMP,
      pageLayout: 'article',
      promotionKind: 'page',
      publishingState: page.published
        ? { level: 'published', versionId: `${page.version}.0` }
        : { level: 'draft', versionId: `0.${page.version}` },
    };
    if (!expand) return body;
    const column = { id: '1', width: 12, webparts: page.parts.map(webPart) };
    const canvasLayout: Json = {
      horizontalSections: [{ layout: 'oneColumn', id: '1', emphasis: 'none', columns: [column] }],
    };
    if (page.side.length > 0) canvasLayout.verticalSection = { emphasis: 'none', webparts: page.side.map(webPart) };
    return { ...body, canvasLayout };
  }

  private itemJson(item: FakeGraphItem): Json {
    const drive = this.drives.get(item.driveId)!;
    const parent = item.parentId === null ? undefined : this.items.get(item.parentId)!;
    const parentPath = parent ? `/drives/${drive.id}/root:${this.pathOf(parent)}` : undefined;
    const base: Json = {
      id: item.id,
      name: item.name,
      eTag: FakeMicrosoftGraph.eTag(item),
      createdDateTime: TIMESTAMP,
      lastModifiedDateTime: TIMESTAMP,
      webUrl: this.webUrl(item),
      size: this.sizeOf(item),
      parentReference: parent
        ? { driveType: drive.driveType, driveId: drive.id, id: parent.id, path: parentPath }
        : { driveType: drive.driveType, driveId: drive.id },
    };
    if (item.folder) {
      const childCount = [...this.items.values()].filter((c) => c.parentId === item.id && !c.deleted).length;
      // Business drives and libraries send no cTag for folders.
      const cTag = drive.driveType === 'personal' ? { cTag: FakeMicrosoftGraph.cTag(item) } : {};
      return { ...base, ...cTag, folder: { childCount }, ...(parent ? {} : { root: {} }) };
    }
    const ticket = randomBytes(24).toString('base64url');
    this.tickets.set(ticket, item.id);
    return {
      '@microsoft.graph.downloadUrl': `${this.downloadUrl}/_layouts/15/download.aspx?UniqueId=${item.guid}&tempauth=${ticket}`,
      ...base,
      cTag: FakeMicrosoftGraph.cTag(item),
      file: { mimeType: MIME[extension(item.name)] ?? 'application/octet-stream' },
    };
  }

  private sizeOf(item: FakeGraphItem): number {
    if (!item.folder) return item.bytes.length;
    let total = 0;
    for (const child of this.items.values())
      if (child.parentId === item.id && !child.deleted) total += this.sizeOf(child);
    return total;
  }
}

const ROUTES: [string, RegExp][] = [
  ['shares', /^\/v1\.0\/shares\/([^/]+)\/driveItem$/],
  ['item', /^\/v1\.0\/drives\/([^/]+)\/items\/([^/]+)$/],
  ['children', /^\/v1\.0\/drives\/([^/]+)\/(?:items\/([^/]+)|root)\/children$/],
  ['content', /^\/v1\.0\/drives\/([^/]+)\/items\/([^/]+)\/content$/],
  ['drive', /^\/v1\.0\/sites\/([^/:]+)\/drive$/],
  ['pages', /^\/v1\.0\/sites\/([^/:]+)\/pages\/microsoft\.graph\.sitePage$/],
  ['page', /^\/v1\.0\/sites\/([^/:]+)\/pages\/([^/]+)\/microsoft\.graph\.sitePage$/],
  ['site', /^\/v1\.0\/sites\/([^/:]+):(\/(?:sites|teams)\/[^/:]+)$/],
];

function matchRoute(path: string): { route: string; args: string[] } | undefined {
  for (const [route, pattern] of ROUTES) {
    const match = pattern.exec(path);
    if (match) return { route, args: match.slice(1).map((arg) => (arg === undefined ? '' : decodeURIComponent(arg))) };
  }
  return undefined;
}

function webPart(part: FakeWebPart): Json {
  const id = randomUUID();
  if ('html' in part) return { '@odata.type': '#microsoft.graph.textWebPart', id, innerHtml: part.html };
  return {
    '@odata.type': '#microsoft.graph.standardWebPart',
    id,
    webPartType: 'd1d91016-032f-456d-98a4-721247c305e8',
    data: { title: 'Image', properties: { imageSourceType: 2, altText: part.image } },
  };
}

function extension(name: string): string {
  return /\.([^.]+)$/.exec(name)?.[1]?.toLowerCase() ?? '';
}

function graphError(status: number, code: string, message: string): Answer {
  const innerError = { date: TIMESTAMP, 'request-id': randomUUID(), 'client-request-id': randomUUID() };
  return json(status, { error: { code, message, innerError } });
}

function unauthorized(message: string): Answer {
  const answer = graphError(401, 'InvalidAuthenticationToken', message);
  answer.headers!['www-authenticate'] =
    'Bearer realm="", authorization_uri="https://login.microsoftonline.com/common/oauth2/authorize", ' +
    'client_id="00000003-0000-0000-c000-000000000000"';
  return answer;
}

function json(status: number, body: unknown): Answer {
  return { status, headers: { 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify(body) };
}
