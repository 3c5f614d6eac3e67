import { ValidationError } from '../errors.ts';

/** DESIGN.md: at most 4,000 characters. */
export const MAX_MESSAGE_CHARS = 4000;

/**
 * A visitor's message text on any channel: a non-empty string after trimming, at most 4,000
 * characters; otherwise a ValidationError naming `field`.
 */
export function checkMessageText(value: unknown, field: string): string {
  if (value === undefined || value === null) throw new ValidationError(`${field} is required.`);
  if (typeof value !== 'string') throw new ValidationError(`${field} must be a string.`);
  if (value.trim().length === 0) throw new ValidationError(`${field} must not be empty.`);
  if ([...value].length > MAX_MESSAGE_CHARS) {
    throw new ValidationError(`${field} must be at most ${MAX_MESSAGE_CHARS} characters.`);
  }
  return value;
}
