/**
 * A short-lived memory of line-key lookups, so an authenticated request does not read the key and
 * its line from the database every time. Entries live `ttlMs` (CREDENTIAL_CACHE_TTL_MS, 5 s by
 * default); this process clears the cache on every rotation and revocation it makes, so only a
 * change made through another process (another node sharing a libSQL server) can take up to
 * `ttlMs` to be seen here: that is the documented bound of a revocation across nodes. Expiry and
 * revocation times already read are still judged against the clock on every request.
 */
export class CredentialCache<V> {
  readonly #entries = new Map<string, { value: V; storedAt: number }>();

  constructor(private readonly options: { ttlMs: number; entriesMax: number }) {}

  get(key: string, now: number): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (now - entry.storedAt >= this.options.ttlMs) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: string, value: V, now: number): void {
    if (this.#entries.size >= this.options.entriesMax) {
      this.#entries.delete(this.#entries.keys().next().value!);
    }
    this.#entries.set(key, { value, storedAt: now });
  }

  clear(): void {
    this.#entries.clear();
  }
}
