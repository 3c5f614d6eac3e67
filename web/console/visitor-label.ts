import type { ConversationSummary } from './console-protocol.ts';
import { visitorLabel } from '../shared/visitor-label.ts';

export { channelName, visitorLabel } from '../shared/visitor-label.ts';

/** The lead's other ways to reach the visitor, besides the one {@link visitorLabel} shows: `''` when none. */
export function visitorContact(summary: Pick<ConversationSummary, 'lead' | 'source' | 'session_id'>): string {
  const lead = summary.lead;
  if (!lead) return '';
  const label = visitorLabel(summary);
  return [lead.email, lead.phone].filter((value) => value && value !== label).join(' · ');
}
