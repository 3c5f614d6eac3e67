import t from 'tap';
import { newCtaId, slugOfLabel, withCtaIds } from '../../web/dashboard/pages/cta-id.ts';

// The gateway's rule for a call-to-action id (src/chatbots/chatbot-settings.ts).
const SERVER_RULE = /^[A-Za-z0-9_-]{1,40}$/;

t.test('a label becomes an id within the gateway’s rule', async (t) => {
  const cases: Array<[string, string]> = [
    ['Order a cake', 'order-a-cake'],
    ['  Crème brûlée, please!  ', 'creme-brulee-please'],
    ['Talk to a person → now', 'talk-to-a-person-now'],
    ['注文する', 'button'],
    ['', 'button'],
    ['Frequently asked questions about deliveries and returns', 'frequently-asked-questions-about-deliver'],
    ['A very long label that ends right at the cut - here', 'a-very-long-label-that-ends-right-at-the'],
  ];
  for (const [label, id] of cases) {
    t.equal(slugOfLabel(label), id, label);
    t.match(id, SERVER_RULE);
  }
});

t.test('an id another button has gets -2, -3…, still within 40 characters', async (t) => {
  t.equal(newCtaId('Order a cake', new Set()), 'order-a-cake');
  t.equal(newCtaId('Order a cake', new Set(['order-a-cake'])), 'order-a-cake-2');
  t.equal(newCtaId('Order a cake', new Set(['order-a-cake', 'order-a-cake-2'])), 'order-a-cake-3');
  const long = 'frequently-asked-questions-about-deliver';
  const next = newCtaId('Frequently asked questions about deliveries', new Set([long]));
  t.equal(next, 'frequently-asked-questions-about-deliv-2');
  t.match(next, SERVER_RULE);
});

t.test('existing ids never change; new buttons get unique ones in order', async (t) => {
  t.same(
    withCtaIds([
      { id: 'human', label: 'Talk to a baker', action: 'escalate' },
      { id: '', label: 'Order a cake', action: 'link', url: 'https://bakery.example/order' },
      { id: '', label: 'Order a cake', action: 'message', message: 'A cake, please.' },
      { id: '', label: 'Human', action: 'escalate' },
    ]),
    [
      { id: 'human', label: 'Talk to a baker', action: 'escalate' },
      { id: 'order-a-cake', label: 'Order a cake', action: 'link', url: 'https://bakery.example/order' },
      { id: 'order-a-cake-2', label: 'Order a cake', action: 'message', message: 'A cake, please.' },
      { id: 'human-2', label: 'Human', action: 'escalate' },
    ],
  );
});
