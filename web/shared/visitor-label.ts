/**
 * How the dashboard and the agent console name a conversation's visitor and its channel: one rule,
 * so an owner and their agents call the same visitor the same thing.
 */

/** What both know of a conversation's visitor. */
export interface VisitorFacts {
  session_id: string;
  /** The channel: `embed`, `telegram`, `whatsapp` or `api`. */
  source: string;
  /** What the visitor left in the lead form (the console also knows the phone). */
  lead: { name: string; email: string; phone?: string } | null;
  /** The owner's own conversation in the dashboard's widget preview. */
  preview?: boolean;
}

interface ChannelText {
  /** The channel's name, e.g. "Web widget". */
  name: string;
  /** Who a visitor of this channel is, before they say. */
  visitor: string;
  /** The session id's prefix on this channel (src/conversations/session.ts reads the same ones). */
  prefix: string;
}

/** By `source`. */
const CHANNELS: Record<string, ChannelText> = {
  embed: { name: 'Web widget', visitor: 'Web visitor', prefix: 'embed-' },
  telegram: { name: 'Telegram', visitor: 'Telegram', prefix: 'tg_' },
  whatsapp: { name: 'WhatsApp', visitor: 'WhatsApp', prefix: 'wa_' },
  api: { name: 'API', visitor: 'API', prefix: 'api-' },
};

/** The conversation's channel: its source, or when that is unknown, its session id's prefix. */
function channelOf(facts: Pick<VisitorFacts, 'source' | 'session_id'>): ChannelText | undefined {
  return (
    CHANNELS[facts.source] ?? Object.values(CHANNELS).find((channel) => facts.session_id.startsWith(channel.prefix))
  );
}

/** The channel's name (`Web widget`, `Telegram`, `WhatsApp`, `API`), else the source as given. */
export function channelName(facts: Pick<VisitorFacts, 'source' | 'session_id'>): string {
  return channelOf(facts)?.name ?? (facts.source || 'Unknown channel');
}

/**
 * Who the visitor is: their lead's name, else its email, else its phone, else the channel's visitor
 * and a short id (`Web visitor · d6a4`, `WhatsApp · +4915112345678`; `Your preview · d6a4` for the
 * owner's own preview).
 */
export function visitorLabel(facts: VisitorFacts): string {
  const lead = facts.lead;
  const given = lead?.name.trim() || lead?.email.trim() || lead?.phone?.trim();
  if (given) return given;
  const who = facts.preview ? 'Your preview' : (channelOf(facts)?.visitor ?? facts.source);
  return `${who} · ${shortSessionId(facts.session_id)}`;
}

/**
 * A session id short enough to tell conversations apart: without its channel prefix, a UUID's first
 * four characters, a WhatsApp chat's phone number, a short id as it is.
 */
export function shortSessionId(sessionId: string): string {
  const rest = sessionId.replace(/^(embed-|wa_|tg_|api-)/, '');
  const phone = /^(\d{6,15})@s\.whatsapp\.net$/.exec(rest);
  if (phone) return `+${phone[1]!}`;
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(rest)) return rest.slice(0, 4);
  return rest.length <= 20 ? rest : `${rest.slice(0, 8)}…`;
}
