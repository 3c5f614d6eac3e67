import { useEffect, useState } from 'preact/hooks';

/** The app's location: the part of the URL after `#/`, split at `/` (empty segments dropped). */
export function currentRoute(): string[] {
  return location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeSegment);
}

/** A segment as typed when it is not valid percent-encoding (`%zz`, a cut-off `%E2%82`). */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The current route, re-rendering on every hash change. */
export function useRoute(): string[] {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const update = () => setRoute(currentRoute());
    addEventListener('hashchange', update);
    return () => removeEventListener('hashchange', update);
  }, []);
  return route;
}

/** A link target inside the app. */
export function href(...segments: string[]): string {
  return `#/${segments.map(encodeURIComponent).join('/')}`;
}

/** Goes to a route; `replace` keeps the current entry out of the history (an invitation's token). */
export function navigate(target: string, replace = false): void {
  if (replace) {
    history.replaceState(null, '', target);
    dispatchEvent(new HashChangeEvent('hashchange'));
  } else location.hash = target;
}
