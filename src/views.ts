import type { ChatbotDetailView, ChatbotListView } from './contract/chatbot.ts';
import type { ConnectionView, DashboardConnection } from './contract/connection.ts';
import type { KnowledgeStatus } from './contract/knowledge.ts';
import type { OperatorSource, SourceSyncState, SourceView } from './contract/source.ts';
import type { HybridHit } from './rag/search-engine.ts';
import type { Chatbot } from './chatbots/chatbot.ts';
import type { Connection } from './connections/connection.ts';
import type { Source } from './sources/source.ts';
import type { SpaceMigrationState, SpaceSetting } from './store/embedding-space-store.ts';
import { formatTimestamp } from './timestamp.ts';

/** SPEC's chatbot list view: exactly these fields. */
export function chatbotListView(chatbot: Chatbot): ChatbotListView {
  const { id, name, slug, provider, is_active, created_at } = chatbot;
  return { id, name, slug, provider, is_active, created_at };
}

/** SPEC's chatbot detail view: the list view plus system prompt and fallback message. */
export function chatbotDetailView(chatbot: Chatbot): ChatbotDetailView {
  const { system_prompt, fallback_message } = chatbot;
  return { ...chatbotListView(chatbot), system_prompt, fallback_message };
}

/** SPEC's source object: exactly these fields (the failure reason is for the operator only). */
export function sourceView(source: Source): SourceView {
  const { id, type, title, url, status, page_count, created_at } = source;
  return { id, type, title, url, status, page_count, created_at };
}

/**
 * The operator's source object (CLI, dashboard): SPEC's fields plus the chatbot, the failure reason,
 * and for connector sources what they read (`reference`) and through which connection.
 */
export function operatorSourceView(source: Source): OperatorSource {
  return {
    ...sourceView(source),
    chatbot_id: source.chatbot_id,
    error: source.error,
    ...(source.reference ? { reference: source.reference, connection_id: source.connection_id } : {}),
  };
}

/**
 * The operator's source object with, for url and connector sources, its re-sync schedule (`refresh`),
 * what the last sync did (`last_sync`: when, the error if it failed, documents added, changed,
 * removed and unchanged) and when the next is due (`next_sync_at`).
 */
export function operatorSourceSyncView(
  source: Source,
  sync: SourceSyncState | undefined,
): OperatorSource & Partial<SourceSyncState> {
  return { ...operatorSourceView(source), ...sync };
}

/** A connection as the CLI prints it (DESIGN's fields; the secret is never shown). */
export function connectionView(connection: Connection): ConnectionView {
  const { id, service, status, created_at } = connection;
  return { id, service, status, created_at };
}

/** A connection as the dashboard lists it: also how it signs in, who or what is connected, and where. */
export function dashboardConnectionView(connection: Connection): DashboardConnection {
  const { auth_kind, label, base_url } = connection;
  return { ...connectionView(connection), auth_kind, label, base_url };
}

/**
 * The embedding space the gateways serve and the re-embedding into another one, if any (the last one,
 * kept with how it ended), as `switchboard status` and the dashboard show them.
 */
export function embeddingStatusView(
  active: SpaceSetting | undefined,
  migration: SpaceMigrationState | undefined,
): KnowledgeStatus {
  return {
    space: active?.space ?? null,
    embeddings: active?.embeddings ?? null,
    migration: migration
      ? {
          from: migration.from,
          to: migration.to,
          embeddings: migration.to_embeddings,
          phase: migration.phase,
          done: migration.done,
          total: migration.total,
          started_at: formatTimestamp(migration.started_at),
          updated_at: formatTimestamp(migration.updated_at),
          error: migration.error ?? null,
        }
      : null,
  };
}

/**
 * What `retrieve` shows (the CLI command and the dashboard's "try a question"): the engine, and the
 * fused results in rank order with each method's rank and score and the passage itself.
 */
export function retrievalView(engine: string, hits: HybridHit[]) {
  return {
    engine,
    results: hits.map((hit, i) => ({
      rank: i + 1,
      score: hit.score,
      text: hit.text ?? null,
      vector: hit.vector ?? null,
      chunk_id: hit.chunk.id,
      source_id: hit.chunk.sourceId,
      title: hit.chunk.title,
      url: hit.chunk.url,
      content: hit.chunk.content,
    })),
  };
}
