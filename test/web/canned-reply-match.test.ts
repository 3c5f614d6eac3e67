import t from 'tap';
import { cannedQuery, matchCannedReplies } from '../../web/console/canned-reply-match.ts';

const replies = [
  { id: '1', shortcut: 'refund', text: 'Refunds reach your card within 5 working days.' },
  { id: '2', shortcut: 'hello', text: "Hello! I'm looking into this for you." },
  { id: '3', shortcut: 'shipping', text: 'We ship within 2 days.' },
  { id: '4', shortcut: 'ref-eu', text: 'EU returns: see our policy.' },
];
const shortcuts = (query: string) => matchCannedReplies(replies, query).map((reply) => reply.shortcut);

t.test('a draft asks for canned replies while it is `/` and one word', async (t) => {
  t.equal(cannedQuery('/'), '');
  t.equal(cannedQuery('/ref'), 'ref');
  t.equal(cannedQuery('/Ref-EU_2'), 'Ref-EU_2');
  for (const draft of ['', 'ref', ' /ref', '/ref ', '/ref more', 'say /ref', '/ref\n']) {
    t.equal(cannedQuery(draft), null, JSON.stringify(draft));
  }
});

t.test(
  'shortcut prefixes first, then shortcuts containing the query, then texts; by shortcut within each',
  async (t) => {
    t.same(shortcuts(''), ['hello', 'ref-eu', 'refund', 'shipping'], 'all of them');
    t.same(shortcuts('ref'), ['ref-eu', 'refund']);
    t.same(shortcuts('in'), ['shipping', 'hello', 'refund'], 'shipp-in-g, then "looking into", "within"');
    t.same(shortcuts('EU'), ['ref-eu'], 'case does not matter');
    t.same(shortcuts('policy'), ['ref-eu']);
    t.same(shortcuts('nothing'), []);
  },
);
