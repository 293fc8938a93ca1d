/**
 * The dispatcher's SQL: which deliveries are due, their claims (a lease in the row), the record of
 * each attempt with the delivery's next step, and the endpoint's circuit breaker (failing_since,
 * disabled_at) moved in the same unit; and the explicit re-enable of a disabled endpoint.
 */
import type { DeliverableEvent } from "./payloads.ts";
import { eventSequenceSql } from "./event_store.ts";
import { type AttemptAnswer, type CircuitAfter, circuitAfterAttempts } from "./circuit.ts";
import { nextAttemptAt, RETRY_WINDOW_MS } from "./schedule.ts";
import type { EndpointScope } from "./store.ts";
import type { Database } from "../../db/client.ts";
import type { WriteTx } from "../../db/writer.ts";

/** `count` rows of `width` placeholders, for VALUES lists. */
const values = (width: number, count: number) =>
  Array.from({ length: count }, () => `(${Array(width).fill("?").join(", ")})`).join(", ");

/** A due delivery before its claim: enough to share the endpoint's slots out. */
export interface DueDelivery {
  readonly id: string;
  readonly endpointId: string;
  /** The endpoint's run of failures (circuit breaker). */
  readonly failingSince: number | null;
}

/**
 * Due, unclaimed deliveries of enabled endpoints in the order they fell due, leaving out the
 * endpoints in `full` (no free slot) and those in `waitingForProbe` while their circuit is open.
 */
export async function dueDeliveries(
  tx: WriteTx,
  now: number,
  options: { full: readonly string[]; waitingForProbe: readonly string[]; limit: number },
): Promise<DueDelivery[]> {
  const { rows } = await tx.execute({
    sql: `SELECT d.id, d.endpoint_id, e.failing_since
          FROM webhook_deliveries d
          JOIN webhook_endpoints e ON e.id = d.endpoint_id
          WHERE d.status = 'pending' AND d.next_attempt_at <= ?
            AND (d.claimed_until IS NULL OR d.claimed_until < ?)
            AND e.disabled_at IS NULL AND e.deleted_at IS NULL
            AND d.endpoint_id NOT IN (SELECT value FROM json_each(?))
            AND NOT (e.failing_since IS NOT NULL
              AND d.endpoint_id IN (SELECT value FROM json_each(?)))
          ORDER BY d.next_attempt_at, d.rowid LIMIT ?`,
    args: [
      now,
      now,
      JSON.stringify(options.full),
      JSON.stringify(options.waitingForProbe),
      options.limit,
    ],
  });
  return rows.map((row) => ({
    id: String(row.id),
    endpointId: String(row.endpoint_id),
    failingSince: row.failing_since === null ? null : Number(row.failing_since),
  }));
}

/**
 * Whether any delivery is due and unclaimed, read outside every unit: a sweep that finds none
 * skips its claim unit. A delivery falling due right after is claimed by the next sweep.
 */
export async function anyDeliveryDue(database: Database, now: number): Promise<boolean> {
  const { rows } = await database.readClient.execute({
    sql: `SELECT 1 FROM webhook_deliveries
          WHERE status = 'pending' AND next_attempt_at <= ?
            AND (claimed_until IS NULL OR claimed_until < ?)
          LIMIT 1`,
    args: [now, now],
  });
  return rows.length > 0;
}

/** A claimed delivery with everything its attempt needs. */
export interface ClaimedDelivery {
  readonly id: string;
  readonly endpointId: string;
  readonly url: string;
  readonly surface: "api" | "v1";
  readonly sealedSecrets: string[];
  /** The endpoint asks for the ed25519 signature (`v1a,`) beside the HMAC ones. */
  readonly ed25519: boolean;
  readonly manual: boolean;
  readonly attemptCount: number;
  readonly createdAt: number;
  readonly event: DeliverableEvent;
  /** The payee's latest signed document, linked from Surface A payloads. */
  readonly signedDocumentId: string | null;
}

