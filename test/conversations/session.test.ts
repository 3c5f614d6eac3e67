import t from 'tap';
import { channelOfSession, escalationChannel, sourceOf } from '../../src/conversations/session.ts';

t.test("a session's channel is read from its id's prefix, in one place", async (t) => {
  const ids = ['embed-0f0e', 'wa_4915@s.whatsapp.net', 'tg_-1001', 'api-7', 'my-own-id', 'EMBED-x', 'tg'];
  t.same(
    ids.map((id) => [channelOfSession(id), escalationChannel(id), sourceOf(id, 'api')]),
    [
      ['embed', 'web', 'embed'],
      ['whatsapp', 'whatsapp', 'whatsapp'],
      ['telegram', 'telegram', 'telegram'],
      ['api', 'unknown', 'api'],
      [undefined, 'unknown', 'api'],
      [undefined, 'unknown', 'api'],
      [undefined, 'unknown', 'api'],
    ],
  );
  t.equal(sourceOf('my-own-id', 'telegram'), 'telegram', 'no prefix: the channel it came in on');
});
