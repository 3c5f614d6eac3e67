import type { Request } from 'restify';
import { ValidationError } from '../errors.ts';
import type { JsonRequest } from './json-body.ts';

/**
 * A request body as it arrives: the contract's fields (src/contract/), each of a type still to be
 * checked. Reading a field the contract does not name fails the type-check.
 */
export type RequestBody<T> = { readonly [K in keyof T]?: unknown };

/** The JSON object `jsonBody()` read, as the body of the contract's request `T`. */
export function bodyOf<T>(req: Request): RequestBody<T> {
  return (req as JsonRequest).body;
}

/** A string field of a JSON body: undefined when absent, a 400 naming the field when not a string. */
export function optionalString<B extends object>(body: B, field: keyof B & string): string | undefined {
  const value: unknown = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new ValidationError(`${field} must be a string.`);
  return value;
}

/** A string field that must be there. */
export function requiredString<B extends object>(body: B, field: keyof B & string): string {
  const value = optionalString(body, field);
  if (value === undefined) throw new ValidationError(`${field} is required.`);
  return value;
}

/** A boolean field: undefined when absent, a 400 naming the field when not true or false. */
export function optionalBoolean<B extends object>(body: B, field: keyof B & string): boolean | undefined {
  const value: unknown = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw new ValidationError(`${field} must be true or false.`);
  return value;
}

/** An array of strings that must be there. */
export function requiredStrings<B extends object>(body: B, field: keyof B & string): string[] {
  const value: unknown = body[field];
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) {
    throw new ValidationError(`${field} must be an array of strings.`);
  }
  return value as string[];
}
