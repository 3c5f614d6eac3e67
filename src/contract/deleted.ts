/** What deleting something answers. Part of the contract (see README.md beside this file). */

/** `DELETE` of a chatbot, source, connection or webhook in the management API. */
export interface Deleted {
  id: string;
  deleted: true;
}
