import { estimateTokens, wordsWithin } from './token-estimate.ts';

const sentences = new Intl.Segmenter('en', { granularity: 'sentence' });

/**
 * Splits a block that is over `maxTokens` into pieces within it: at sentence ends where it can, and
 * between words inside a sentence that alone is too long; never inside a word. A block within the
 * limit comes back whole.
 */
export function splitToFit(text: string, maxTokens: number): string[] {
  if (estimateTokens(text) <= maxTokens) return [text];
  const pieces: string[] = [];
  let current = '';
  for (const { segment } of sentences.segment(text)) {
    for (const part of wordWindows(segment.trim(), maxTokens)) {
      const joined = current ? `${current} ${part}` : part;
      if (current && estimateTokens(joined) > maxTokens) {
        pieces.push(current);
        current = part;
      } else {
        current = joined;
      }
    }
  }
  if (current) pieces.push(current);
  return pieces;
}

/** The last whole words of a text whose estimate stays within `maxTokens`. */
export function lastWords(text: string, maxTokens: number): string {
  if (maxTokens <= 0) return '';
  const words = text.split(/\s+/).filter(Boolean);
  return words.slice(-wordsWithin(maxTokens)).join(' ');
}

/** The first whole words of a text whose estimate stays within `maxTokens`. */
export function firstWords(text: string, maxTokens: number): string {
  const words = text.split(/\s+/).filter(Boolean);
  return words.slice(0, wordsWithin(maxTokens)).join(' ');
}

function wordWindows(sentence: string, maxTokens: number): string[] {
  if (!sentence) return [];
  if (estimateTokens(sentence) <= maxTokens) return [sentence];
  const words = sentence.split(/\s+/);
  const size = wordsWithin(maxTokens);
  const windows: string[] = [];
  for (let start = 0; start < words.length; start += size) windows.push(words.slice(start, start + size).join(' '));
  return windows;
}
