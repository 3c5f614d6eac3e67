import type { CallToAction } from '../types.ts';

// The server's rule for an id (src/chatbots/chatbot-settings.ts): 1-40 characters of A-Z, a-z, 0-9, _ and -.
const MAX_LENGTH = 40;

/** A button label as an id: lowercase ASCII words joined by `-` (`Order a cake` → `order-a-cake`), else `button`. */
export function slugOfLabel(label: string): string {
  const slug = label
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+/, '');
  return slug.slice(0, MAX_LENGTH).replace(/-+$/, '') || 'button';
}

/** The id of a new button: its label's slug, with `-2`, `-3`… when another button of the chatbot has it. */
export function newCtaId(label: string, taken: ReadonlySet<string>): string {
  const base = slugOfLabel(label);
  if (!taken.has(base)) return base;
  for (let n = 2; ; n += 1) {
    const suffix = `-${n}`;
    const id = `${base.slice(0, MAX_LENGTH - suffix.length).replace(/-+$/, '')}${suffix}`;
    if (!taken.has(id)) return id;
  }
}

/**
 * Gives each button that has no id yet one made from its label. Ids once given never change, so a
 * button keeps its id when its label is edited (conversations and the widget refer to it by id).
 */
export function withCtaIds(ctas: readonly CallToAction[]): CallToAction[] {
  const taken = new Set(ctas.map((cta) => cta.id).filter(Boolean));
  return ctas.map((cta) => {
    if (cta.id) return cta;
    const id = newCtaId(cta.label, taken);
    taken.add(id);
    return { ...cta, id };
  });
}
