import type { Chatbot } from '../chatbots/chatbot.ts';
import type { AgentConversation, AgentLead, AgentPush, ConversationRef } from '../contract/agent-protocol.ts';
import { NotFoundError } from '../errors.ts';
import type { ReceivedSignal } from '../redis/signal-bus.ts';
import type { ChatbotStore } from '../store/chatbot-store.ts';
import type { ConversationStore } from '../store/conversation-store.ts';
import type { Lead, LeadStore } from '../store/lead-store.ts';

/** The signals that become pushes to agents. */
export type ConversationSignal = Extract<
  ReceivedSignal,
  { kind: 'message' | 'escalated' | 'lead' | 'stream' | 'stream-end' }
>;

/** Conversations listed per chatbot at sign-in, and in all. */
const PER_CHATBOT = 100;
const LISTED = 200;

/** What agents see of a lead: who the visitor is, not the custom fields of the form. */
function agentLead(lead: Lead): AgentLead {
  return { name: lead.name, email: lead.email, phone: lead.phone };
}

const key = (ref: ConversationRef): string => `${ref.chatbot_id}\n${ref.session_id}`;

/**
 * The owner's conversations as agents see them, in the sign-in list and in every push: each with its
 * chatbot's name, its last activity and the visitor's lead (read from Redis when the frame is made, so
 * a push never shows an older lead than the one stored).
 */
export class AgentConversations {
  private readonly chatbots: ChatbotStore;
  private readonly conversations: ConversationStore;
  private readonly leads: LeadStore;

  constructor(deps: { chatbots: ChatbotStore; conversations: ConversationStore; leads: LeadStore }) {
    this.chatbots = deps.chatbots;
    this.conversations = deps.conversations;
    this.leads = deps.leads;
  }

  /**
   * The owner's live (active since `sinceMillis`) and escalated or held conversations, newest activity
   * first, at most 100 per chatbot and 200 in all.
   */
  async list(userId: string, sinceMillis: number): Promise<AgentConversation[]> {
    const chatbots = await this.chatbots.listForUser(userId);
    const names = new Map(chatbots.map((chatbot) => [chatbot.id, chatbot.name]));
    const rows = (
      await Promise.all(chatbots.map((chatbot) => this.conversations.recent(chatbot.id, PER_CHATBOT)))
    ).flat();
    const listed = rows
      .filter((row) => row.escalated_at || row.taken_over_by || Date.parse(row.last_activity_at) >= sinceMillis)
      .sort((a, b) => b.last_activity_at.localeCompare(a.last_activity_at))
      .slice(0, LISTED);
    const leads = await this.leadsOf(listed);
    return listed.map((row) => ({
      chatbot_id: row.chatbot_id,
      session_id: row.session_id,
      source: row.source,
      escalated_at: row.escalated_at,
      taken_over_by: row.taken_over_by,
      last_message: row.last_message,
      chatbot_name: names.get(row.chatbot_id) ?? '',
      last_activity_at: row.last_activity_at,
      lead: leads.get(key(row)) ?? null,
    }));
  }

  /** The leads of these conversations, by {@link key}: one bulk read per chatbot. */
  private async leadsOf(refs: readonly ConversationRef[]): Promise<Map<string, AgentLead>> {
    const sessions = new Map<string, string[]>();
    for (const ref of refs) sessions.set(ref.chatbot_id, [...(sessions.get(ref.chatbot_id) ?? []), ref.session_id]);
    const found = new Map<string, AgentLead>();
    await Promise.all(
      [...sessions].map(async ([chatbotId, sessionIds]) => {
        const leads = await this.leads.ofSessions(chatbotId, sessionIds);
        for (const [sessionId, lead] of leads)
          found.set(key({ chatbot_id: chatbotId, session_id: sessionId }), agentLead(lead));
      }),
    );
    return found;
  }

  /**
   * The push a signal of `chatbot`'s conversation makes; undefined for a lead left in a session that
   * has no conversation yet (its first message's push will carry it).
   */
  async push(signal: ConversationSignal, chatbot: Pick<Chatbot, 'name'>): Promise<AgentPush | undefined> {
    const ref = { chatbot_id: signal.chatbot_id, session_id: signal.session_id };
    // A streamed piece is only text: nothing is read for it (a reply streams many a second).
    if (signal.kind === 'stream')
      return { type: 'delta', ...ref, stream_id: signal.stream_id, content: signal.content };
    if (signal.kind === 'stream-end') {
      return { type: 'stream_end', ...ref, stream_id: signal.stream_id, reason: signal.reason };
    }
    const stored = (await this.leads.ofSessions(ref.chatbot_id, [ref.session_id])).get(ref.session_id);
    const lead = stored ? agentLead(stored) : null;
    const context = { chatbot_name: chatbot.name, lead };
    switch (signal.kind) {
      case 'message':
        // The message is the conversation's latest activity.
        return {
          type: 'message',
          ...ref,
          ...signal.message,
          ...context,
          last_activity_at: signal.message.created_at,
          ...(signal.stream_id ? { stream_id: signal.stream_id } : {}),
        };
      case 'escalated': {
        const last = (await this.lastMessageAt(ref)) ?? signal.escalated_at;
        return { type: 'escalated', ...ref, escalated_at: signal.escalated_at, ...context, last_activity_at: last };
      }
      case 'lead': {
        const last = await this.lastActivity(ref);
        if (!lead || last === undefined) return undefined;
        return { type: 'lead', ...ref, ...context, lead, last_activity_at: last };
      }
    }
  }

  private async lastMessageAt(ref: ConversationRef): Promise<string | undefined> {
    const [last] = await this.conversations.recentMessages(ref.chatbot_id, ref.session_id, 1);
    return last?.created_at;
  }

  /**
   * When the conversation last moved (undefined when there is none): its last message, or, having
   * none, its escalation, the only other way a conversation is created.
   */
  private async lastActivity(ref: ConversationRef): Promise<string | undefined> {
    const last = await this.lastMessageAt(ref);
    if (last !== undefined) return last;
    try {
      return (await this.conversations.get(ref.chatbot_id, ref.session_id)).escalated_at ?? undefined;
    } catch (error) {
      if (error instanceof NotFoundError) return undefined;
      throw error;
    }
  }
}
