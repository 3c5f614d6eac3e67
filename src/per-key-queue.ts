/**
 * Runs tasks one after another per key, and tasks of different keys side by side: the updates of one
 * chat in arrival order, the reloads of one chatbot's connection in turn. A failing task does not stop
 * the ones queued behind it; its rejection is the caller's to handle.
 */
export class PerKeyQueue<K> {
  private readonly tails = new Map<K, Promise<unknown>>();

  /** Queues `task` behind the key's earlier tasks; resolves or rejects as the task does. */
  run(key: K, task: () => Promise<void>): Promise<void> {
    const next = (this.tails.get(key) ?? Promise.resolve()).then(task);
    // The chain goes on once the task has settled; a rejection is not lost, `next` hands it to the caller.
    const tail = Promise.allSettled([next]);
    this.tails.set(key, tail);
    void tail.finally(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return next;
  }
}
