/** Idempotency records: claimed with a lease, completed in the same unit as the business write. */
import type { IdempotencyDecision, StoredIdempotency } from "../lib/idempotency.ts";
import { decideIdempotency } from "../lib/idempotency.ts";
import type { WriteTx } from "./writer.ts";

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

export type Claim =
  | { readonly decision: "new" }
  | { readonly decision: "replay"; readonly response: StoredResponse }
  | { readonly decision: Exclude<IdempotencyDecision, "new" | "replay"> };

const KEY_WHERE = "company_id = ? AND scope_line = ? AND key = ?";
const keyArgs = (scope: IdempotencyScope) => [scope.companyId, scope.scopeLine, scope.key];

/**
 * Looks the key up and, when the request may run, takes a lease on it in the same unit, so a
 * concurrent duplicate sees it in progress.
 */
export async function claimIdempotencyKey(
  tx: WriteTx,
  scope: IdempotencyScope,
  fingerprint: string,
  options: { now: number; ttlMs: number; leaseMs: number },
): Promise<Claim> {
  const { rows } = await tx.execute({
    sql:
      `SELECT fingerprint, status, lease_until, expires_at, response_status, response_headers, response_body
          FROM idempotency_records WHERE ${KEY_WHERE}`,
    args: keyArgs(scope),
  });
  const row = rows[0];
  const record: StoredIdempotency | null = row
    ? {
      fingerprint: String(row.fingerprint),
      status: row.status as StoredIdempotency["status"],
      leaseUntil: row.lease_until === null ? null : Number(row.lease_until),
      expiresAt: Number(row.expires_at),
    }
    : null;
  const decision = decideIdempotency(record, fingerprint, options.now);
  if (decision === "replay") {
    return {
      decision,
      response: {
        status: Number(row!.response_status),
        headers: JSON.parse(String(row!.response_headers)) as Record<string, string>,
        body: new Uint8Array(row!.response_body as ArrayBuffer),
      },
    };
  }
  if (decision !== "new") return { decision };
  await tx.execute({
    sql: `INSERT INTO idempotency_records
            (company_id, scope_line, key, fingerprint, status, lease_until, created_at, expires_at)
          VALUES (?, ?, ?, ?, 'in_progress', ?, ?, ?)
          ON CONFLICT (company_id, scope_line, key) DO UPDATE SET
            fingerprint = excluded.fingerprint, status = 'in_progress', lease_until = excluded.lease_until,
            response_status = NULL, response_headers = NULL, response_body = NULL,
            created_at = excluded.created_at, expires_at = excluded.expires_at`,
    args: [
      ...keyArgs(scope),
      fingerprint,
      options.now + options.leaseMs,
      options.now,
      options.now + options.ttlMs,
    ],
  });
  return { decision };
}

/** Stores the response to replay; call it inside the unit that made the business change. */
export async function completeIdempotencyKey(
  tx: WriteTx,
  scope: IdempotencyScope,
  response: StoredResponse,
): Promise<void> {
  await tx.execute({
    sql: `UPDATE idempotency_records
          SET status = 'complete', lease_until = NULL, response_status = ?, response_headers = ?, response_body = ?
          WHERE ${KEY_WHERE}`,
    args: [response.status, JSON.stringify(response.headers), response.body, ...keyArgs(scope)],
  });
}

/** Forgets a claimed key: its request was refused by validation or failed without effect. */
export async function releaseIdempotencyKey(tx: WriteTx, scope: IdempotencyScope): Promise<void> {
  await tx.execute({
    sql: `DELETE FROM idempotency_records WHERE ${KEY_WHERE} AND status = 'in_progress'`,
    args: keyArgs(scope),
  });
}

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
