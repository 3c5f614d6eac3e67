import path from 'node:path';
import type { Clock } from '../clock.ts';
import { ValidationError } from '../errors.ts';
import { MAX_FILE_BYTES } from '../ingest/document-parser.ts';
import type { RetrievalIndex } from '../rag/retrieval-index.ts';
import type { IngestionQueue } from '../store/ingestion-queue.ts';
import type { Source, SourceStore } from '../store/source-store.ts';

const FILE_TYPES = ['pdf', 'docx', 'pptx', 'txt', 'md', 'csv'];

/**
 * Adding and deleting training sources: a new source is stored `pending` and queued for ingestion
 * (which runs off the request path); deleting one takes its chunks out of retrieval at once.
 */
export class SourceIntake {
  private readonly sources: SourceStore;
  private readonly queue: IngestionQueue;
  private readonly clock: Clock;
  /** A local ingestion worker may look at once. */
  onQueued: () => void = () => {};

  constructor(sources: SourceStore, queue: IngestionQueue, clock: Clock) {
    this.sources = sources;
    this.queue = queue;
    this.clock = clock;
  }

  addText(chatbotId: string, text: string, title?: string): Promise<Source> {
    if (text.length > 1_000_000) throw new ValidationError('text must be at most 1000000 characters.');
    return this.queued(chatbotId, { type: 'text', title, content: text });
  }

  addUrl(chatbotId: string, rawUrl: string, title?: string): Promise<Source> {
    const url = URL.parse(rawUrl);
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password) {
      throw new ValidationError('url must be an absolute http or https URL without credentials.');
    }
    url.hash = '';
    return this.queued(chatbotId, { type: 'url', url: url.toString(), title });
  }

  addFile(chatbotId: string, filename: string, bytes: Buffer): Promise<Source> {
    const name = path.basename(filename);
    const extension = path.extname(name).slice(1).toLowerCase();
    if (!FILE_TYPES.includes(extension)) {
      throw new ValidationError('file must be a PDF, DOCX, PPTX, TXT, MD or CSV file.');
    }
    if (bytes.length > MAX_FILE_BYTES) throw new ValidationError('file must be at most 20 MB.');
    if (bytes.length === 0) throw new ValidationError('file is empty.');
    return this.queued(chatbotId, { type: 'file', title: name, content: bytes });
  }

  async remove(sourceId: string, index: RetrievalIndex): Promise<void> {
    const source = await this.sources.get(sourceId);
    await this.sources.softDelete(sourceId);
    await index.removeSource(source.chatbot_id, sourceId);
  }

  private async queued(chatbotId: string, input: Parameters<SourceStore['create']>[1]): Promise<Source> {
    const source = await this.sources.create(chatbotId, input);
    await this.queue.enqueue(chatbotId, source.id, this.clock.nowMicros());
    this.onQueued();
    return source;
  }
}
