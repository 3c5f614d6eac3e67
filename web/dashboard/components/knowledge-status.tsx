import type { KnowledgeStatus } from '../types.ts';
import { useResource } from '../use-resource.ts';
import { Notice } from './notice.tsx';

/** The migration phases during which the chatbots' knowledge is being moved to a new embedding model. */
const UNDER_WAY = new Set(['copying', 'switched']);

/**
 * Says when every source is being re-embedded for a new embedding model (a gateway started with
 * another `EMBEDDINGS`), with its progress, read again every three seconds until it ends; and when
 * that was refused. Nothing is shown otherwise.
 */
export function KnowledgeStatusNotice() {
  const status = useResource<KnowledgeStatus>('/knowledge', {
    pollMs: 3000,
    poll: (data) => UNDER_WAY.has(data.migration?.phase ?? ''),
  });
  const migration = status.data?.migration;
  if (!migration) return null;
  if (migration.phase === 'copying') {
    return (
      <Notice kind="info">
        Re-embedding every source for {migration.to}: {migration.done} of {migration.total} passages. Chatbots keep
        answering from {migration.from} until it is done; sources added meanwhile wait for it.
        {migration.error ? ` The last try failed: ${migration.error}; it will try again.` : ''}
      </Notice>
    );
  }
  if (migration.phase === 'switched') {
    return <Notice kind="info">Chatbots now answer from {migration.to}; the old passages are being removed.</Notice>;
  }
  if (migration.phase === 'failed') {
    return (
      <Notice>
        Re-embedding for {migration.to} was refused: {migration.error}. Chatbots answer from {status.data?.space}.
      </Notice>
    );
  }
  return null;
}
