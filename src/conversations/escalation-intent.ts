/**
 * Smart intent: does a visitor's message ask for a human? Phrasings in English, Spanish, French,
 * German and Portuguese, matched case- and accent-insensitively. A bare mention of a word like
 * "human" or "person" is not enough ("is this human-readable?"): the message has to ask to talk to,
 * be put through to, or get one.
 */

const WHO_EN =
  '(?:a |an |the |some |your |one of your )?(?:real |live |actual )?(?:human|person|agent|representative|rep|operator|someone|somebody|staff|support team|customer service|manager)';
const PATTERNS: RegExp[] = [
  // English
  new RegExp(`\\b(?:talk|speak|chat|connect|transfer|put|get) (?:me )?(?:through )?(?:to|with) ${WHO_EN}\\b`),
  new RegExp(
    `\\b(?:want|need|like|get|can i have|give me) (?:to (?:talk|speak) to )?(?:a |an )?(?:real |live )?(?:human|person|agent|representative|operator)\\b`,
  ),
  /\b(?:real|actual|live) (?:human|person|agent)\b/,
  /\bhuman (?:agent|being|support|please)\b/,
  /\b(?:representative|operator|agent) please\b/,
  // Spanish
  /\b(?:hablar|comunicarme|comunicar|contactar) con (?:un |una |el |la |alguien|algun )?(?:humano|persona|agente|asesor|asesora|operador|operadora|representante|alguien)/,
  /\b(?:persona real|agente humano|ser humano|quiero un humano|un humano por favor)\b/,
  // French
  /\bparler (?:a|avec) (?:un |une |quelqu'un|quelqu un|le |la )?(?:humain|personne|agent|conseiller|conseillere|operateur|operatrice|vrai|vraie|quelqu)/,
  /\b(?:vrai humain|vraie personne|agent humain|etre humain|un humain svp|un humain s'il vous plait)\b/,
  // German
  /\bmit (?:einem |einer |jemandem|jemand)?\s*(?:echten |richtigen )?(?:menschen|mensch|mitarbeiter|mitarbeiterin|berater|beraterin|agenten|person|jemandem)?\s*(?:sprechen|reden)\b/,
  /\b(?:echten menschen|echte person|menschlichen mitarbeiter|mitarbeiter sprechen|einen menschen)\b/,
  // Portuguese
  /\b(?:falar|conversar) com (?:um |uma |o |a |algu[e]m)?(?:humano|pessoa|atendente|agente|operador|operadora|representante|alguem)/,
  /\b(?:pessoa real|atendente humano|ser humano|quero um humano)\b/,
];

/** Lowercase, accents removed, whitespace collapsed: how messages and keywords are compared. */
export function normalizeText(text: string): string {
  return text
    .normalize('NFD')
    .replace(/\p{Mn}/gu, '')
    .toLowerCase()
    .replace(/[’`]/g, "'")
    .replace(/\s+/g, ' ')
    .trim();
}

/** Whether the message asks for a human. */
export function asksForHuman(message: string): boolean {
  const text = normalizeText(message);
  return PATTERNS.some((pattern) => pattern.test(text));
}

/** Whether the message contains one of the owner's keywords, as whole words or phrases. */
export function matchesKeyword(message: string, keywords: readonly string[]): boolean {
  const text = ` ${normalizeText(message).replace(/[^\p{L}\p{N}]+/gu, ' ')} `;
  return keywords.some((keyword) => {
    const phrase = normalizeText(keyword)
      .replace(/[^\p{L}\p{N}]+/gu, ' ')
      .trim();
    return phrase.length > 0 && text.includes(` ${phrase} `);
  });
}
