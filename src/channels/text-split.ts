/**
 * Splits a reply into messages a chat app accepts: at most `limit` UTF-16 units each, cut at a paragraph,
 * then a line, then a space when one lies in the second half of the piece, never inside a surrogate pair.
 */
export function splitText(text: string, limit: number): string[] {
  const parts: string[] = [];
  let rest = text;
  while (rest.length > limit) {
    const window = rest.slice(0, limit);
    let cut = -1;
    for (const separator of ['\n\n', '\n', ' ']) {
      const at = window.lastIndexOf(separator);
      if (at >= limit / 2) {
        cut = at;
        break;
      }
    }
    if (cut === -1) {
      cut = limit;
      // A high surrogate at the end would be cut from its pair.
      const last = rest.charCodeAt(cut - 1);
      if (last >= 0xd800 && last <= 0xdbff) cut -= 1;
      parts.push(rest.slice(0, cut));
      rest = rest.slice(cut);
    } else {
      parts.push(rest.slice(0, cut).trimEnd());
      rest = rest.slice(cut).replace(/^\s+/, '');
    }
  }
  if (rest.length > 0 || parts.length === 0) parts.push(rest);
  return parts;
}
