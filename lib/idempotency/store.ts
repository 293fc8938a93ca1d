/**
 * Idempotency records: looked up and completed in the same unit as the business write. On a
 * database several nodes share, a request first commits a claim: a record `in_progress` with a
 * lease, which a duplicate on any node reads as running (earlier versions wrote such claims on
 * every database; their leases are honoured the same way).
 */
import type { IdempotencyDecision, StoredIdempotency } from "./rules.ts";
import { decideIdempotency } from "./rules.ts";
import { columnsOf, json, keptText, multiRowInserts, notNull, rowMapper } from "../../db/rows.ts";
import { idempotencyRecords } from "../../db/schema.ts";
import type { WriteTx } from "../../db/writer.ts";

const idempotency = columnsOf(idempotencyRecords);
const toRecord: (row: Readonly<Record<string, unknown>>) => StoredIdempotency = rowMapper({
  fingerprint: idempotency.fingerprint,
  status: idempotency.status,
  leaseUntil: idempotency.leaseUntil,
  expiresAt: idempotency.expiresAt,
});
const toResponse = rowMapper({
  status: notNull(idempotency.responseStatus),
  headers: json<Record<string, string>>(notNull(idempotency.responseHeaders), "object"),
  body: notNull(idempotency.responseBody),
});

export interface IdempotencyScope {
  readonly companyId: string;
  /** The line of a /v1 key; '' for /api. */
  readonly scopeLine: string;
  readonly key: string;
}

export interface StoredResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: Uint8Array;
}

export type KeyLookup =
  | { readonly decision: "new" }
  | { readonly decision: "replay"; readonly response: StoredResponse }
  | { readonly decision: Exclude<IdempotencyDecision, "new" | "replay"> };

const KEY_WHERE = "company_id = ? AND scope_line = ? AND key = ?";
const keyArgs = (scope: IdempotencyScope) => [scope.companyId, scope.scopeLine, scope.key];

const LOOKUP_SQL =
  `SELECT fingerprint, status, lease_until, expires_at, response_status, response_headers, response_body
    FROM idempotency_records WHERE ${KEY_WHERE}`;

/** What the key's record (a lookup's rows) decides for this request. */
function lookupOf(
  rows: readonly Readonly<Record<string, unknown>>[],
  fingerprint: string,
  options: { now: number; ownLease: number | null },
): KeyLookup {
  const record = rows[0] ? toRecord(rows[0]) : null;
  const decision = decideIdempotency(record, fingerprint, options.now, options.ownLease);
  // A complete record always carries its response (storeIdempotentResponse writes all three).
  return decision === "replay" ? { decision, response: toResponse(rows[0]) } : { decision };
}

/**
 * Looks the key up with the unit's next round trip (on a libSQL server, the use case's first
 * statements) and tells `decided` what the stored record (if any) decides for this request; a
 * throw of `decided` fails the unit (WriteTx.defer). When another statement of that round trip
 * fails, `decided` is not called. `ownLease`: the lease of this request's own claim, if it
 * committed one.
 */
export function deferIdempotencyLookup(
  tx: WriteTx,
  scope: IdempotencyScope,
  fingerprint: string,
  options: { now: number; ownLease: number | null },
  decided: (lookup: KeyLookup) => void,
): void {
  tx.defer(
    { sql: LOOKUP_SQL, args: keyArgs(scope) },
    ({ rows }) => decided(lookupOf(rows, fingerprint, options)),
  );
}

/** What the stored record (if any) decides for this request, read in the request's unit now. */
export async function lookUpIdempotencyKey(
  tx: WriteTx,
  scope: IdempotencyScope,
  fingerprint: string,
  options: { now: number; ownLease: number | null },
): Promise<KeyLookup> {
  const { rows } = await tx.execute({ sql: LOOKUP_SQL, args: keyArgs(scope) });
  return lookupOf(rows, fingerprint, options);
}

/** Keys of one scope read by one statement at most. */
const LOOKUP_MANY_KEYS_MAX = 500;

const LOOKUP_MANY_SQL = `SELECT key, fingerprint, status, lease_until, expires_at, response_status,
    response_headers, response_body
  FROM idempotency_records WHERE company_id = ? AND scope_line = ? AND key IN`;

/**
 * What each key's stored record (if any) decides for its request, as lookUpIdempotencyKey
 * decides one, the records read in one statement per page of keys.
 */
