export { h } from '../shared/dom.ts';
export { localTime as formatTime } from '../shared/local-time.ts';
