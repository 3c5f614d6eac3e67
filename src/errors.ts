/**
 * Domain errors. Each carries the client-facing `detail` text; the HTTP layer maps the class to a
 * status in one place (src/http/error-response.ts) and the CLI prints `detail` as its one-line error.
 */
export class DomainError extends Error {
  readonly detail: string;

  constructor(detail: string, options?: ErrorOptions) {
    super(detail, options);
    this.detail = detail;
  }
}

/** Input that breaks a documented rule (400). */
export class ValidationError extends DomainError {
  override name = 'ValidationError';
}

/** An account limit or plan rule refused the operation (400). */
export class LimitError extends DomainError {
  override name = 'LimitError';
}

/** The resource does not exist, was deleted, or belongs to someone else (404). */
export class NotFoundError extends DomainError {
  override name = 'NotFoundError';
}

/** A limit on request or message rates, or the monthly quota (429). */
export class RateLimitError extends DomainError {
  override name = 'RateLimitError';
}

/** The LLM provider failed or timed out (500); the cause is logged, never shown. */
export class ProviderError extends DomainError {
  override name = 'ProviderError';
}

/** A resource that must be unique already exists (409). */
export class ConflictError extends DomainError {
  override name = 'ConflictError';
}

/** A request body over the size limit (413). */
export class TooLargeError extends DomainError {
  override name = 'TooLargeError';
}

/** A request body in an encoding the server does not read (415). */
export class UnsupportedEncodingError extends DomainError {
  override name = 'UnsupportedEncodingError';
}

/** The request did not prove who it comes from: no session, or a wrong email or password (401). */
export class AuthenticationError extends DomainError {
  override name = 'AuthenticationError';
}

/** The caller is known but the request is refused, e.g. a failed CSRF check (403). */
export class ForbiddenError extends DomainError {
  override name = 'ForbiddenError';
}

/** A service the gateway depends on (Telegram's Bot API, say) could not be reached (502). */
export class UpstreamError extends DomainError {
  override name = 'UpstreamError';
}

/** The gateway is too busy to take this request now; the client may try again shortly (503). */
export class UnavailableError extends DomainError {
  override name = 'UnavailableError';
}
