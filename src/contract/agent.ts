/** Human agents as the dashboard manages them. Part of the contract (see README.md beside this file). */

/** `GET /dashboard/api/agents` (one element); what revoking one answers. */
export interface AgentView {
  id: string;
  name: string;
  /** The letters on the agent's avatar: the owner's choice, else the name's first letter. */
  initial: string;
  created_at: string;
  active: boolean;
}

/** A new agent with its console token, shown once (`POST /dashboard/api/agents`, `agent create`). */
export interface CreatedAgent {
  id: string;
  name: string;
  token: string;
}

/** `POST /dashboard/api/agents` */
export interface NewAgentBody {
  name: string;
  /** One or two letters or digits for the avatar; left out, the name's first letter. */
  initial?: string;
}
