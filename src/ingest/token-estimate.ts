// Tokens per word, as a ratio of integers so that the estimate is exact arithmetic (no float drift
// at the limits). English prose runs near 1.3 tokens per word in the common BPE vocabularies.
const TOKENS_PER_TEN_WORDS = 13;

/** The number of whitespace-separated words in a text. */
export function countWords(text: string): number {
  return text.match(/\S+/g)?.length ?? 0;
}

/**
 * Estimated token count: words × 1.3, rounded up. Embedding providers tokenize differently, so the
 * chunker budgets with this provider-neutral estimate rather than one vocabulary's exact count.
 */
export function estimateTokens(text: string): number {
  return Math.ceil((countWords(text) * TOKENS_PER_TEN_WORDS) / 10);
}

/** The most words whose estimate stays within `tokens` (at least one). */
export function wordsWithin(tokens: number): number {
  return Math.max(1, Math.floor((tokens * 10) / TOKENS_PER_TEN_WORDS));
}
