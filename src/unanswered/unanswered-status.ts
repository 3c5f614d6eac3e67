import type { UnansweredStatus } from '../contract/unanswered.ts';
import { ValidationError } from '../errors.ts';

/** A status filter as given (`open` when left out); anything else is refused. */
export function checkUnansweredStatus(value: string | null | undefined): UnansweredStatus {
  if (value === null || value === undefined || value === 'open') return 'open';
  if (value === 'resolved') return 'resolved';
  throw new ValidationError('status must be open or resolved.');
}
