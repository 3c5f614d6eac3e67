import {
  AuthenticationError,
  ConflictError,
  DomainError,
  ForbiddenError,
  LimitError,
  NotFoundError,
  ProviderError,
  RateLimitError,
  TooLargeError,
  UnavailableError,
  UnsupportedEncodingError,
  UpstreamError,
  ValidationError,
} from '../errors.ts';

/** An error as the client sees it: a status and a `{"detail"}` text. */
export interface ErrorResponse {
  status: number;
  detail: string;
  /** True when the error is the server's fault and must be logged with its stack. */
  internal: boolean;
}

const RESTIFY_DETAILS: Record<string, string> = {
  ResourceNotFoundError: 'Not Found',
  MethodNotAllowedError: 'Method Not Allowed',
};

/** The one place where an error becomes an HTTP status and `detail` text. */
export function errorResponse(error: unknown): ErrorResponse {
  if (error instanceof DomainError) {
    const status = domainStatus(error);
    return { status, detail: error.detail, internal: status === 500 && !(error instanceof ProviderError) };
  }
  if (error instanceof Error) {
    const status = (error as { statusCode?: unknown }).statusCode;
    const detail = RESTIFY_DETAILS[error.name];
    if (typeof status === 'number' && status < 500 && detail) return { status, detail, internal: false };
  }
  return { status: 500, detail: 'Internal server error.', internal: true };
}

/**
 * An error as a socket's `error` frame tells it: a domain error's own `detail`; anything else
 * `Internal server error.`, and `internal` (the caller logs it with its stack). The one mapping of
 * every socket route (the widget's, the agents').
 */
export function socketErrorDetail(error: unknown): { detail: string; internal: boolean } {
  if (error instanceof DomainError) return { detail: error.detail, internal: false };
  return { detail: 'Internal server error.', internal: true };
}

function domainStatus(error: DomainError): number {
  if (error instanceof ValidationError || error instanceof LimitError) return 400;
  if (error instanceof AuthenticationError) return 401;
  if (error instanceof ForbiddenError) return 403;
  if (error instanceof NotFoundError) return 404;
  if (error instanceof ConflictError) return 409;
  if (error instanceof TooLargeError) return 413;
  if (error instanceof RateLimitError) return 429;
  if (error instanceof UnsupportedEncodingError) return 415;
  if (error instanceof UpstreamError) return 502;
  if (error instanceof UnavailableError) return 503;
  return 500;
}
