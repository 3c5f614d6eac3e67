import type { z } from 'zod';
import { ValidationError } from '../errors.ts';
import {
  bodyRecord,
  endRecord,
  EXPORT_FORMAT,
  EXPORT_VERSION,
  headerRecord,
  type BodyRecord,
  type ExportCounts,
  type HeaderRecord,
} from './export-format.ts';

/** A whole export stream, checked line by line: its header and its records, each with its line number. */
export interface ExportStream {
  header: HeaderRecord;
  records: Array<{ line: number; record: BodyRecord }>;
}

const KINDS: Record<BodyRecord['type'], keyof ExportCounts> = {
  chatbot: 'chatbots',
  source: 'sources',
  conversation: 'conversations',
  lead: 'leads',
  webhook: 'webhooks',
};

/**
 * Reads an export stream (JSON Lines) whole and checks it before anything is written: a header of
 * this format and version first, records of known types and shapes, each one's chatbot among the
 * stream's chatbots, and an end record whose counts match, so that a stream cut short is refused. A
 * ValidationError with one line names what is wrong and on which line.
 */
export function readExportStream(text: string): ExportStream {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  if (lines.length === 0 || (lines.length === 1 && lines[0]!.trim() === '')) {
    throw new ValidationError('The import is empty: give it the lines `switchboard export` printed.');
  }
  const header = readHeader(lines[0]!);
  const records: ExportStream['records'] = [];
  const chatbots = new Set<string>();
  const seen = new Set<string>();
  const counted: ExportCounts = { chatbots: 0, sources: 0, conversations: 0, leads: 0, webhooks: 0 };
  for (let n = 1; n < lines.length; n += 1) {
    const line = n + 1;
    const value = json(lines[n]!, line);
    if (isRecordOf(value, 'end')) {
      const end = check(endRecord, value, line);
      if (n !== lines.length - 1) throw new ValidationError(`Line ${line + 1}: nothing may follow the end record.`);
      compareCounts(end.counts, counted);
      return { header, records };
    }
    const record = checkBody(value, line);
    const owner = record.type === 'chatbot' ? record.chatbot.id : chatbotOf(record);
    if (record.type === 'chatbot') chatbots.add(owner);
    else if (!chatbots.has(owner)) {
      throw new ValidationError(
        `Line ${line}: a ${record.type} of chatbot ${owner}, which comes before it or not at all.`,
      );
    }
    const key = identity(record);
    if (seen.has(key)) throw new ValidationError(`Line ${line}: ${key} comes twice in the export.`);
    seen.add(key);
    counted[KINDS[record.type]] += 1;
    records.push({ line, record });
  }
  throw new ValidationError('The export is incomplete: it has no end record (it was cut short).');
}

function readHeader(text: string): HeaderRecord {
  const value = json(text, 1);
  if (isRecordOf(value, 'header') && (value as { format?: unknown }).format === EXPORT_FORMAT) {
    const version = (value as { version?: unknown }).version;
    if (version !== EXPORT_VERSION) {
      throw new ValidationError(
        `Unsupported export version ${JSON.stringify(version)}: this Switchboard reads version ${EXPORT_VERSION}.`,
      );
    }
    return check(headerRecord, value, 1);
  }
  throw new ValidationError('Not a Switchboard export: its first line is not the export header.');
}

function checkBody(value: unknown, line: number): BodyRecord {
  const type = typeof value === 'object' && value !== null ? (value as { type?: unknown }).type : undefined;
  if (typeof type !== 'string' || !(type in KINDS)) {
    throw new ValidationError(`Line ${line}: unknown record type ${JSON.stringify(type ?? null)}.`);
  }
  return check(bodyRecord, value, line);
}

/** What a record is, for telling a record that comes twice (an import would write it once, then fail). */
function identity(record: BodyRecord): string {
  switch (record.type) {
    case 'chatbot':
      return `chatbot ${record.chatbot.id}`;
    case 'source':
      return `source ${record.source.id}`;
    case 'conversation':
      return `the conversation of session ${record.conversation.session_id} of chatbot ${record.conversation.chatbot_id}`;
    case 'lead':
      return `lead ${record.lead.lead_id} of chatbot ${record.lead.chatbot_id}`;
    case 'webhook':
      return `webhook ${record.webhook.id}`;
  }
}

function chatbotOf(record: Exclude<BodyRecord, { type: 'chatbot' }>): string {
  switch (record.type) {
    case 'source':
      return record.source.chatbot_id;
    case 'conversation':
      return record.conversation.chatbot_id;
    case 'lead':
      return record.lead.chatbot_id;
    case 'webhook':
      return record.webhook.chatbot_id;
  }
}

function compareCounts(said: ExportCounts, found: ExportCounts): void {
  for (const kind of Object.keys(found) as Array<keyof ExportCounts>) {
    if (said[kind] !== found[kind]) {
      throw new ValidationError(
        `The export is incomplete: its end record counts ${said[kind]} ${kind}, the stream holds ${found[kind]}.`,
      );
    }
  }
}

function json(text: string, line: number): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ValidationError(`Line ${line} is not JSON.`);
  }
}

function isRecordOf(value: unknown, type: string): boolean {
  return typeof value === 'object' && value !== null && (value as { type?: unknown }).type === type;
}

function check<S extends z.ZodType>(schema: S, value: unknown, line: number): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const path = issue.path.map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`)).join('');
  throw new ValidationError(`Line ${line}: ${path.replace(/^\./, '') || 'record'}: ${issue.message}`);
}