/**
 * Claims the deliveries `ids` until `leaseUntil` (no other sweep takes them before; a crash
 * releases them after) and reads them in the order given.
 */
export async function claimDeliveries(
  tx: WriteTx,
  ids: readonly string[],
  now: number,
  leaseUntil: number,
): Promise<ClaimedDelivery[]> {
  if (ids.length === 0) return [];
  await tx.execute({
    sql: `UPDATE webhook_deliveries SET claimed_until = ?
          WHERE id IN (${ids.map(() => "?").join(", ")})`,
    args: [leaseUntil, ...ids],
  });
  const { rows } = await tx.execute({
    sql: `SELECT d.id, d.endpoint_id, d.manual, d.attempt_count, d.created_at AS delivery_created,
            e.url, e.surface, e.secret_ciphertext, e.previous_secret_ciphertext, e.previous_secret_expires_at,
            e.ed25519_signatures,
            ev.id AS event_id, ev.line_id, ev.type, ev.event_type_id, ev.reason, ev.data, ev.created_at AS event_created,
            c.name AS company_name, c.tin, ${eventSequenceSql("ev")} AS sequence,
            (SELECT json_group_object(code, id) FROM ledger_accounts WHERE line_id = ev.line_id) AS ledger_accounts,
            (SELECT id FROM signed_documents WHERE payout_id = ev.payout_id
               ORDER BY signed_at DESC, id DESC LIMIT 1) AS signed_document_id
          FROM webhook_deliveries d
          JOIN webhook_endpoints e ON e.id = d.endpoint_id
          JOIN events ev ON ev.id = d.event_id
          JOIN companies c ON c.id = ev.company_id
          WHERE d.id IN (${ids.map(() => "?").join(", ")})`,
    args: [...ids],
  });
  const byId = new Map(rows.map((row) => [String(row.id), row]));
  return ids.map((id) => {
    const row = byId.get(id)!;
    return {
      id,
      endpointId: String(row.endpoint_id),
      url: String(row.url),
      surface: row.surface as "api" | "v1",
      // During a rotation the previous secret signs beside the new one until it expires.
      sealedSecrets: [
        String(row.secret_ciphertext),
        ...(row.previous_secret_ciphertext !== null &&
            Number(row.previous_secret_expires_at) > now
          ? [String(row.previous_secret_ciphertext)]
          : []),
      ],
      ed25519: Number(row.ed25519_signatures) === 1,
      manual: Number(row.manual) === 1,
      attemptCount: Number(row.attempt_count),
      createdAt: Number(row.delivery_created),
      event: {
        id: String(row.event_id),
        type: row.type === null ? null : String(row.type),
        eventTypeId: Number(row.event_type_id),
        reason: row.reason === null ? null : String(row.reason),
        createdAt: Number(row.event_created),
        data: JSON.parse(String(row.data)) as Record<string, unknown>,
        company: { name: String(row.company_name), tin: String(row.tin) },
        lineId: row.line_id === null ? null : String(row.line_id),
        ledgerAccounts: row.ledger_accounts === null
          ? {}
          : JSON.parse(String(row.ledger_accounts)) as Record<string, string>,
        sequence: row.sequence === null ? null : Number(row.sequence),
      },
      signedDocumentId: row.signed_document_id === null ? null : String(row.signed_document_id),
    };
  });
}

/**
 * Extends the claims of deliveries still waiting in this process for a slot, so that each lease
 * outlasts the attempt it is waiting for; a delivery recorded meanwhile keeps no claim.
 */
export async function extendClaims(
  tx: WriteTx,
  ids: readonly string[],
  until: number,
): Promise<void> {
  if (ids.length === 0) return;
  await tx.execute({
    sql: `UPDATE webhook_deliveries SET claimed_until = ?
          WHERE id IN (${ids.map(() => "?").join(", ")}) AND claimed_until IS NOT NULL`,
    args: [until, ...ids],
  });
}

/** Releases the claims of deliveries this process will not attempt (it is stopping). */
export async function releaseClaims(tx: WriteTx, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await tx.execute({
    sql: `UPDATE webhook_deliveries SET claimed_until = NULL
          WHERE id IN (${ids.map(() => "?").join(", ")})`,
    args: [...ids],
  });
}

