import type { Chatbot } from '../chatbots/chatbot.ts';
import { NotFoundError } from '../errors.ts';
import type { AccountStore } from '../store/account-store.ts';
import type { ChatbotStore } from '../store/chatbot-store.ts';
import type { ConnectionStore } from '../store/connection-store.ts';
import type { LeadStore } from '../store/lead-store.ts';
import type { SourceStore } from '../store/source-store.ts';
import type { ConversationRecord, TransferStore } from '../store/transfer-store.ts';
import type { WebhookStore } from '../store/webhook-store.ts';
import type { Source } from '../sources/source.ts';
import type { ConnectionService } from '../sources/connectors/connector.ts';
import { formatTimestamp } from '../timestamp.ts';
import {
  EXPORT_FORMAT,
  EXPORT_VERSION,
  type BodyRecord,
  type ChatbotRecord,
  type ConversationExport,
  type EndRecord,
  type ExportCounts,
  type HeaderRecord,
  type SourceRecord,
} from './export-format.ts';

/** What an export reads. */
export interface ExportDeps {
  accounts: AccountStore;
  chatbots: ChatbotStore;
  sources: SourceStore;
  connections: ConnectionStore;
  transfer: TransferStore;
  leads: LeadStore;
  webhooks: WebhookStore;
}

/**
 * An owner's data as the export stream's records, in order: the header, then per chatbot (oldest
 * first) the chatbot with its settings, its sources (text and file contents included), its
 * conversations (oldest activity first, as of when the export came to the chatbot, each with what its
 * transcript shows), its leads and its webhooks (without secrets), and the end record with the counts.
 * Read one record at a time (of the conversations, only the list of sessions is read ahead), so an
 * export of any size is never held whole.
 */
export async function* exportOwner(
  deps: ExportDeps,
  userId: string,
  nowMicros: number,
): AsyncGenerator<HeaderRecord | BodyRecord | EndRecord> {
  const account = await deps.accounts.get(userId);
  yield {
    type: 'header',
    format: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    exported_at: formatTimestamp(nowMicros),
    account: { ...account, connectors: await deps.accounts.enabledConnectors(userId) },
  };
  const counts: ExportCounts = { chatbots: 0, sources: 0, conversations: 0, leads: 0, webhooks: 0 };
  const chatbots = (await deps.chatbots.listForUser(userId)).reverse();
  for (const chatbot of chatbots) {
    counts.chatbots += 1;
    yield { type: 'chatbot', chatbot: chatbotOf(chatbot) };
    for (const source of (await deps.sources.listForChatbot(chatbot.id)).reverse()) {
      counts.sources += 1;
      yield await sourceRecord(deps, source);
    }
    for (const sessionId of await deps.transfer.sessions(chatbot.id)) {
      // Deleted meanwhile (retention, an erasure): left out.
      const conversation = await deps.transfer.conversation(chatbot.id, sessionId);
      if (!conversation) continue;
      counts.conversations += 1;
      yield { type: 'conversation', conversation: conversationOf(conversation) };
    }
    for (const lead of (await deps.leads.list(chatbot.id)).reverse()) {
      counts.leads += 1;
      yield { type: 'lead', lead };
    }
    for (const webhook of await deps.webhooks.listForChatbot(chatbot.id)) {
      counts.webhooks += 1;
      // Named field by field: what a webhook gains later is not exported by accident (its secret is not).
      const { id, chatbot_id, url, events, active, standard_webhooks, created_at } = webhook;
      yield { type: 'webhook', webhook: { id, chatbot_id, url, events, active, standard_webhooks, created_at } };
    }
  }
  yield { type: 'end', counts };
}

/** The chatbot field by field, without its owner (the import names one). */
function chatbotOf(chatbot: Chatbot): ChatbotRecord['chatbot'] {
  return {
    id: chatbot.id,
    name: chatbot.name,
    slug: chatbot.slug,
    provider: chatbot.provider,
    model: chatbot.model,
    is_active: chatbot.is_active,
    created_at: chatbot.created_at,
    system_prompt: chatbot.system_prompt,
    fallback_message: chatbot.fallback_message,
    settings: { ...chatbot.settings },
  };
}

/** The conversation field by field, each message with what its transcript shows. */
function conversationOf(record: ConversationRecord): ConversationExport['conversation'] {
  return {
    conversation_id: record.conversation_id,
    chatbot_id: record.chatbot_id,
    session_id: record.session_id,
    source: record.source,
    created_at: record.created_at,
    last_activity_at: record.last_activity_at,
    escalated_at: record.escalated_at,
    taken_over_by: record.taken_over_by,
    messages: record.messages.map((message) => ({
      role: message.role,
      content: message.content,
      created_at: message.created_at,
      ...(message.citations ? { citations: message.citations } : {}),
      ...(message.feedback ? { feedback: message.feedback } : {}),
      ...(message.agent ? { agent: message.agent } : {}),
      ...(message.failure !== undefined ? { failure: message.failure } : {}),
    })),
  };
}

async function sourceRecord(deps: ExportDeps, source: Source): Promise<SourceRecord> {
  const bytes = source.type === 'text' || source.type === 'file' ? await deps.sources.content(source) : undefined;
  return {
    type: 'source',
    source: {
      id: source.id,
      chatbot_id: source.chatbot_id,
      type: source.type,
      title: source.title,
      url: source.url,
      reference: source.reference,
      refresh: source.refresh,
      created_at: source.created_at,
      connection_service: await connectionService(deps, source.connection_id),
    },
    content:
      bytes === undefined
        ? null
        : source.type === 'text'
          ? { encoding: 'utf8', data: bytes.toString('utf8') }
          : { encoding: 'base64', data: bytes.toString('base64') },
  };
}

/** The service of the connection a source reads through (its secrets stay behind); null when none. */
async function connectionService(deps: ExportDeps, connectionId: string): Promise<ConnectionService | null> {
  if (!connectionId) return null;
  try {
    return (await deps.connections.get(connectionId)).service;
  } catch (error) {
    if (error instanceof NotFoundError) return null;
    throw error;
  }
}
