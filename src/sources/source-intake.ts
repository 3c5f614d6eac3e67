import path from 'node:path';
import type { Clock } from '../clock.ts';
import type { SourceSyncState } from '../contract/source.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import { MAX_FILE_BYTES } from '../ingest/document-parser.ts';
import { NOT_PUBLIC_URL } from '../net/ssrf-guard.ts';
import type { RetrievalIndex } from '../rag/retrieval-index.ts';
import type { IngestionQueue } from '../store/ingestion-queue.ts';
import type { AccountStore } from '../store/account-store.ts';
import type { Connection } from '../connections/connection.ts';
import type { ConnectionStore } from '../store/connection-store.ts';
import { formatTimestamp } from '../timestamp.ts';
import type { SourceStore } from '../store/source-store.ts';
import { isSyncable, REFRESH_SCHEDULES, type Refresh, type Source } from './source.ts';
import {
  BACKEND_ONLY_TYPES,
  CONNECTOR_TYPES,
  isConnectorType,
  SERVICE_LABELS,
  type Connector,
} from './connectors/connector.ts';
import { connectorFor } from './connectors/connector-registry.ts';

const NOT_SYNCED = 'Only url and connector sources are synced; upload a file or text again to change it.';

/** A refresh schedule as given (default weekly); anything else is refused. */
function refreshOf(value: string | undefined): Refresh | undefined {
  if (value === undefined) return undefined;
  if (!(REFRESH_SCHEDULES as readonly string[]).includes(value)) {
    throw new ValidationError(`refresh must be one of: ${REFRESH_SCHEDULES.join(', ')}.`);
  }
  return value as Refresh;
}

const FILE_TYPES = ['pdf', 'docx', 'pptx', 'txt', 'md', 'csv', 'vtt', 'srt'];

/**
 * Adding and deleting training sources: a new source is stored `pending` and queued for ingestion
 * (which runs off the request path); deleting one takes its chunks out of retrieval at once.
 */
export class SourceIntake {
  private readonly sources: SourceStore;
  private readonly queue: IngestionQueue;
  private readonly clock: Clock;
  private readonly accounts: AccountStore;
  private readonly connections: ConnectionStore;
  private readonly checkDestination: (url: URL) => Promise<void>;
  /** A local ingestion worker may look at once. */
  onQueued: () => void = () => {};

  constructor(deps: {
    sources: SourceStore;
    queue: IngestionQueue;
    clock: Clock;
    accounts: AccountStore;
    connections: ConnectionStore;
    /**
     * Refuses a url source's start URL that the crawler would refuse (the SSRF guard's checks: a
     * literal address, a local name, and every address the name resolves to), before it is stored.
     */
    checkDestination: (url: URL) => Promise<void>;
  }) {
    this.sources = deps.sources;
    this.queue = deps.queue;
    this.clock = deps.clock;
    this.accounts = deps.accounts;
    this.connections = deps.connections;
    this.checkDestination = deps.checkDestination;
  }

  addText(chatbotId: string, text: string, title?: string): Promise<Source> {
    if (text.length > 1_000_000) throw new ValidationError('text must be at most 1000000 characters.');
    return this.queued(chatbotId, { type: 'text', title, content: text });
  }

