/**
 * Idempotent POSTs (contract §7). The fingerprint is method + path + canonical body; the
 * decision for a key is a pure function of the stored record, the fingerprint and the time.
 */
import { sha256Hex } from "../platform/keys.ts";

export type IdempotencyDecision =
  /** No live record (or an abandoned lease): run the request. */
  | "new"
  /** Same key, same request, finished: answer with the stored response. */
  | "replay"
  /** Same key, other request: 422 idempotency_key_reused. */
  | "mismatch"
  /** Same key, same request, still running within its lease: 409. */
  | "in_progress";

export interface StoredIdempotency {
  readonly fingerprint: string;
  readonly status: "in_progress" | "complete";
  readonly leaseUntil: number | null;
  readonly expiresAt: number;
}

/**
 * Decides what a request with an already-used key gets. `ownLease` is the lease of the claim this
 * request itself committed (a database several nodes share): that running record is its own,
 * not a duplicate's.
 */
export function decideIdempotency(
  record: StoredIdempotency | null,
  fingerprint: string,
  now: number,
  ownLease: number | null = null,
): IdempotencyDecision {
  if (record === null || record.expiresAt <= now) return "new";
  if (record.fingerprint !== fingerprint) return "mismatch";
  if (record.status === "complete") return "replay";
  if (ownLease !== null && record.leaseUntil === ownLease) return "new";
  return record.leaseUntil !== null && record.leaseUntil > now ? "in_progress" : "new";
}

/** JSON with object keys sorted at every depth, so key order does not change the fingerprint. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.keys(value).sort().map((key) =>
      `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`
    );
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value);
}

/** The request's fingerprint: a JSON body is canonicalized, any other body is taken as is. */
export async function requestFingerprint(
  method: string,
  path: string,
  bodyText: string,
): Promise<string> {
  let canonical = bodyText;
  if (bodyText.trim() !== "") {
    try {
      canonical = canonicalJson(JSON.parse(bodyText));
    } catch {
      // not JSON: the raw text is the body
    }
  }
  return await sha256Hex(`${method.toUpperCase()} ${path}\n${canonical}`);
}

/** An Idempotency-Key is printable ASCII without spaces (the OpenAPI document shows this pattern). */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]+$/;

/** Why a key is refused before it is looked up, or null when it is usable. */
export function idempotencyKeyProblem(key: string, lengthMax: number): string | null {
  if (key.length === 0) return "Idempotency-Key must not be empty";
  if (key.length > lengthMax) {
    return `Idempotency-Key is ${key.length} characters; at most ${lengthMax}`;
  }
  if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
    return "Idempotency-Key must be printable ASCII without spaces";
  }
  return null;
}
