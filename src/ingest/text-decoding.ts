/**
 * Decodes a text file's bytes: UTF-16 when a byte-order mark says so, UTF-8 otherwise (a UTF-8 BOM is
 * dropped, invalid sequences become U+FFFD), with line endings normalised to `\n`.
 */
export function decodeText(bytes: Uint8Array): string {
  const encoding =
    bytes[0] === 0xff && bytes[1] === 0xfe ? 'utf-16le' : bytes[0] === 0xfe && bytes[1] === 0xff ? 'utf-16be' : 'utf-8';
  return new TextDecoder(encoding).decode(bytes).replace(/\r\n?/g, '\n');
}

/** A file name without its directory and extension, used as a title when the file has none. */
export function baseTitle(filename: string): string {
  const base = filename.split(/[\\/]/).pop() ?? filename;
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(0, dot) : base;
}
