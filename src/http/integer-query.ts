import type { Request } from 'restify';
import { ValidationError } from '../errors.ts';

/** The range of an integer query parameter and the value it takes when absent. */
export interface IntegerRange {
  min: number;
  max: number;
  fallback: number;
}

// Decimal digits only: no sign, fraction, exponent, spaces or hex, which Number() would let through.
const DIGITS = /^[0-9]{1,16}$/;

/**
 * One integer query parameter of a route (`k`, `limit`, `offset`, …), the only way routes read
 * one. Absent, it is its fallback; otherwise it must be given once, as decimal digits, within its
 * range, or the request is refused with 400 `<name> must be a whole number from <min> to <max>.`
 */
export class IntegerQuery {
  readonly name: string;
  private readonly range: IntegerRange;

  constructor(name: string, range: IntegerRange) {
    const { min, max, fallback } = range;
    if (![min, max, fallback].every(Number.isSafeInteger) || min < 0 || min > max) {
      throw new Error(`IntegerQuery ${name}: min, max and fallback must be safe integers with 0 <= min <= max.`);
    }
    if (fallback < min || fallback > max)
      throw new Error(`IntegerQuery ${name}: fallback ${fallback} is out of range.`);
    this.name = name;
    this.range = range;
  }

  /** The parameter's value in the request's query string; a ValidationError when it is not a valid one. */
  read(req: Request): number {
    const values = new URL(req.url ?? '/', 'http://gateway').searchParams.getAll(this.name);
    if (values.length === 0) return this.range.fallback;
    const value = values.length === 1 && DIGITS.test(values[0]!) ? Number(values[0]) : Number.NaN;
    if (!(value >= this.range.min && value <= this.range.max)) throw new ValidationError(this.detail);
    return value;
  }

  /** The refusal's text. */
  get detail(): string {
    return `${this.name} must be a whole number from ${this.range.min} to ${this.range.max}.`;
  }
}
