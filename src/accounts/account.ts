import { z } from 'zod';
import { ValidationError } from '../errors.ts';

// The account: the domain model its store persists, and the rules of its email address and plan.

// An account goes to the dashboard as it is stored.
export type { Account } from '../contract/account.ts';

const email = z.email().max(254);

/** Email addresses are unique and compared trimmed and lowercased. */
export function normalizeEmail(raw: string): string {
  return raw.trim().toLowerCase();
}

/** A new account's email address, normalized; a ValidationError when it is not a valid one. */
export function checkEmail(raw: string): string {
  const address = normalizeEmail(raw);
  if (!email.safeParse(address).success) throw new ValidationError('email must be a valid email address.');
  return address;
}

/** A plan must be one the gateway is configured with (a ValidationError listing them otherwise). */
export function checkPlan(plan: string, plans: readonly string[]): void {
  if (!plans.includes(plan)) {
    throw new ValidationError(`plan must be one of: ${plans.join(', ')}.`);
  }
}