export async function lookUpIdempotencyKeys(
  tx: WriteTx,
  keys: readonly { readonly scope: IdempotencyScope; readonly fingerprint: string }[],
  options: readonly { now: number; ownLease: number | null }[],
): Promise<KeyLookup[]> {
  const rowsOf = new Map<string, Readonly<Record<string, unknown>>>();
  const byScope = Map.groupBy(
    keys,
    ({ scope }) => JSON.stringify([scope.companyId, scope.scopeLine]),
  );
  for (const [scopeOf, scoped] of byScope) {
    const [companyId, scopeLine] = JSON.parse(scopeOf) as [string, string];
    for (let at = 0; at < scoped.length; at += LOOKUP_MANY_KEYS_MAX) {
      const page = scoped.slice(at, at + LOOKUP_MANY_KEYS_MAX);
      const { rows } = await tx.execute({
        sql: keptText(
          LOOKUP_MANY_SQL,
          page.length,
          () => `${LOOKUP_MANY_SQL} (${page.map(() => "?").join(", ")})`,
        ),
        args: [companyId, scopeLine, ...page.map(({ scope }) => scope.key)],
      });
      for (const row of rows) rowsOf.set(JSON.stringify([companyId, scopeLine, row.key]), row);
    }
  }
  return keys.map(({ scope, fingerprint }, i) => {
    const row = rowsOf.get(JSON.stringify(keyArgs(scope)));
    return lookupOf(row ? [row] : [], fingerprint, options[i]);
  });
}

/**
 * Claims the key for this request until `leaseUntil` when the stored record lets it run (none,
 * expired, or this same request's claim whose lease is over: decideIdempotency's "new", written
 * as the upsert's condition). One conditional write whose result is not read, deferred so that
 * it rides with its unit's COMMIT: one round trip on a libSQL server. Whether it was taken is
 * read by the answering unit's lookup (`ownLease`: the record carries this request's lease). The
 * claim expires with its lease, so a node that dies holding it frees the key for any request
 * once the lease is over.
 */
export function claimIdempotencyKey(
  tx: WriteTx,
  scope: IdempotencyScope,
  fingerprint: string,
  options: { now: number; leaseUntil: number },
): void {
  tx.defer({
    sql: `INSERT INTO idempotency_records
            (company_id, scope_line, key, fingerprint, status, lease_until, created_at, expires_at)
          VALUES (?, ?, ?, ?, 'in_progress', ?, ?, ?)
          ON CONFLICT (company_id, scope_line, key) DO UPDATE SET
            fingerprint = excluded.fingerprint, status = 'in_progress',
            lease_until = excluded.lease_until, response_status = NULL, response_headers = NULL,
            response_body = NULL, created_at = excluded.created_at, expires_at = excluded.expires_at
          WHERE idempotency_records.expires_at <= ?8
            OR (idempotency_records.fingerprint = excluded.fingerprint
              AND idempotency_records.status = 'in_progress'
              AND coalesce(idempotency_records.lease_until, ?8) <= ?8)`,
    args: [
      ...keyArgs(scope),
      fingerprint,
      options.leaseUntil,
      options.now,
      options.leaseUntil,
      options.now,
    ],
  });
}

/** Gives up this request's claim (its use case failed and wrote nothing), if it still holds it. */
export function releaseIdempotencyClaim(
  tx: WriteTx,
  scope: IdempotencyScope,
  leaseUntil: number,
): Promise<void> {
  tx.defer({
    sql: `DELETE FROM idempotency_records
          WHERE ${KEY_WHERE} AND status = 'in_progress' AND lease_until = ?`,
    args: [...keyArgs(scope), leaseUntil],
  });
  return Promise.resolve();
}

/** A response to replay, with its key and how long it is kept. */
export interface ResponseToKeep {
  readonly scope: IdempotencyScope;
  readonly fingerprint: string;
  readonly response: StoredResponse;
  readonly now: number;
  readonly ttlMs: number;
}

/**
 * Stores responses to replay for 24 hours, in the unit that made the business change (an expired
 * record of the same key is replaced), one statement per page of them. Each key at most once.
 */
export function storeIdempotentResponses(tx: WriteTx, kept: readonly ResponseToKeep[]): void {
  // The last write of the request's unit: it rides with the unit's end.
  for (
    const statement of multiRowInserts(
      STORE_RESPONSE_HEAD,
      kept.map(({ scope, fingerprint, response, now, ttlMs }) => [
        ...keyArgs(scope),
        fingerprint,
        "complete",
        response.status,
        JSON.stringify(response.headers),
        response.body,
        now,
        now + ttlMs,
      ]),
      STORE_RESPONSE_CONFLICT,
    )
  ) tx.defer(statement);
}

/** A new record has no lease (the column's default); a replaced one's is cleared. */
const STORE_RESPONSE_HEAD = `INSERT INTO idempotency_records
  (company_id, scope_line, key, fingerprint, status, response_status, response_headers,
   response_body, created_at, expires_at)`;

const STORE_RESPONSE_CONFLICT = ` ON CONFLICT (company_id, scope_line, key) DO UPDATE SET
  fingerprint = excluded.fingerprint, status = 'complete', lease_until = NULL,
  response_status = excluded.response_status, response_headers = excluded.response_headers,
  response_body = excluded.response_body, created_at = excluded.created_at,
  expires_at = excluded.expires_at`;

/** Deletes at most `limit` records whose 24 hours are over; returns how many. */
export async function purgeExpiredIdempotency(
  tx: WriteTx,
  now: number,
  limit: number,
): Promise<number> {
  const result = await tx.execute({
    sql: `DELETE FROM idempotency_records WHERE rowid IN
            (SELECT rowid FROM idempotency_records WHERE expires_at <= ? LIMIT ?)`,
    args: [now, limit],
  });
  return result.rowsAffected;
}