  async addUrl(chatbotId: string, rawUrl: string, title?: string, refresh?: string): Promise<Source> {
    const url = URL.parse(rawUrl);
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password) {
      throw new ValidationError('url must be an absolute http or https URL without credentials.');
    }
    url.hash = '';
    const schedule = refreshOf(refresh);
    try {
      await this.checkDestination(url);
    } catch (error) {
      throw new ValidationError(NOT_PUBLIC_URL, { cause: error });
    }
    return this.queued(chatbotId, { type: 'url', url: url.toString(), title, refresh: schedule });
  }

  addFile(chatbotId: string, filename: string, bytes: Buffer): Promise<Source> {
    const name = path.basename(filename);
    const extension = path.extname(name).slice(1).toLowerCase();
    if (!FILE_TYPES.includes(extension)) {
      throw new ValidationError('file must be a PDF, DOCX, PPTX, TXT, MD, CSV, VTT or SRT file.');
    }
    if (bytes.length > MAX_FILE_BYTES) throw new ValidationError('file must be at most 20 MB.');
    if (bytes.length === 0) throw new ValidationError('file is empty.');
    return this.queued(chatbotId, { type: 'file', title: name, content: bytes });
  }

  /**
   * Adds a source read through a connector: the type must be one the account may use (backend-only
   * types need support to enable them), the reference one the connector reads, and the connection
   * the owner's own, for the connector's service. Without a connection id, the owner's newest working
   * connection of that service is used.
   */
  async addConnector(
    userId: string,
    chatbotId: string,
    input: { type: string; reference: string; connectionId?: string; title?: string; refresh?: string },
  ): Promise<Source> {
    if (!isConnectorType(input.type)) {
      throw new ValidationError(`type must be one of: url, file, text, ${CONNECTOR_TYPES.join(', ')}.`);
    }
    if (BACKEND_ONLY_TYPES.includes(input.type)) {
      const enabled = await this.accounts.enabledConnectors(userId);
      if (!enabled.includes(input.type)) {
        throw new ValidationError(`Source type ${input.type} is not enabled for this account.`);
      }
    }
    const refresh = refreshOf(input.refresh);
    const connector = await connectorFor(input.type);
    const reference = connector.parseReference(input.reference.trim());
    const connection = await this.connectionFor(userId, connector, input.connectionId);
    return this.queued(chatbotId, {
      type: input.type,
      title: input.title,
      reference,
      connectionId: connection?.id ?? '',
      refresh,
    });
  }

  private async connectionFor(
    userId: string,
    connector: Connector,
    connectionId: string | undefined,
  ): Promise<Connection | undefined> {
    const service = connector.service;
    if (connectionId !== undefined && connectionId !== '') {
      const connection = await this.connections.get(connectionId);
      if (connection.user_id !== userId) throw new NotFoundError('Connection not found.');
      if (connection.service !== service) {
        const wanted = service ? `a ${SERVICE_LABELS[service]} connection` : 'no connection';
        throw new ValidationError(`${connector.type} sources need ${wanted}.`);
      }
      return connection;
    }
    // A connector that reads without one (a public help centre) uses a connection only when named.
    if (service === null || connector.connectionOptional) return undefined;
    const own = (await this.connections.listForUser(userId)).filter((c) => c.service === service);
    const usable = own.find((c) => c.status === 'active') ?? own[0];
    if (!usable) {
      throw new ValidationError(
        `Connect ${SERVICE_LABELS[service]} first: this account has no ${SERVICE_LABELS[service]} connection.`,
      );
    }
    return usable;
  }

  async remove(sourceId: string, index: Pick<RetrievalIndex, 'removeSource'>): Promise<void> {
    const source = await this.sources.get(sourceId);
    await this.sources.softDelete(sourceId);
    await this.queue.cancelSync(source.chatbot_id, sourceId);
    await index.removeSource(source.chatbot_id, sourceId);
  }

  /**
   * Syncs a url or connector source now, whatever its schedule: `running` when a gateway is
   * ingesting it already (it syncs again when that run ends). A failed source, of any type, is
   * ingested afresh (`pending` again).
   */
  async syncNow(sourceId: string): Promise<{ source: Source; sync: 'queued' | 'running' }> {
    let source = await this.sources.get(sourceId);
    // A failed file or text is ingested again from what was uploaded; a done one has nothing to sync.
    if (!isSyncable(source.type) && source.status !== 'failed') throw new ValidationError(NOT_SYNCED);
    // Pending before it is queued, so a gateway that claims it at once is not overwritten.
    if (source.status === 'failed') source = await this.sources.setStatus(source.id, 'pending');
    const sync = await this.queue.syncNow(source.chatbot_id, source.id, this.clock.nowMicros());
    if (sync === 'queued') this.onQueued();
    return { source, sync };
  }

  /** Sets a source's re-sync schedule; the next sync then falls one interval from now (none when off). */
  async setRefresh(sourceId: string, value: string): Promise<Source> {
    const source = await this.sources.get(sourceId);
    if (!isSyncable(source.type)) throw new ValidationError(NOT_SYNCED);
    const refresh = refreshOf(value)!;
    const updated = await this.sources.setRefresh(source, refresh);
    await this.queue.scheduleByRefresh(source.chatbot_id, source.id, refresh, this.clock.nowMicros());
    return updated;
  }

  /** What an owner sees of a source's syncs: its schedule, the last sync, and when the next is due. */
  async syncState(source: Source): Promise<SourceSyncState | undefined> {
    if (!isSyncable(source.type)) return undefined;
    const [last, next] = await Promise.all([
      this.sources.lastSync(source),
      this.queue.nextSync(source.chatbot_id, source.id),
    ]);
    return { refresh: source.refresh, last_sync: last, next_sync_at: next === undefined ? '' : formatTimestamp(next) };
  }

  private async queued(chatbotId: string, input: Parameters<SourceStore['create']>[1]): Promise<Source> {
    const source = await this.sources.create(chatbotId, input);
    await this.queue.enqueue(chatbotId, source.id, this.clock.nowMicros());
    this.onQueued();
    return source;
  }
}
