/**
 * Per-credential rate limit (contract §11): a token bucket per credential that refills
 * `ratePerSecond` tokens a second up to the same capacity. Memory is bounded: past `credentialsMax`
 * buckets the least recently used one is forgotten (it would have refilled anyway). The buckets
 * live in this process: several nodes on one libSQL server each allow RATE_LIMIT_RPS, so a
 * credential spread over N nodes gets up to N times the rate (a shared limit belongs in front of
 * the nodes).
 */
export interface RateDecision {
  readonly allowed: boolean;
  /** Whole seconds until one request is allowed again (0 when allowed). */
  readonly retryAfterSeconds: number;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

export class RateLimiter {
  readonly #buckets = new Map<string, Bucket>();
  readonly #ratePerSecond: number;
  readonly #credentialsMax: number;

  constructor(options: { ratePerSecond: number; credentialsMax?: number }) {
    if (options.ratePerSecond <= 0) throw new Error("a rate limiter needs a positive rate");
    this.#ratePerSecond = options.ratePerSecond;
    this.#credentialsMax = options.credentialsMax ?? 100_000;
  }

  /** Takes one token for `credential` at `now` (ms), or says how long to wait. */
  take(credential: string, now: number): RateDecision {
    const capacity = this.#ratePerSecond;
    const bucket = this.#buckets.get(credential) ?? { tokens: capacity, updatedAt: now };
    const elapsedSeconds = Math.max(0, now - bucket.updatedAt) / 1000;
    bucket.tokens = Math.min(capacity, bucket.tokens + elapsedSeconds * this.#ratePerSecond);
    bucket.updatedAt = now;
    // Re-inserting keeps Map order least-recently-used first.
    this.#buckets.delete(credential);
    this.#buckets.set(credential, bucket);
    if (this.#buckets.size > this.#credentialsMax) {
      this.#buckets.delete(this.#buckets.keys().next().value!);
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true, retryAfterSeconds: 0 };
    }
    const waitSeconds = (1 - bucket.tokens) / this.#ratePerSecond;
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(waitSeconds)) };
  }

  get size(): number {
    return this.#buckets.size;
  }
}

/** The limiter of RATE_LIMIT_RPS, or null when it is 0 (no limit, as benchmarks run). */
export function rateLimiterOf(limits: { readonly RATE_LIMIT_RPS: number }): RateLimiter | null {
  return limits.RATE_LIMIT_RPS > 0
    ? new RateLimiter({ ratePerSecond: limits.RATE_LIMIT_RPS })
    : null;
}
