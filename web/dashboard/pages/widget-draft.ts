import type { CallToAction, LeadField, Settings } from '../types.ts';
import { withCtaIds } from './cta-id.ts';

/** What the widget page edits: the settings but the retrieval, which has its own card. */
export type WidgetDraft = Omit<Settings, 'chatbot_id' | 'retrieval' | 'answers' | 'hours' | 'retention'>;

/** The two editable lists of the page. */
export type RowListName = 'ctas' | 'lead_fields';

/** Why rows of the lists cannot be saved as they are, by list and row index in the form. */
export type RowErrors = Record<RowListName, Record<number, string>>;

export const NO_ROW_ERRORS: RowErrors = { ctas: {}, lead_fields: {} };

/**
 * The lists as they are saved, where each saved row came from in the form (to put a refusal of
 * `ctas[1]` next to the right row), and the rows that cannot be saved.
 */
export interface PreparedRows {
  ctas: CallToAction[];
  lead_fields: LeadField[];
  from: Record<RowListName, number[]>;
  errors: RowErrors;
}

/**
 * Rows left entirely blank are dropped (an "Add" clicked by mistake must not block the page); a row
 * filled in part gets a message and nothing is saved. Buttons get their ids here, from their labels.
 */
export function prepareRows(draft: WidgetDraft): PreparedRows {
  const ctas = checkRows(draft.ctas, ctaText, ctaProblem);
  const fields = checkRows(draft.lead_fields, (field) => [field.name, field.label], leadFieldProblem);
  return {
    ctas: withCtaIds(ctas.rows.map(cleanCta)),
    lead_fields: fields.rows.map((field) => ({ ...field, name: field.name.trim(), label: field.label.trim() })),
    from: { ctas: ctas.from, lead_fields: fields.from },
    errors: { ctas: ctas.errors, lead_fields: fields.errors },
  };
}

/** Whether any row has a message. */
export function hasRowErrors(errors: RowErrors): boolean {
  return Object.keys(errors.ctas).length > 0 || Object.keys(errors.lead_fields).length > 0;
}

const FIELD_NAMES: Record<string, string> = {
  label: 'Label',
  url: 'Link address',
  message: 'Message',
  name: 'Field name',
  required: 'Required',
};

/**
 * The gateway's refusal of a row (`ctas[1].url: Invalid URL`) as a message on that row of the form, or
 * undefined when it names no row.
 */
export function rowErrorOf(detail: string, from: PreparedRows['from']): RowErrors | undefined {
  const match = /^(ctas|lead_fields)\[(\d+)\](?:\.(\w+))?: (.+)$/.exec(detail);
  if (!match) return undefined;
  const list = match[1] as RowListName;
  const row = from[list][Number(match[2])];
  if (row === undefined) return undefined;
  const field = match[3];
  const message = field ? `${FIELD_NAMES[field] ?? field}: ${match[4]!}` : match[4]!;
  return { ...NO_ROW_ERRORS, [list]: { [row]: message.charAt(0).toUpperCase() + message.slice(1) } };
}

function checkRows<T>(
  items: readonly T[],
  texts: (item: T) => Array<string | undefined>,
  problem: (item: T) => string,
): { rows: T[]; from: number[]; errors: Record<number, string> } {
  const rows: T[] = [];
  const from: number[] = [];
  const errors: Record<number, string> = {};
  items.forEach((item, i) => {
    if (texts(item).every((text) => !text?.trim())) return;
    const found = problem(item);
    if (found) errors[i] = found;
    rows.push(item);
    from.push(i);
  });
  return { rows, from, errors };
}

/** What the owner sees of a button: its label and the target its action uses. */
function ctaText(cta: CallToAction): Array<string | undefined> {
  return [cta.label, cta.action === 'link' ? cta.url : cta.action === 'message' ? cta.message : ''];
}

function ctaProblem(cta: CallToAction): string {
  if (!cta.label.trim()) return 'Give this button a label.';
  if (cta.action === 'link' && !cta.url?.trim()) return 'Add the address this button opens.';
  if (cta.action === 'message' && !cta.message?.trim()) return 'Add the message this button sends.';
  return '';
}

function leadFieldProblem(field: LeadField): string {
  if (!field.name.trim()) return 'Add a field name, like company.';
  if (!field.label.trim()) return 'Add the label visitors see.';
  return '';
}

/** A button as saved: text trimmed, and only the target its action uses (the form keeps both while editing). */
function cleanCta(cta: CallToAction): CallToAction {
  const { url, message, ...rest } = cta;
  const button = { ...rest, label: cta.label.trim() };
  if (cta.action === 'link') return { ...button, url: (url ?? '').trim() };
  if (cta.action === 'message') return { ...button, message: (message ?? '').trim() };
  return button;
}
