import type { RawData } from 'ws';
import { ValidationError } from '../errors.ts';
import { parseJsonObject } from './json-object.ts';

/** A frame's one refusal, whatever was wrong with it. */
const NOT_AN_OBJECT = 'Frame must be a JSON object.';

/**
 * A client frame as it arrives: the fields of the contract's frames `F` (src/contract/), each of a
 * type still to be checked. Reading a field no frame of the protocol has fails the type-check.
 */
export type FrameFields<F> = { readonly [K in F extends unknown ? keyof F : never]?: unknown };

/**
 * One client frame of a gateway socket as the JSON object every protocol here expects; a binary
 * frame, text that is not JSON, or JSON that is not an object is a ValidationError the socket
 * answers with an error frame.
 */
export function readFrameObject(data: RawData, isBinary: boolean): Record<string, unknown> {
  if (isBinary) throw new ValidationError(NOT_AN_OBJECT);
  const text = Array.isArray(data)
    ? Buffer.concat(data).toString('utf8')
    : Buffer.from(data as ArrayBuffer).toString('utf8');
  return parseJsonObject(text, { notJson: NOT_AN_OBJECT, notObject: NOT_AN_OBJECT });
}
