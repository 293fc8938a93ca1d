/**
 * Webhook endpoints and their delivery rows. A /v1 endpoint belongs to one line; a Surface A
 * endpoint to the company. Secrets are stored sealed (they must stay usable for signing).
 */
import { newId } from "../platform/keys.ts";
import type { SqlExecutor } from "../ledger/store.ts";
import type { WriteTx } from "../../db/writer.ts";

export interface EndpointRecord {
  readonly id: string;
  readonly surface: "api" | "v1";
  readonly url: string;
  readonly events: string[];
  readonly description: string | null;
  readonly disabledAt: number | null;
  readonly createdAt: number;
}

export interface EndpointScope {
  readonly companyId: string;
  /** The line of a /v1 endpoint; null for Surface A. */
  readonly lineId: string | null;
}

const toEndpoint = (row: Record<string, unknown>): EndpointRecord => ({
  id: String(row.id),
  surface: row.surface as "api" | "v1",
  url: String(row.url),
  events: JSON.parse(String(row.events)) as string[],
  description: row.description === null ? null : String(row.description),
  disabledAt: row.disabled_at === null ? null : Number(row.disabled_at),
  createdAt: Number(row.created_at),
});

const SCOPE = "company_id = ? AND line_id IS ? AND deleted_at IS NULL";
const scopeArgs = (scope: EndpointScope) => [scope.companyId, scope.lineId];

export async function createEndpoint(
  tx: WriteTx,
  scope: EndpointScope,
  endpoint: {
    surface: "api" | "v1";
    url: string;
    events: string[];
    description: string | null;
    sealedSecret: string;
  },
  now: number,
): Promise<EndpointRecord> {
  const id = newId("we");
  await tx.execute({
    sql:
      `INSERT INTO webhook_endpoints (id, company_id, line_id, surface, url, events, description, secret_ciphertext, created_at)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    args: [
      id,
      scope.companyId,
      scope.lineId,
      endpoint.surface,
      endpoint.url,
      JSON.stringify(endpoint.events),
      endpoint.description,
      endpoint.sealedSecret,
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
    sql:
      `SELECT id, surface, url, events, description, disabled_at, created_at FROM webhook_endpoints
          WHERE id = ? AND ${SCOPE}`,
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
      `SELECT id, surface, url, events, description, disabled_at, created_at FROM webhook_endpoints
          WHERE ${SCOPE} ORDER BY created_at, rowid`,
    args: scopeArgs(scope),
  });
  return rows.map(toEndpoint);
}

/** Stops an endpoint for good; its past deliveries stay readable in the database. */
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
  return result.rowsAffected === 1;
}

/**
 * Replaces an endpoint's signing secret; the previous one keeps signing beside it until
 * `previousExpiresAt` (DESIGN 14: 24 hours). Returns false when the endpoint is not in scope.
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
  readonly status: string;
  readonly manual: boolean;
  readonly attemptCount: number;
  readonly nextAttemptAt: number | null;
  readonly createdAt: number;
  readonly completedAt: number | null;
}

/** An endpoint's deliveries, newest first. */
export async function listDeliveries(
  executor: SqlExecutor,
  endpointId: string,
  limit: number,
): Promise<DeliveryRecord[]> {
  const { rows } = await executor.execute({
    sql:
      `SELECT id, event_id, status, manual, attempt_count, next_attempt_at, created_at, completed_at
          FROM webhook_deliveries WHERE endpoint_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?`,
    args: [endpointId, limit],
  });
  return rows.map((row) => ({
    id: String(row.id),
    eventId: String(row.event_id),
    status: String(row.status),
    manual: Number(row.manual) === 1,
    attemptCount: Number(row.attempt_count),
    nextAttemptAt: row.next_attempt_at === null ? null : Number(row.next_attempt_at),
    createdAt: Number(row.created_at),
    completedAt: row.completed_at === null ? null : Number(row.completed_at),
  }));
}
