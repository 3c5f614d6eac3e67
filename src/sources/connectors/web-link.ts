/**
 * A reference as an owner pastes it, read as a web link: `https://` is assumed when it has no scheme
 * (`drive.google.com/…`); undefined when it is not an http or https URL.
 */
export function webLink(reference: string): URL | undefined {
  const trimmed = reference.trim();
  const url = URL.parse(/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) ? trimmed : `https://${trimmed}`);
  return url && (url.protocol === 'https:' || url.protocol === 'http:') ? url : undefined;
}
