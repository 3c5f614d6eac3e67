// The human agent: the domain model its store persists. Its name follows checkDisplayName
// (src/display-name.ts), its token's format is src/auth/agent-token.ts.

import type { AgentPersona } from '../contract/conversation.ts';
import { ValidationError } from '../errors.ts';

/** A human agent of an owner, as listed (the token is never stored, only its SHA-256). */
export interface Agent {
  id: string;
  user_id: string;
  /** The name visitors see ("Maria joined"), unique among the owner's agents. */
  name: string;
  /** The letters on the agent's avatar the owner chose; '' for the name's first letter. */
  initial: string;
  created_at: string;
  active: boolean;
}

/** An avatar initial as given: one or two letters or digits (any script), kept as written. */
export function checkInitial(value: string): string {
  const initial = value.trim();
  if (!/^[\p{L}\p{N}]{1,2}$/u.test(initial)) throw new ValidationError('initial must be one or two letters or digits.');
  return initial;
}

/** How an agent (or a name a takeover was made under) shows to visitors. */
export function personaOf(name: string, initial = ''): AgentPersona {
  const first = [...name.trim()].find((character) => /[\p{L}\p{N}]/u.test(character)) ?? '?';
  return { name, initial: initial || first.toLocaleUpperCase() };
}
