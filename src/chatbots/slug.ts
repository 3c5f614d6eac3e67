import slugifyText from '@sindresorhus/slugify';

/** SPEC's slug: lowercase ASCII words joined by `-` (transliterated), or `chatbot` when none remain. */
export function slugify(name: string): string {
  return slugifyText(name, { lowercase: true, decamelize: false }).slice(0, 64).replace(/-+$/, '') || 'chatbot';
}
