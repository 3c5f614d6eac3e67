/**
 * Training sources as SPEC's public API and the dashboard show them. Part of the contract (see
 * README.md beside this file).
 */

/** SPEC's source types (the last four are backend-only). */
export type SourceType =
  | 'url'
  | 'file'
  | 'text'
  | 'youtube'
  | 'google_drive'
  | 'notion'
  | 'dropbox'
  | 'onedrive'
  | 'sharepoint'
  | 'zendesk'
  | 'gitbook';

/** The connector types the dashboard adds (SPEC: "Add from dashboard: yes"). */
export type DashboardConnectorType = 'youtube' | 'google_drive' | 'notion' | 'dropbox';

export type SourceStatus = 'pending' | 'crawling' | 'processing' | 'done' | 'failed';

/** A url or connector source's re-sync schedule. */
export type Refresh = 'off' | 'daily' | 'weekly';

/** SPEC's source object: exactly these fields. */
export interface SourceView {
  id: string;
  type: SourceType;
  title: string;
  url: string;
  status: SourceStatus;
  page_count: number;
  created_at: string;
}

/**
 * The operator's source object (CLI, dashboard): SPEC's fields plus the chatbot, the failure reason
 * ('' when none), and for connector sources what they read and through which connection.
 */
export interface OperatorSource extends SourceView {
  chatbot_id: string;
  error: string;
  reference?: string;
  connection_id?: string;
}

/** What the last sync of a source did (its first ingestion counts as one). */
export interface SyncRecord {
  /** When it ended, ISO 8601; '' before the first. */
  at: string;
  /** Why it failed; '' when it succeeded. */
  error: string;
  added: number;
  changed: number;
  removed: number;
  unchanged: number;
}

/** A url or connector source's schedule and syncs, as the dashboard and the CLI show them. */
export interface SourceSyncState {
  refresh: Refresh | '';
  last_sync: SyncRecord;
  /**
   * When the next scheduled sync is due, ISO 8601 ('' when none is: refresh off, or not ingested
   * yet). Failed url and connector sources are tried again on their schedule too.
   */
  next_sync_at: string;
}

/** How long a text source's text is: what the dashboard shows of it where other sources show pages. */
export interface TextSize {
  characters: number;
  words: number;
}

/**
 * `GET /dashboard/api/chatbots/{id}/sources` (one element), and what adding or changing a source
 * answers: the operator's source, its syncs (url and connector sources only), its text's size (text
 * sources only), and what it is doing now ("read 3 of 10 documents"; '' when idle).
 */
export type DashboardSource = OperatorSource & Partial<SourceSyncState> & Partial<TextSize> & { progress: string };

/** `POST /dashboard/api/sources/{id}/sync`: the source, and whether its sync was queued or is running already. */
export type SyncStarted = DashboardSource & { sync: 'queued' | 'running' };

/**
 * `POST /dashboard/api/chatbots/{id}/sources`: text (`text`), a site (`url`) or a connector type
 * (`url` is then the link or id to read). Files are uploaded to `…/files` as raw bytes instead.
 */
export interface NewSourceBody {
  type: 'text' | 'url' | DashboardConnectorType;
  title?: string;
  text?: string;
  url?: string;
  connection_id?: string;
  refresh?: Refresh;
}

/** `PATCH /dashboard/api/sources/{id}`: a url or connector source's re-sync schedule. */
export interface SourcePatchBody {
  refresh: Refresh;
}
