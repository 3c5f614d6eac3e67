import t from 'tap';
import { asksForHuman, matchesKeyword } from '../../src/conversations/escalation-intent.ts';

const ASKS: Record<string, string[]> = {
  English: [
    'Can I talk to a human?',
    'I want to speak with a real person please',
    'TRANSFER ME TO AN AGENT',
    'connect me with someone from your support team',
    'I need a human',
    'Is there a live agent available?',
    'representative please',
    'Put me through to customer service',
  ],
  Spanish: [
    'Quiero hablar con un humano',
    '¿Puedo hablar con una persona?',
    'necesito un agente humano',
    'Hablar con un asesor, por favor',
    'PERSONA REAL por favor',
  ],
  French: [
    'Je veux parler à un humain',
    'Puis-je parler avec un conseiller ?',
    "J'aimerais parler à quelqu'un",
    'un vrai humain svp',
    'Passez-moi un agent humain',
  ],
  German: [
    'Ich möchte mit einem Menschen sprechen',
    'Kann ich mit einem Mitarbeiter reden?',
    'Bitte einen echten Menschen',
    'Ich will mit jemandem sprechen',
  ],
  Portuguese: [
    'Quero falar com um humano',
    'Posso falar com um atendente?',
    'preciso de uma pessoa real',
    'Falar com alguém, por favor',
    'atendente humano por favor',
  ],
};

const DOES_NOT_ASK = [
  'What are your opening hours?',
  'Is the export format human-readable?',
  'How many people work at your company?',
  'Tell me about your agent pricing plan',
  'La persona que compró el producto',
  'Das Produkt ist für Menschen gemacht',
  'Quel est le prix pour une personne ?',
  'Qual é o horário de atendimento?',
  'I talked to my manager about the invoice yesterday and he agreed',
];

for (const [language, messages] of Object.entries(ASKS)) {
  t.test(`${language}: asking for a human is recognised`, async (t) => {
    for (const message of messages) t.ok(asksForHuman(message), message);
  });
}

t.test('messages that only mention people, humans or agents do not escalate', async (t) => {
  for (const message of DOES_NOT_ASK) t.notOk(asksForHuman(message), message);
});

t.test('owner keywords match whole words and phrases, case- and accent-insensitively', async (t) => {
  t.ok(matchesKeyword('I want a REFUND now', ['refund']));
  t.ok(matchesKeyword('Quiero una devolución', ['devolucion']));
  t.ok(matchesKeyword('this is a legal matter!', ['legal matter']));
  t.notOk(matchesKeyword('refunded already', ['refund']), 'not inside a longer word');
  t.notOk(matchesKeyword('anything', []), 'no keywords, no match');
  t.notOk(matchesKeyword('anything', ['  ']), 'a blank keyword matches nothing');
});