export interface AttemptResult {
  readonly statusCode: number | null;
  readonly durationMs: number;
  readonly excerpt: string | null;
  readonly error: string | null;
  readonly retryAfterSeconds: number | null;
  readonly signature: string;
}

export interface AttemptOutcome {
  readonly delivery: Pick<
    ClaimedDelivery,
    "id" | "endpointId" | "manual" | "attemptCount" | "createdAt"
  >;
  readonly result: AttemptResult;
}

const answerOf = (result: AttemptResult): AttemptAnswer =>
  result.statusCode === 410
    ? "gone"
    : result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300
    ? "succeeded"
    : "failed";

/** An endpoint the recorded attempts disabled. */
export interface DisabledEndpoint {
  readonly endpointId: string;
  readonly companyId: string;
  readonly reason: string;
  readonly failingSince: number | null;
}

export interface RecordedAttempts {
  /** Each attempted endpoint's circuit after these attempts. */
  readonly circuits: ReadonlyMap<string, CircuitAfter>;
  readonly disabled: readonly DisabledEndpoint[];
}

/**
 * Records attempts (one row each) and each delivery's next step, and moves each endpoint's circuit:
 * a success clears failing_since, a failure starts it; an open circuit pushes the endpoint's
 * waiting deliveries to its next probe; a disabled endpoint's waiting deliveries fail (they can be
 * replayed). One statement per table and step.
 */
