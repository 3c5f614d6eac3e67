/**
 * Connections to the services connector sources read from, as the CLI and the dashboard show them
 * (never with their secret). Part of the contract (see README.md beside this file).
 */

/** The services a connection can hold credentials for. OneDrive and SharePoint share Microsoft's. */
export type ConnectionServiceName = 'google_drive' | 'notion' | 'dropbox' | 'microsoft' | 'zendesk' | 'gitbook';

/** How a connection proves itself to its service. */
export type ConnectionAuthKind = 'token' | 'oauth' | 'service_account' | 'client_credentials';

/** `needs_reauth`: the service refused the grant; the owner must connect again. */
export type ConnectionStatus = 'active' | 'needs_reauth';

/** A connection as the CLI prints it. */
export interface ConnectionView {
  id: string;
  service: ConnectionServiceName;
  status: ConnectionStatus;
  created_at: string;
}

/** `GET /dashboard/api/connections` (one element): also how it signs in, who or what is connected, and where. */
export interface DashboardConnection extends ConnectionView {
  /** Only an `oauth` connection is reconnected from the dashboard. */
  auth_kind: ConnectionAuthKind;
  /** Who or what is connected, when known (a workspace, an email); '' otherwise. */
  label: string;
  /** The service's address for this customer (a Zendesk help centre), '' when it has one address. */
  base_url: string;
}

/** `GET /dashboard/api/connection-services` (one element): a service the Connections page offers. */
export interface ConnectionOffer {
  service: ConnectionServiceName;
  label: string;
  method: 'oauth' | 'token';
  /** False when the server operator has not configured the service's OAuth client. */
  available: boolean;
}

/** `POST /dashboard/api/connections`: a service connected with a pasted token (Notion). */
export interface NewConnectionBody {
  service: string;
  token: string;
  label?: string;
}
