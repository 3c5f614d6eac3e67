export { h } from '../shared/dom.ts';

/** A timestamp as the agent's locale shows it; the raw text when it does not parse. */
export function formatTime(timestamp: string): string {
  const millis = Date.parse(timestamp);
  return Number.isNaN(millis) ? timestamp : new Date(millis).toLocaleString();
}
