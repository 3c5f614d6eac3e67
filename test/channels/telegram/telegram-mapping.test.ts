import t from 'tap';
import type { Update } from 'grammy/types';
import { splitForTelegram, telegramChatId, telegramSessionId } from '../../../src/channels/telegram/rules.ts';
import { mapTelegramUpdate } from '../../../src/channels/telegram/inbound.ts';
import { textUpdate } from '../../fakes/fake-telegram.ts';

const update = (value: Record<string, unknown>) => value as unknown as Update;

t.test('splitting: limits, boundaries and surrogate pairs', async (t) => {
  t.same(splitForTelegram('short'), ['short']);
  t.same(splitForTelegram(''), ['']);
  t.same(splitForTelegram('a'.repeat(10), 4), ['aaaa', 'aaaa', 'aa'], 'no separator: hard cuts');
  t.same(splitForTelegram('aaaa bbbb cc', 6), ['aaaa', 'bbbb', 'cc'], 'at spaces');
  t.same(splitForTelegram('aaa\nbb cc', 6), ['aaa', 'bb cc'], 'a line break before a space');
  t.same(splitForTelegram('a b c d e f', 10), ['a b c d e', 'f']);
  const emoji = '😀'.repeat(5); // ten UTF-16 units
  const parts = splitForTelegram(`a${emoji}`, 4);
  t.same(parts, ['a😀', '😀😀', '😀😀'], 'a pair is never cut');
  t.equal(parts.join(''), `a${emoji}`);
});

t.test('session ids', async (t) => {
  t.equal(telegramSessionId(42), 'tg_42');
  t.equal(telegramSessionId(-1001234), 'tg_-1001234');
  t.equal(telegramChatId('tg_-1001234'), -1001234);
  t.equal(telegramChatId('embed-x'), undefined);
  t.equal(telegramChatId('tg_abc'), undefined);
});

t.test('mapping updates', async (t) => {
  t.same(mapTelegramUpdate(update(textUpdate(1, 5, '  hi  '))), {
    kind: 'text',
    chatId: 5,
    sessionId: 'tg_5',
    content: 'hi',
  });
  for (const text of ['/start', '/start promo-42', '/start@acme_bot']) {
    t.same(mapTelegramUpdate(update(textUpdate(1, 5, text))), { kind: 'start', chatId: 5, sessionId: 'tg_5' }, text);
  }
  t.equal(mapTelegramUpdate(update(textUpdate(1, 5, '/starting'))).kind, 'text');
  const base = textUpdate(1, 5, 'x').message as Record<string, unknown>;
  const withoutText = { ...base };
  delete withoutText.text;
  t.equal(mapTelegramUpdate(update({ update_id: 1, message: { ...withoutText, sticker: {} } })).kind, 'unsupported');
  t.equal(
    mapTelegramUpdate(update({ update_id: 1, message: { ...base, from: { id: 9, is_bot: true } } })).kind,
    'ignored',
  );
  t.equal(
    mapTelegramUpdate(update({ update_id: 1, message: { ...withoutText, new_chat_members: [] } })).kind,
    'ignored',
  );
  t.equal(mapTelegramUpdate(update({ update_id: 1, edited_message: base })).kind, 'ignored');
  t.equal(mapTelegramUpdate(update({ update_id: 1, channel_post: base })).kind, 'ignored');
});
