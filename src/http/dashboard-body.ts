import { ValidationError } from '../errors.ts';

/** A string field of a JSON body: undefined when absent, a 400 naming the field when not a string. */
export function optionalString(body: Record<string, unknown>, field: string): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new ValidationError(`${field} must be a string.`);
  return value;
}

/** A string field that must be there. */
export function requiredString(body: Record<string, unknown>, field: string): string {
  const value = optionalString(body, field);
  if (value === undefined) throw new ValidationError(`${field} is required.`);
  return value;
}

/** A boolean field: undefined when absent, a 400 naming the field when not true or false. */
export function optionalBoolean(body: Record<string, unknown>, field: string): boolean | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw new ValidationError(`${field} must be true or false.`);
  return value;
}

/** An array of strings that must be there. */
export function requiredStrings(body: Record<string, unknown>, field: string): string[] {
  const value = body[field];
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) {
    throw new ValidationError(`${field} must be an array of strings.`);
  }
  return value as string[];
}
