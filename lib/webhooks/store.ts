/**
 * Webhook endpoints and their delivery rows. A /v1 endpoint belongs to one line; a Surface A
 * endpoint to the company. Secrets are stored sealed (they must stay usable for signing).
 */
import { columnsOf, json, type RowMapper, rowMapper } from "../../db/rows.ts";
import { webhookDeliveries, webhookEndpoints } from "../../db/schema.ts";
import { newId } from "../platform/keys.ts";
import type { SqlExecutor } from "../ledger/store.ts";
import type { WriteTx } from "../../db/writer.ts";

/** Surface A endpoints receive the company's events; /v1 endpoints those of one line. */
export type EndpointSurface = typeof webhookEndpoints.$inferSelect.surface;

export interface EndpointRecord {
  readonly id: string;
  readonly surface: EndpointSurface;
  readonly url: string;
  readonly events: string[];
  readonly description: string | null;
  readonly disabledAt: number | null;
  /** Why it was disabled (a 410, or the circuit breaker's five days of failures). */
  readonly disabledReason: string | null;
  /** Start of its unbroken run of failed attempts; null after any success. */
  readonly failingSince: number | null;
  /** Deliveries carry the ed25519 signature (`v1a,`) beside the HMAC ones. */
  readonly ed25519Signatures: boolean;
  readonly createdAt: number;
}

export interface EndpointScope {
  readonly companyId: string;
  /** The line of a /v1 endpoint; null for Surface A. */
  readonly lineId: string | null;
}

const endpoint = columnsOf(webhookEndpoints);
const toEndpoint: RowMapper<EndpointRecord> = rowMapper({
  id: endpoint.id,
  surface: endpoint.surface,
  url: endpoint.url,
  events: json<string[]>(endpoint.events, "array"),
  description: endpoint.description,
  disabledAt: endpoint.disabledAt,
  disabledReason: endpoint.disabledReason,
  failingSince: endpoint.failingSince,
  ed25519Signatures: endpoint.ed25519Signatures,
  createdAt: endpoint.createdAt,
});
const ENDPOINT_COLUMNS = toEndpoint.columns.join(", ");

const SCOPE = "company_id = ? AND line_id IS ? AND deleted_at IS NULL";
const scopeArgs = (scope: EndpointScope) => [scope.companyId, scope.lineId];

export async function createEndpoint(
  tx: WriteTx,
  scope: EndpointScope,
  endpoint: {
    surface: EndpointSurface;
    url: string;
    events: string[];
    description: string | null;
    sealedSecret: string;
    ed25519Signatures: boolean;
  },
  now: number,
): Promise<EndpointRecord> {
  const id = newId("we");
  await tx.execute({
    sql: `INSERT INTO webhook_endpoints (id, company_id, line_id, surface, url, events, description,
            secret_ciphertext, ed25519_signatures, created_at)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    args: [
      id,
      scope.companyId,
      scope.lineId,
      endpoint.surface,
      endpoint.url,
      JSON.stringify(endpoint.events),
      endpoint.description,
      endpoint.sealedSecret,
      endpoint.ed25519Signatures ? 1 : 0,
      now,
    ],
  });
  return (await findEndpoint(tx, scope, id))!;
}

export async function findEndpoint(
  executor: SqlExecutor,
  scope: EndpointScope,
  id: string,
): Promise<EndpointRecord | null> {
  const { rows } = await executor.execute({
    sql: `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = ? AND ${SCOPE}`,
    args: [id, ...scopeArgs(scope)],
  });
  return rows[0] ? toEndpoint(rows[0]) : null;
}

/** The endpoints of a scope, oldest first. */
export async function listEndpoints(
  executor: SqlExecutor,
  scope: EndpointScope,
): Promise<EndpointRecord[]> {
  const { rows } = await executor.execute({
    sql:
      `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE ${SCOPE} ORDER BY created_at, rowid`,
    args: scopeArgs(scope),
  });
  return rows.map(toEndpoint);
}

/**
 * Stops an endpoint for good; its past deliveries stay readable in the database, and those still
 * waiting are canceled (no dispatcher would ever take them). Their events can be replayed to
 * another endpoint.
 */
export async function deleteEndpoint(
  tx: WriteTx,
  scope: EndpointScope,
  id: string,
  now: number,
): Promise<boolean> {
  const result = await tx.execute({
    sql: `UPDATE webhook_endpoints SET deleted_at = ? WHERE id = ? AND ${SCOPE}`,
    args: [now, id, ...scopeArgs(scope)],
  });
  if (result.rowsAffected !== 1) return false;
  await tx.execute({
    sql:
      `UPDATE webhook_deliveries SET status = 'canceled', next_attempt_at = NULL, completed_at = ?
          WHERE endpoint_id = ? AND status = 'pending'`,
    args: [now, id],
  });
  return true;
}

/**
 * Replaces an endpoint's signing secret; the previous one keeps signing beside it until
 * `previousExpiresAt` (contract §8: 24 hours). Returns false when the endpoint is not in scope.
 */
export async function rotateEndpointSecret(
  tx: WriteTx,
  scope: EndpointScope,
  id: string,
  secrets: { sealedNew: string; previousExpiresAt: number },
): Promise<boolean> {
  const result = await tx.execute({
    sql:
      `UPDATE webhook_endpoints SET previous_secret_ciphertext = secret_ciphertext, previous_secret_expires_at = ?,
            secret_ciphertext = ? WHERE id = ? AND ${SCOPE}`,
    args: [secrets.previousExpiresAt, secrets.sealedNew, id, ...scopeArgs(scope)],
  });
  return result.rowsAffected === 1;
}

export interface DeliveryRecord {
  readonly id: string;
  readonly eventId: string;
  readonly status: DeliveryStatus;
  readonly manual: boolean;
  readonly attemptCount: number;
  readonly nextAttemptAt: number | null;
  readonly createdAt: number;
  readonly completedAt: number | null;
}

export type DeliveryStatus = typeof webhookDeliveries.$inferSelect.status;

const delivery = columnsOf(webhookDeliveries);
const toDelivery: RowMapper<DeliveryRecord> = rowMapper({
  id: delivery.id,
  eventId: delivery.eventId,
  status: delivery.status,
  manual: delivery.manual,
  attemptCount: delivery.attemptCount,
  nextAttemptAt: delivery.nextAttemptAt,
  createdAt: delivery.createdAt,
  completedAt: delivery.completedAt,
});

/** An endpoint's deliveries, newest first. */
export async function listDeliveries(
  executor: SqlExecutor,
  endpointId: string,
  limit: number,
): Promise<DeliveryRecord[]> {
  const { rows } = await executor.execute({
    sql: `SELECT ${toDelivery.columns.join(", ")} FROM webhook_deliveries
          WHERE endpoint_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?`,
    args: [endpointId, limit],
  });
  return rows.map(toDelivery);
}
