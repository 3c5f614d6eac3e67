import t from 'tap';
import { waitUnlessAborted } from '../src/wait-unless-aborted.ts';

t.test('resolves after the time, at an abort, or at once when already aborted; never rejects', async (t) => {
  const idle = new AbortController();
  let waited = false;
  await waitUnlessAborted(5, idle.signal).then(() => (waited = true));
  t.ok(waited, 'the whole wait');

  const stopping = new AbortController();
  const cut = waitUnlessAborted(60_000, stopping.signal);
  stopping.abort();
  await cut;
  t.ok(stopping.signal.aborted, 'cut short by the abort');

  await waitUnlessAborted(60_000, stopping.signal, { ref: false });
  t.pass('at once when the signal had aborted already');
});
