import type { ConnectionAuthKind, ConnectionStatus } from '../contract/connection.ts';
import type { ConnectionService } from '../sources/connectors/connector.ts';

// A user's connection to a service that sources are read from: the domain model its store persists.

// How a connection proves itself, and whether it works, are the contract's (the dashboard shows both).
export type { ConnectionAuthKind, ConnectionStatus };

/** A connection without its secret (what lists and APIs show). */
export interface Connection {
  id: string;
  user_id: string;
  service: ConnectionService;
  auth_kind: ConnectionAuthKind;
  status: ConnectionStatus;
  /** Who or what is connected, as the service names it (an email, a workspace), when known. */
  label: string;
  /** The service's address for this customer (a Zendesk help centre), '' when it has one address. */
  base_url: string;
  created_at: string;
}

/** The secret fields of a connection (tokens, keys), sealed in Redis as one JSON object. */
export type ConnectionSecret = Record<string, string>;

/** What a new connection is made of. */
export interface NewConnection {
  service: ConnectionService;
  authKind: ConnectionAuthKind;
  secret: ConnectionSecret;
  label?: string;
  baseUrl?: string;
}
