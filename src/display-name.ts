import { ValidationError } from './errors.ts';

/**
 * The rule of a name an owner gives something to tell it apart in lists (an API key, an agent):
 * trimmed, 1 to 100 characters. Returns it trimmed; a ValidationError otherwise.
 */
export function checkDisplayName(raw: string): string {
  const name = raw.trim();
  if (name.length === 0 || name.length > 100) throw new ValidationError('name must be 1 to 100 characters.');
  return name;
}
