import { ValidationError } from '../errors.ts';

/**
 * Client text (a request body, a socket frame) parsed as the JSON object every endpoint here expects:
 * text that is not JSON, or JSON that is not an object, is a ValidationError with the caller's detail.
 */
export function parseJsonObject(
  text: string,
  details: { notJson: string; notObject: string },
): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ValidationError(details.notJson);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ValidationError(details.notObject);
  }
  return value as Record<string, unknown>;
}
