import { normalizeText } from '../conversations/escalation-intent.ts';

/** How much of a visitor question the inbox keeps (a longer one is cut, with an ellipsis). */
export const MAX_QUESTION_LENGTH = 500;

/** A visitor question as the inbox keeps it: trimmed, at most {@link MAX_QUESTION_LENGTH} characters. */
export function clipQuestion(text: string): string {
  const trimmed = text.trim();
  if (trimmed.length <= MAX_QUESTION_LENGTH) return trimmed;
  return `${trimmed.slice(0, MAX_QUESTION_LENGTH - 1).trimEnd()}…`;
}

/**
 * The exact-text key that groups a question with the same question asked again: lowercase, accents
 * removed, whitespace collapsed (`normalizeText`, as escalation keywords are compared), and the
 * punctuation and symbols at either end trimmed, so "Do you ship to Canada?" and "do you ship to
 * canada" meet. '' for a message of nothing but punctuation.
 */
export function questionKey(text: string): string {
  return normalizeText(text)
    .replace(/^[\p{P}\p{S}\s]+/u, '')
    .replace(/[\p{P}\p{S}\s]+$/u, '');
}
