import { createHash } from 'node:crypto';
import type { ConnectionCredentials } from '../connections/connection-credentials.ts';
import { NotFoundError } from '../errors.ts';
import { parseDocument } from '../ingest/document-parser.ts';
import { extractMainContent } from '../ingest/html-extractor.ts';
import type { ParsedDocument } from '../ingest/parsed-document.ts';
import type { Logger } from '../logger.ts';
import type { Source, SourceDocument } from './source.ts';
import { ConnectorError, DocumentGoneError, ReconnectError } from './connectors/connector-errors.ts';
import pLimit, { type LimitFunction } from 'p-limit';
import { serializedHttp, type ConnectorHttp } from './connectors/connector-http.ts';
import { connectorFor } from './connectors/connector-registry.ts';
import {
  CONNECTOR_LABELS,
  SERVICE_LABELS,
  type Connector,
  type ConnectorAuth,
  type ConnectorContext,
  type ConnectorDocument,
  type ConnectorLimits,
  type ConnectorType,
  type FetchedDocument,
} from './connectors/connector.ts';

/** One document listed, and read unless unchanged. `key` is its part of the chunk ids (`{source}:{key}:{n}`). */
export interface ReadDocument {
  key: string;
  document: ConnectorDocument;
  /** Undefined when its change token is the one recorded: it was not fetched again. */
  parsed?: ParsedDocument;
  /** Whether it came as a paged file (PDF pages, PPTX slides), whose page count SPEC reports. */
  paged: boolean;
}

/** What a connector source holds, read. */
export interface ConnectorRead {
  title: string;
  single: boolean;
  documents: ReadDocument[];
  /** Listed documents that could not be read this time, for a reason other than being gone: kept as they were. */
  failed: string[];
}

/**
 * Reads a connector source: lists the documents behind its reference and fetches and parses each
 * one in turn (progress "read n of m documents"). A document over the size cap is refused before its
 * download where its size is listed. In a collection, a document that cannot be read is skipped and
 * logged; a single document that cannot be read, a lost grant, or a collection of which nothing
 * could be read fails the source. A document whose change token is the one `previous` recorded is not
 * fetched again.
 */
export class ConnectorReader {
  private readonly deps: {
    credentials: ConnectionCredentials;
    http: ConnectorHttp;
    limits: ConnectorLimits;
    logger: Logger;
  };

  /** One queue of requests per connection, shared by every source that reads through it here. */
  private readonly queues = new Map<string, { limit: LimitFunction; requests: number }>();

  constructor(deps: ConnectorReader['deps']) {
    this.deps = deps;
  }

  async read(
    source: Source,
    progress: (line: string) => Promise<void>,
    previous: ReadonlyMap<string, SourceDocument> = new Map(),
  ): Promise<ConnectorRead> {
    const type = source.type as ConnectorType;
    const connector = await connectorFor(type);
    const context: ConnectorContext = {
      auth: await this.auth(source, connector),
      http: this.httpFor(source.connection_id),
      limits: this.deps.limits,
    };
    if (!context.auth && connector.service !== null && !connector.connectionOptional) {
      throw new ConnectorError(`Connect ${SERVICE_LABELS[connector.service]} and add this source again.`);
    }
    await progress('listing documents');
    const listing = await connector.list(source.reference, context);
    const listed = listing.documents.slice(0, this.deps.limits.maxDocuments);
    if (listed.length === 0) {
      throw new ConnectorError(`${listing.title || CONNECTOR_LABELS[type]} holds no document that can be read.`);
    }
    const documents: ReadDocument[] = [];
    const skipped: string[] = [];
    const failed: string[] = [];
    for (const [index, document] of listed.entries()) {
      await progress(`read ${index} of ${listed.length} documents`);
      const key = documentKey(document.id);
      const before = previous.get(document.id);
      if (before && before.change_token !== '' && before.change_token === document.changeToken) {
        documents.push({ key, document, paged: false });
        continue;
      }
      try {
        const fetched = await this.fetchOne(connector, source.reference, document, context);
        documents.push({ key, document, ...(await parse(fetched, document)) });
      } catch (error) {
        if (listing.single || error instanceof ReconnectError) throw error;
        const reason = error instanceof Error ? error.message : String(error);
        skipped.push(`${document.title}: ${reason}`);
        if (!(error instanceof DocumentGoneError)) failed.push(document.id);
        this.deps.logger.warn({ source_id: source.id, document_id: document.id, reason }, 'document skipped');
      }
    }
    await progress(`read ${listed.length} of ${listed.length} documents`);
    if (documents.length === 0) throw new ConnectorError(`No document could be read. ${skipped[0] ?? ''}`.trim());
    return { title: listing.title, single: listing.single, documents, failed };
  }

  private async fetchOne(
    connector: Connector,
    reference: string,
    document: ConnectorDocument,
    context: ConnectorContext,
  ): Promise<FetchedDocument> {
    const cap = this.deps.limits.maxDocumentBytes;
    if (document.size !== null && document.size > cap) {
      throw new ConnectorError(`${document.title} is larger than the ${Math.round(cap / 1024 / 1024)} MB limit.`);
    }
    return connector.fetch(reference, document, context);
  }

  private async auth(source: Source, connector: Connector): Promise<ConnectorAuth | undefined> {
    if (!source.connection_id) return undefined;
    try {
      return await this.deps.credentials.forConnection(source.connection_id, this.deps.http);
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
      const service = connector.service;
      const label = service ? SERVICE_LABELS[service] : CONNECTOR_LABELS[connector.type];
      throw new ReconnectError(
        `The ${label} connection of this source was deleted; connect ${label} and add the source again.`,
      );
    }
  }

  private httpFor(connectionId: string): ConnectorHttp {
    if (!connectionId) return this.deps.http;
    return serializedHttp(this.deps.http, async (task) => {
      let queue = this.queues.get(connectionId);
      if (!queue) this.queues.set(connectionId, (queue = { limit: pLimit(1), requests: 0 }));
      queue.requests += 1;
      try {
        return await queue.limit(task);
      } finally {
        // A queue with nothing in it is dropped, so the map holds only connections in use.
        if (--queue.requests === 0) this.queues.delete(connectionId);
      }
    });
  }
}

/** A document id (or a page URL) as a chunk-id part: as it is when short and plain, else a hash of it. */
export function documentKey(id: string): string {
  return /^[A-Za-z0-9_-]{1,64}$/.test(id) ? id : createHash('sha256').update(id).digest('base64url').slice(0, 22);
}

async function parse(
  fetched: FetchedDocument,
  document: ConnectorDocument,
): Promise<{ parsed: ParsedDocument; paged: boolean }> {
  let parsed: ParsedDocument;
  if (fetched.kind === 'file') parsed = await parseDocument({ filename: fetched.filename, bytes: fetched.bytes });
  else if (fetched.kind === 'markdown')
    parsed = await parseDocument({ filename: 'document.md', bytes: Buffer.from(fetched.markdown) });
  else parsed = extractMainContent(fetched.html);
  if (parsed.pages.every((page) => page.text.trim() === ''))
    throw new ConnectorError(`${document.title} has no text to read.`);
  const paged = fetched.kind === 'file' && /\.(pdf|pptx)$/i.test(fetched.filename);
  return { parsed: { ...parsed, title: document.title || parsed.title }, paged };
}
