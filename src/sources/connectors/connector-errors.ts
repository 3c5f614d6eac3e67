/**
 * A service refused a connector's request, or answered what cannot be ingested. The message is
 * written for the owner (it becomes the failed source's reason); it never holds a token.
 */
export class ConnectorError extends Error {
  override name = 'ConnectorError';
  /** The HTTP status the service answered, when it answered. */
  readonly statusCode: number | null;

  constructor(message: string, options?: ErrorOptions & { statusCode?: number }) {
    super(message, options);
    this.statusCode = options?.statusCode ?? null;
  }
}

/** The connection's grant was revoked or expired for good: the owner must connect again. */
export class ReconnectError extends ConnectorError {
  override name = 'ReconnectError';
}

/** A listed document is gone (deleted, unshared) by the time it is fetched. */
export class DocumentGoneError extends ConnectorError {
  override name = 'DocumentGoneError';
}
