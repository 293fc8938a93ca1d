/**
 * The console's Webhooks page: endpoints per company and line (never their secrets), and an
 * endpoint's delivery log with each delivery's latest attempt: status code, latency and the start
 * of the response. Reads only; replays run as the CLI's webhooks:replay.
 */
import type { Client, InValue } from "@libsql/client";
import {
  allOf,
  orderAndPage,
  type Page,
  pageOf,
  type PageWindow,
  scopeCondition,
  type Sortable,
} from "./paging.ts";

export interface EndpointRow {
  readonly id: string;
  readonly companyId: string;
  readonly companyName: string;
  /** The line of a /v1 endpoint; null for a Surface A endpoint (the company's events). */
  readonly lineCode: string | null;
  readonly surface: "api" | "v1";
  readonly url: string;
  readonly description: string | null;
  readonly disabledAt: number | null;
  readonly disabledReason: string | null;
  readonly failingSince: number | null;
  readonly failedCount: number;
  readonly createdAt: number;
}

const ENDPOINT_SELECT = `SELECT w.id, w.company_id, c.name AS company_name, l.code AS line_code,
    w.surface, w.url, w.description, w.disabled_at, w.disabled_reason, w.failing_since,
    w.created_at,
    (SELECT count(*) FROM webhook_deliveries d WHERE d.endpoint_id = w.id AND d.status = 'failed')
      AS failed_count
  FROM webhook_endpoints w JOIN companies c ON c.id = w.company_id
    LEFT JOIN business_lines l ON l.id = w.line_id`;

function toEndpoint(row: Record<string, unknown>): EndpointRow {
  const number = (value: unknown) => value === null ? null : Number(value);
  return {
    id: String(row.id),
    companyId: String(row.company_id),
    companyName: String(row.company_name),
    lineCode: row.line_code === null ? null : String(row.line_code),
    surface: String(row.surface) as "api" | "v1",
    url: String(row.url),
    description: row.description === null ? null : String(row.description),
    disabledAt: number(row.disabled_at),
    disabledReason: row.disabled_reason === null ? null : String(row.disabled_reason),
    failingSince: number(row.failing_since),
    failedCount: Number(row.failed_count),
    createdAt: Number(row.created_at),
  };
}

/** The scope's endpoints that were not deleted, by company, line and age. */
export async function listEndpointsInScope(
  client: Client,
  companyIds: readonly string[] | null,
): Promise<EndpointRow[]> {
  const scope = scopeCondition("w.company_id", companyIds);
  const { rows } = await client.execute({
    sql: `${ENDPOINT_SELECT} WHERE w.deleted_at IS NULL AND ${scope.sql}
          ORDER BY c.name, c.id, l.code NULLS FIRST, w.created_at, w.rowid`,
    args: scope.args,
  });
  return rows.map(toEndpoint);
}

/** One endpoint of the scope (deleted ones too: their log stays readable), or null. */
export async function findEndpointInScope(
  client: Client,
  id: string,
  companyIds: readonly string[] | null,
): Promise<EndpointRow | null> {
  const scope = scopeCondition("w.company_id", companyIds);
  const { rows } = await client.execute({
    sql: `${ENDPOINT_SELECT} WHERE w.id = ? AND ${scope.sql}`,
    args: [id, ...scope.args],
  });
  return rows[0] ? toEndpoint(rows[0]) : null;
}

export const deliverySorts: Sortable = {
  created: "d.created_at",
  status: "d.status",
  attempts: "d.attempt_count",
};

export const DELIVERY_STATUSES = ["pending", "succeeded", "failed", "canceled"] as const;
export type DeliveryStatus = typeof DELIVERY_STATUSES[number];

export interface DeliveryRow {
  readonly id: string;
  readonly eventId: string;
  readonly eventType: string | null;
  readonly status: DeliveryStatus;
  readonly manual: boolean;
  readonly attemptCount: number;
  readonly nextAttemptAt: number | null;
  readonly createdAt: number;
  readonly completedAt: number | null;
  /** The latest attempt's answer; null before any attempt. */
  readonly lastStatusCode: number | null;
  readonly lastDurationMs: number | null;
  readonly lastResponseExcerpt: string | null;
  readonly lastError: string | null;
}

/** A page of an endpoint's deliveries, with their latest attempt. */
export async function listEndpointDeliveries(
  client: Client,
  filter: { endpointId: string; status?: DeliveryStatus },
  request: PageWindow,
): Promise<Page<DeliveryRow>> {
  const conditions: { sql: string; args: InValue[] }[] = [
    { sql: "d.endpoint_id = ?", args: [filter.endpointId] },
  ];
  if (filter.status) conditions.push({ sql: "d.status = ?", args: [filter.status] });
  const where = allOf(conditions);
  const order = orderAndPage(request, deliverySorts, "d.rowid");
  const { rows } = await client.execute({
    sql: `SELECT d.id, d.event_id, coalesce(e.type, CAST(e.event_type_id AS TEXT)) AS event_type,
            d.status, d.manual, d.attempt_count, d.next_attempt_at, d.created_at, d.completed_at,
            a.status_code, a.duration_ms, a.response_excerpt, a.error
          FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
            LEFT JOIN delivery_attempts a ON a.id =
              (SELECT max(x.id) FROM delivery_attempts x WHERE x.delivery_id = d.id)
          WHERE ${where.sql} ${order.sql}`,
    args: [...where.args, ...order.args],
  });
  const number = (value: unknown) => value === null ? null : Number(value);
  const text = (value: unknown) => value === null ? null : String(value);
  return pageOf(
    request,
    rows.map((row) => ({
      id: String(row.id),
      eventId: String(row.event_id),
      eventType: text(row.event_type),
      status: String(row.status) as DeliveryStatus,
      manual: Number(row.manual) === 1,
      attemptCount: Number(row.attempt_count),
      nextAttemptAt: number(row.next_attempt_at),
      createdAt: Number(row.created_at),
      completedAt: number(row.completed_at),
      lastStatusCode: number(row.status_code),
      lastDurationMs: number(row.duration_ms),
      lastResponseExcerpt: text(row.response_excerpt),
      lastError: text(row.error),
    })),
  );
}

/** The endpoint a delivery belongs to, or null. */
export async function findDeliveryEndpoint(
  client: Client,
  deliveryId: string,
): Promise<string | null> {
  const { rows } = await client.execute({
    sql: "SELECT endpoint_id FROM webhook_deliveries WHERE id = ?",
    args: [deliveryId],
  });
  return rows[0] ? String(rows[0].endpoint_id) : null;
}
