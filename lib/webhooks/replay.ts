/**
 * Replays an operator asks for (issue 20): one delivery again, or every failed delivery of one
 * endpoint since a time. A replay is a new manual delivery of the same event to the same endpoint,
 * attempted once and never rescheduled (contract §8), so the failed rows stay as they were. Each
 * runs in the caller's write unit.
 */
import type { SqlReader, WriteTx } from "../../db/writer.ts";
import { newId } from "../platform/keys.ts";
import { ok, refuse, type Result } from "../platform/result.ts";

/** Deliveries one replay of an endpoint queues at most; the rest wait for the next request. */
export const REPLAYED_DELIVERIES_MAX = 1000;

export type ReplayRefusal = "delivery_not_found" | "endpoint_not_found" | "endpoint_not_active";

interface ReplayTarget {
  readonly id: string;
  readonly companyId: string;
  readonly deletedAt: number | null;
  readonly disabledAt: number | null;
}

async function endpointRow(tx: WriteTx, endpointId: string): Promise<ReplayTarget | null> {
  const { rows } = await tx.execute({
    sql: "SELECT id, company_id, deleted_at, disabled_at FROM webhook_endpoints WHERE id = ?",
    args: [endpointId],
  });
  if (!rows[0]) return null;
  return {
    id: String(rows[0].id),
    companyId: String(rows[0].company_id),
    deletedAt: rows[0].deleted_at === null ? null : Number(rows[0].deleted_at),
    disabledAt: rows[0].disabled_at === null ? null : Number(rows[0].disabled_at),
  };
}

/** A deleted endpoint receives nothing more; a disabled one is enabled first, on purpose. */
function activeEndpoint(endpoint: ReplayTarget): Result<ReplayTarget, "endpoint_not_active"> {
  if (endpoint.deletedAt !== null) {
    return refuse("endpoint_not_active", `webhook endpoint ${endpoint.id} was deleted`);
  }
  if (endpoint.disabledAt !== null) {
    return refuse(
      "endpoint_not_active",
      `webhook endpoint ${endpoint.id} is disabled: enable it before replaying to it`,
    );
  }
  return ok(endpoint);
}

async function queueReplay(
  tx: WriteTx,
  endpointId: string,
  eventId: string,
  realNow: number,
): Promise<string> {
  const id = newId("wd");
  // Due at once (0), as every new delivery.
  await tx.execute({
    sql:
      `INSERT INTO webhook_deliveries (id, endpoint_id, event_id, status, manual, next_attempt_at, created_at)
          VALUES (?, ?, ?, 'pending', 1, 0, ?)`,
    args: [id, endpointId, eventId, realNow],
  });
  return id;
}

/** Delivers one delivery's event again to its endpoint; returns the new delivery's id. */
export async function replayDelivery(
  tx: WriteTx,
  deliveryId: string,
  realNow: number,
): Promise<
  Result<{ replayed: string; endpointId: string; eventId: string }, ReplayRefusal>
> {
  const { rows } = await tx.execute({
    sql: "SELECT endpoint_id, event_id FROM webhook_deliveries WHERE id = ?",
    args: [deliveryId],
  });
  if (!rows[0]) {
    return tx.abort(
      refuse("delivery_not_found", `no webhook delivery ${deliveryId}`, { field: "delivery" }),
    );
  }
  const endpointId = String(rows[0].endpoint_id);
  const eventId = String(rows[0].event_id);
  const active = activeEndpoint((await endpointRow(tx, endpointId))!);
  if (!active.ok) return tx.abort(active);
  return ok({ replayed: await queueReplay(tx, endpointId, eventId, realNow), endpointId, eventId });
}

/**
 * Delivers again, once each, the events whose delivery to the endpoint failed at or after
 * `since` (real time) and that the endpoint has not received since nor is about to: an event
 * replayed with success, or with a replay still pending, is not sent a third time.
 */
export async function replayFailedDeliveries(
  tx: WriteTx,
  endpointId: string,
  since: number,
  realNow: number,
): Promise<Result<{ replayed: string[]; hasMore: boolean }, ReplayRefusal>> {
  const endpoint = await endpointRow(tx, endpointId);
  if (!endpoint) {
    return tx.abort(
      refuse("endpoint_not_found", `no webhook endpoint ${endpointId}`, { field: "endpoint" }),
    );
  }
  const active = activeEndpoint(endpoint);
  if (!active.ok) return tx.abort(active);
  const { rows } = await tx.execute({
    sql: `SELECT d.event_id FROM webhook_deliveries d
          WHERE d.endpoint_id = ? AND d.status = 'failed' AND d.created_at >= ?
            AND NOT EXISTS (SELECT 1 FROM webhook_deliveries o WHERE o.endpoint_id = d.endpoint_id
                              AND o.event_id = d.event_id AND o.status IN ('succeeded', 'pending'))
          GROUP BY d.event_id ORDER BY min(d.created_at), min(d.rowid) LIMIT ?`,
    args: [endpointId, since, REPLAYED_DELIVERIES_MAX + 1],
  });
  const replayed: string[] = [];
  for (const row of rows.slice(0, REPLAYED_DELIVERIES_MAX)) {
    replayed.push(await queueReplay(tx, endpointId, String(row.event_id), realNow));
  }
  return ok({ replayed, hasMore: rows.length > REPLAYED_DELIVERIES_MAX });
}

/** The company a delivery or an endpoint belongs to, for an operator's scope check. */
export async function replayCompany(
  executor: SqlReader,
  target: { deliveryId: string } | { endpointId: string },
): Promise<{ companyId: string } | null> {
  const { rows } = await executor.execute(
    "deliveryId" in target
      ? {
        sql: `SELECT e.company_id FROM webhook_deliveries d
                JOIN webhook_endpoints e ON e.id = d.endpoint_id WHERE d.id = ?`,
        args: [target.deliveryId],
      }
      : { sql: "SELECT company_id FROM webhook_endpoints WHERE id = ?", args: [target.endpointId] },
  );
  return rows[0] ? { companyId: String(rows[0].company_id) } : null;
}
