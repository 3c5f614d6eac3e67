/** The formats `parseDocument` reads, as shown to users. */
export const SUPPORTED_FORMATS = ['PDF', 'DOCX', 'PPTX', 'TXT', 'MD', 'CSV', 'VTT', 'SRT'] as const;

/** A file whose extension names a format the parser does not read. */
export class UnsupportedFileError extends Error {
  override name = 'UnsupportedFileError';
  readonly filename: string;

  constructor(filename: string) {
    super(`Unsupported file type: ${filename}. Supported types: ${SUPPORTED_FORMATS.join(', ')}.`);
    this.filename = filename;
  }
}

/** A file, a page or a download over its size limit. */
export class SizeLimitError extends Error {
  override name = 'SizeLimitError';
  readonly limitBytes: number;

  constructor(what: string, limitBytes: number) {
    super(`${what} is larger than ${formatBytes(limitBytes)}`);
    this.limitBytes = limitBytes;
  }
}

/** A file the parser could not read: corrupt, encrypted, or not what its extension says. */
export class ParseError extends Error {
  override name = 'ParseError';
  readonly filename: string;

  constructor(filename: string, reason: string, options?: ErrorOptions) {
    super(`Could not read ${filename}: ${reason}`, options);
    this.filename = filename;
  }
}

/**
 * A web request that failed. `statusCode` is set when the server answered with an error status (the
 * remote said no) and null when no usable answer came (network, timeout, size, redirect rules).
 */
export class FetchError extends Error {
  override name = 'FetchError';
  readonly url: string;
  readonly statusCode: number | null;

  constructor(url: string, message: string, options?: ErrorOptions & { statusCode?: number }) {
    super(message, options);
    this.url = url;
    this.statusCode = options?.statusCode ?? null;
  }
}

function formatBytes(bytes: number): string {
  const mb = bytes / (1024 * 1024);
  if (mb >= 1) return `${Number.isInteger(mb) ? mb : mb.toFixed(1)} MB`;
  return bytes >= 1024 ? `${Math.round(bytes / 1024)} KB` : `${bytes} bytes`;
}
