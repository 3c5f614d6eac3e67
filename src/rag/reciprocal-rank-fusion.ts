/** DESIGN.md: the RRF constant. */
export const RRF_K = 60;

/** A fused entry: the id, its RRF score, and its 1-based rank in each input list (if present). */
export interface FusedEntry {
  id: string;
  score: number;
  ranks: Array<number | undefined>;
}

/**
 * Reciprocal Rank Fusion: score(d) = Σ 1 / (k + rank_i(d)) over the lists that contain d.
 * Ties are broken by the best single rank, then by id, so the order is deterministic. The one fusion
 * function both engines use.
 */
export function reciprocalRankFusion(lists: string[][], k: number = RRF_K): FusedEntry[] {
  const entries = new Map<string, FusedEntry>();
  lists.forEach((list, listIndex) => {
    list.forEach((id, position) => {
      let entry = entries.get(id);
      if (!entry) {
        entry = { id, score: 0, ranks: lists.map(() => undefined) };
        entries.set(id, entry);
      }
      if (entry.ranks[listIndex] !== undefined) return;
      entry.ranks[listIndex] = position + 1;
      entry.score += 1 / (k + position + 1);
    });
  });
  const best = (e: FusedEntry) => Math.min(...e.ranks.map((r) => r ?? Infinity));
  return [...entries.values()].sort(
    (a, b) => b.score - a.score || best(a) - best(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
}