export async function recordAttempts(
  tx: WriteTx,
  outcomes: readonly AttemptOutcome[],
  now: number,
  random?: () => number,
): Promise<RecordedAttempts> {
  const endpointIds = [...new Set(outcomes.map(({ delivery }) => delivery.endpointId))];
  const { rows: endpoints } = await tx.execute({
    sql: `SELECT id, company_id, failing_since, disabled_at, deleted_at FROM webhook_endpoints
          WHERE id IN (${endpointIds.map(() => "?").join(", ")})`,
    args: endpointIds,
  });
  const circuits = new Map<string, CircuitAfter>();
  const disabled: DisabledEndpoint[] = [];
  const stopped = new Set<string>();
  // Deleted while an attempt was in flight: what would have waited for a retry is canceled.
  const deleted = new Set<string>();
  for (const endpoint of endpoints) {
    const id = String(endpoint.id);
    const circuit = circuitAfterAttempts({
      failingSince: endpoint.failing_since === null ? null : Number(endpoint.failing_since),
      now,
      answers: outcomes.filter(({ delivery }) => delivery.endpointId === id).map(({ result }) =>
        answerOf(result)
      ),
    });
    circuits.set(id, circuit);
    if (endpoint.deleted_at !== null) deleted.add(id);
    if (endpoint.disabled_at !== null || endpoint.deleted_at !== null) stopped.add(id);
    else if (circuit.disabledReason !== null) {
      stopped.add(id);
      disabled.push({
        endpointId: id,
        companyId: String(endpoint.company_id),
        reason: circuit.disabledReason,
        failingSince: circuit.failingSince,
      });
    }
  }

  await tx.execute({
    sql:
      `INSERT INTO delivery_attempts (delivery_id, attempted_at, status_code, duration_ms, response_excerpt, error)
          VALUES ${values(6, outcomes.length)}`,
    args: outcomes.flatMap(({ delivery, result }) => [
      delivery.id,
      now,
      result.statusCode,
      result.durationMs,
      result.excerpt,
      result.error,
    ]),
  });
  const updates = outcomes.map(({ delivery, result }) => {
    const attempts = delivery.attemptCount + 1;
    const answer = answerOf(result);
    const probeNotBefore = circuits.get(delivery.endpointId)?.probeNotBefore ?? null;
    let next = answer !== "failed" || delivery.manual || stopped.has(delivery.endpointId)
      ? null
      : nextAttemptAt({
        attemptsMade: attempts,
        eventCreatedAt: delivery.createdAt,
        now,
        retryAfterSeconds: result.retryAfterSeconds,
        random,
      });
    // An open circuit holds every attempt back until the probe; past the 24-hour window it fails.
    if (next !== null && probeNotBefore !== null && next < probeNotBefore) {
      next = probeNotBefore > delivery.createdAt + RETRY_WINDOW_MS ? null : probeNotBefore;
    }
    return [
      delivery.id,
      answer === "succeeded"
        ? "succeeded"
        : deleted.has(delivery.endpointId)
        ? "canceled"
        : next === null
        ? "failed"
        : "pending",
      attempts,
      next,
      result.signature,
      next === null ? now : null,
    ];
  });
  await tx.execute({
    sql: `UPDATE webhook_deliveries SET status = v.column2, attempt_count = v.column3,
            next_attempt_at = v.column4, claimed_until = NULL, last_signature = v.column5,
            completed_at = v.column6
          FROM (VALUES ${values(6, updates.length)}) AS v WHERE webhook_deliveries.id = v.column1`,
    args: updates.flat(),
  });

  const moved = [...circuits].filter(([id]) => !stopped.has(id));
  if (moved.length > 0) {
    await tx.execute({
      sql: `UPDATE webhook_endpoints SET failing_since = v.column2
            FROM (VALUES ${values(2, moved.length)}) AS v WHERE webhook_endpoints.id = v.column1`,
      args: moved.flatMap(([id, circuit]) => [id, circuit.failingSince]),
    });
  }
  const waiting = `endpoint_id = v.column1 AND status = 'pending'
              AND (claimed_until IS NULL OR claimed_until < ?)`;
  const probing = moved.filter(([, circuit]) => circuit.probeNotBefore !== null);
  if (probing.length > 0) {
    await tx.execute({
      sql: `UPDATE webhook_deliveries
            SET status = CASE WHEN v.column2 > created_at + ? THEN 'failed' ELSE status END,
              completed_at = CASE WHEN v.column2 > created_at + ? THEN ? ELSE completed_at END,
              next_attempt_at = CASE WHEN v.column2 > created_at + ? THEN NULL
                ELSE max(next_attempt_at, v.column2) END
            FROM (VALUES ${values(2, probing.length)}) AS v
            WHERE ${waiting} AND next_attempt_at < v.column2`,
      args: [
        RETRY_WINDOW_MS,
        RETRY_WINDOW_MS,
        now,
        RETRY_WINDOW_MS,
        ...probing.flatMap(([id, circuit]) => [id, circuit.probeNotBefore]),
        now,
      ],
    });
  }
  if (disabled.length > 0) {
    await tx.execute({
      sql: `UPDATE webhook_endpoints SET disabled_at = ?, disabled_reason = v.column2,
              failing_since = v.column3
            FROM (VALUES ${
        values(3, disabled.length)
      }) AS v WHERE webhook_endpoints.id = v.column1`,
      args: [now, ...disabled.flatMap((d) => [d.endpointId, d.reason, d.failingSince])],
    });
    await tx.execute({
      sql:
        `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, completed_at = ?
            FROM (VALUES ${values(1, disabled.length)}) AS v WHERE ${waiting}`,
      args: [now, ...disabled.map((d) => d.endpointId), now],
    });
  }
  return { circuits, disabled };
}

/**
 * Enables an endpoint again and closes its circuit (deliveries that failed meanwhile stay failed;
 * they can be replayed). False when the endpoint is not in scope.
 */
export async function enableEndpoint(
  tx: WriteTx,
  scope: EndpointScope,
  id: string,
): Promise<boolean> {
  const result = await tx.execute({
    sql:
      `UPDATE webhook_endpoints SET disabled_at = NULL, disabled_reason = NULL, failing_since = NULL
          WHERE id = ? AND company_id = ? AND line_id IS ? AND deleted_at IS NULL`,
    args: [id, scope.companyId, scope.lineId],
  });
  return result.rowsAffected === 1;
}
