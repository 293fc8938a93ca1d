/**
 * Copies of committed rows for reads, kept coherent by the one writer of the database: every
 * commit that changes a row drops its copy, and a copy read before such a commit is never stored
 * after it (each store carries the generation it was read under). Only sound where this process
 * is the database's only writer (an embedded file under the DATA_DIR lock).
 */
export class CommittedReadCache<V> {
  readonly #entries = new Map<string, V>();
  #generation = 0;

  constructor(private readonly entriesMax: number) {}

  get(key: string): V | undefined {
    const value = this.#entries.get(key);
    if (value !== undefined) {
      // Most recently used last, so eviction drops the coldest copy.
      this.#entries.delete(key);
      this.#entries.set(key, value);
    }
    return value;
  }

  /** Take before reading; pass to `put` so a read that raced a commit is not kept. */
  generation(): number {
    return this.#generation;
  }

  put(key: string, value: V, readUnder: number): void {
    if (readUnder !== this.#generation || this.entriesMax === 0) return;
    if (this.#entries.size >= this.entriesMax) {
      this.#entries.delete(this.#entries.keys().next().value!);
    }
    this.#entries.set(key, value);
  }

  /** Called after a commit changed these rows. */
  invalidate(keys: Iterable<string>): void {
    this.#generation++;
    for (const key of keys) this.#entries.delete(key);
  }

  get size(): number {
    return this.#entries.size;
  }
}
