import type { SourceView, SyncRecord } from '../contract/source.ts';
import { ValidationError } from '../errors.ts';
import { CONNECTOR_TYPES } from './connectors/connector.ts';

// The training source: the domain model its store persists, and the rules of its fields.

/** Every type of source: the three the gateway reads itself, then the connectors'. */
export const SOURCE_TYPES = ['url', 'file', 'text', ...CONNECTOR_TYPES] as const;
/** One of {@link SOURCE_TYPES}. */
export type SourceType = (typeof SOURCE_TYPES)[number];

/** How often a url or connector source is synced again (file and text sources have nothing to sync). */
export const REFRESH_SCHEDULES = ['off', 'daily', 'weekly'] as const;
/** One of {@link REFRESH_SCHEDULES}. */
export type Refresh = (typeof REFRESH_SCHEDULES)[number];

/** Whether sources of a type read something that can change (a site, a service), and so are synced. */
export function isSyncable(type: SourceType): boolean {
  return type === 'url' || (CONNECTOR_TYPES as readonly string[]).includes(type);
}

/**
 * The schedule a source of a type keeps: the one asked for (weekly when none) for a syncable type,
 * '' for a file or text source.
 */
export function refreshFor(type: SourceType, requested?: Refresh): Refresh | '' {
  return isSyncable(type) ? (requested ?? 'weekly') : '';
}

/** The time between two scheduled syncs. */
export const REFRESH_INTERVAL_MS: Record<Exclude<Refresh, 'off'>, number> = {
  daily: 24 * 60 * 60_000,
  weekly: 7 * 24 * 60 * 60_000,
};

/** Where a source is in its ingestion, as SPEC names the steps. */
export const SOURCE_STATUSES = ['pending', 'crawling', 'processing', 'done', 'failed'] as const;
/** One of {@link SOURCE_STATUSES}. */
export type SourceStatus = (typeof SOURCE_STATUSES)[number];

/** A training source with SPEC's fields (the contract's `SourceView`), plus its chatbot and the stored failure reason. */
export interface Source extends SourceView {
  chatbot_id: string;
  type: SourceType;
  status: SourceStatus;
  error: string;
  /** What a connector source reads (its canonical link or id); '' for url, file and text sources. */
  reference: string;
  /** The connection a connector source reads through; '' when none. */
  connection_id: string;
  /** The re-sync schedule of a url or connector source; '' for file and text sources. */
  refresh: Refresh | '';
}

// What a sync did goes to the dashboard and the CLI as it is stored.
export type { SyncRecord };

/**
 * What is stored of each document of a url or connector source, by document id (a connector's id,
 * or a page's URL): enough to tell whether it changed, and which chunks are its.
 */
export interface SourceDocument {
  title: string;
  /** The service's change token, or a page's sitemap `<lastmod>`; '' when none was given. */
  change_token: string;
  chunks: number;
  /** SHA-256 of the parsed text: a document fetched again with the same hash is not re-embedded. */
  hash?: string;
  /** A page's validators, for a conditional request. */
  etag?: string;
  last_modified?: string;
  /** The links a page gave the crawl, followed again when it has not changed. */
  links?: string[];
}

/** What is known of a source when it is added. */
export interface NewSource {
  type: SourceType;
  title?: string;
  url?: string;
  /** The raw text of a `text` source, or the bytes of a `file` source. */
  content?: string | Buffer;
  reference?: string;
  connectionId?: string;
  refresh?: Refresh;
}

/** A source's title is at most this long: refused above it when given, cut to it when ingestion finds one. */
export const MAX_TITLE_LENGTH = 300;

/**
 * The rules of a new source's own fields (a ValidationError naming the field otherwise): a title of
 * at most {@link MAX_TITLE_LENGTH} characters, and text for a text source. Returns the title, trimmed.
 */
export function checkNewSource(input: NewSource): string {
  const title = (input.title ?? '').trim();
  if (title.length > MAX_TITLE_LENGTH) {
    throw new ValidationError(`title must be at most ${MAX_TITLE_LENGTH} characters.`);
  }
  if (input.type === 'text' && !String(input.content ?? '').trim())
    throw new ValidationError('text must not be empty.');
  return title;
}
