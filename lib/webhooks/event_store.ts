/** The event log: recorded with the change that caused it, read by Surface B by cursor. */
import type { InValue } from "@libsql/client";
import {
  columnsOf,
  integer,
  json,
  multiRowInserts,
  notNull,
  type RowMapper,
  rowMapper,
} from "../../db/rows.ts";
import { events, webhookEndpoints } from "../../db/schema.ts";
import { newId } from "../platform/keys.ts";
import { realTimeOf } from "../sandbox/clock_store.ts";
import { eventCatalogue, type EventKey } from "../payouts/states.ts";
import type { SqlExecutor } from "../ledger/store.ts";
import type { WriteTx } from "../../db/writer.ts";

export interface StoredEvent {
  readonly id: string;
  readonly type: string;
  readonly eventTypeId: number;
  readonly data: Record<string, unknown>;
  readonly createdAt: number;
  /** Its place among its payout's events, 1, 2, … in commit order; null without a payout. */
  readonly sequence: number | null;
}

/**
 * The `sequence` of the event row `alias`: how many events of its payout were committed up to it
 * (rowids grow in commit order and events are never deleted), so it needs no column of its own.
 */
export const eventSequenceSql = (alias: string): string =>
  `CASE WHEN ${alias}.payout_id IS NULL THEN NULL ELSE
     (SELECT COUNT(*) FROM events seq_e
       WHERE seq_e.payout_id = ${alias}.payout_id AND seq_e.rowid <= ${alias}.rowid) END`;

const event = columnsOf(events);
// Only events /v1 publishes are read here, and those have a type.
const toEvent: RowMapper<Omit<StoredEvent, "sequence">> = rowMapper({
  id: event.id,
  type: notNull(event.type),
  eventTypeId: event.eventTypeId,
  data: json<Record<string, unknown>>(event.data, "object"),
  createdAt: event.createdAt,
});
const EVENT_COLUMNS = `${toEvent.columns.join(", ")}, ${eventSequenceSql("events")} AS sequence`;
const withSequence = (row: Record<string, unknown>): StoredEvent => ({
  ...toEvent(row),
  sequence: row.sequence === null ? null : Number(row.sequence),
});

const toCursor = rowMapper({ createdAt: event.createdAt, seq: integer("events", "seq") });

const endpoint = columnsOf(webhookEndpoints);

const toEventScope = rowMapper({
  id: event.id,
  companyId: event.companyId,
  lineId: event.lineId,
  eventTypeId: event.eventTypeId,
});

/** One /v1 event of the line (events /v1 does not publish have no type and are not found). */
export async function findLineEvent(
  executor: SqlExecutor,
  scope: { companyId: string; lineId: string },
  id: string,
): Promise<StoredEvent | null> {
  const { rows } = await executor.execute({
    sql: `SELECT ${EVENT_COLUMNS} FROM events
          WHERE id = ? AND company_id = ? AND line_id = ? AND type IS NOT NULL`,
    args: [id, scope.companyId, scope.lineId],
  });
  return rows[0] ? withSequence(rows[0]) : null;
}

export async function listLineEvents(
  executor: SqlExecutor,
  scope: { companyId: string; lineId: string },
  page: { limit: number; startingAfter: string | null; type: string | null },
): Promise<{ data: StoredEvent[]; hasMore: boolean } | null> {
  let cursor: { createdAt: number; seq: number } | null = null;
  if (page.startingAfter !== null) {
    const { rows } = await executor.execute({
      sql:
        "SELECT created_at, rowid AS seq FROM events WHERE id = ? AND company_id = ? AND line_id = ?",
      args: [page.startingAfter, scope.companyId, scope.lineId],
    });
    if (!rows[0]) return null;
    cursor = toCursor(rows[0]);
  }
  const { rows } = await executor.execute({
    sql: `SELECT ${EVENT_COLUMNS} FROM events
          WHERE company_id = ? AND line_id = ? AND type IS NOT NULL ${
      page.type ? "AND type = ?" : ""
    }
            ${cursor ? "AND (created_at < ? OR (created_at = ? AND rowid < ?))" : ""}
          ORDER BY created_at DESC, rowid DESC LIMIT ?`,
    args: [
      scope.companyId,
      scope.lineId,
      ...(page.type ? [page.type] : []),
      ...(cursor ? [cursor.createdAt, cursor.createdAt, cursor.seq] : []),
      page.limit + 1,
    ],
  });
  return { data: rows.slice(0, page.limit).map(withSequence), hasMore: rows.length > page.limit };
}

export interface NewEvent {
  readonly companyId: string;
  readonly lineId: string;
  readonly key: EventKey;
  readonly disbursementId?: string | null;
  readonly payoutId?: string | null;
  readonly payeeId?: string | null;
  readonly reason: string;
  /** The snapshot webhooks carry: what was true when it happened. */
  readonly data: Record<string, unknown>;
}

/** An endpoint that may receive a company's events. */
export interface ReceivingEndpoint {
  readonly id: string;
  readonly surface: "api" | "v1";
  readonly lineId: string | null;
  /** The event names it takes; empty: all. */
  readonly events: string[];
}

/**
 * What queuing an event's deliveries reads: the company's active endpoints (its Surface A ones
 * and its line's /v1 ones) and the real time to date the deliveries. Read beforehand, it rides
 * in the same round trip as the reads of the change itself.
 */
export interface DeliveryContext {
  readonly endpoints: readonly ReceivingEndpoint[];
  readonly realNow: number;
}

const toEndpointOfLine = rowMapper({
  id: endpoint.id,
  surface: endpoint.surface,
  lineId: endpoint.lineId,
  events: json<string[]>(endpoint.events, "array"),
});

/** Read for every event: one text, built once. */
const RECEIVING_ENDPOINTS = `SELECT ${toEndpointOfLine.columns.join(", ")} FROM webhook_endpoints
  WHERE company_id = ? AND deleted_at IS NULL AND disabled_at IS NULL
    AND (surface = 'api' OR (surface = 'v1' AND line_id = ?))`;

/** The company's active Surface A endpoints and the line's active /v1 endpoints. */
export async function receivingEndpoints(
  tx: Pick<WriteTx, "execute">,
  companyId: string,
  lineId: string | null,
): Promise<ReceivingEndpoint[]> {
  const { rows } = await tx.execute({
    sql: RECEIVING_ENDPOINTS,
    args: [companyId, lineId],
  });
  return rows.map(toEndpointOfLine);
}

/** Reads the delivery context of an event of the company (and line) happening at domain `now`. */
export async function readDeliveryContext(
  tx: WriteTx,
  companyId: string,
  lineId: string | null,
  now: number,
): Promise<DeliveryContext> {
  const [endpoints, realNow] = await Promise.all([
    receivingEndpoints(tx, companyId, lineId),
    realTimeOf(tx, companyId, now),
  ]);
  return { endpoints, realNow };
}

/**
 * Appends an event to the log and, in the same unit, queues one delivery for every endpoint that
 * receives it: /v1 endpoints of its line for events /v1 publishes, Surface A endpoints of the
 * company for all. A crash can lose neither the event nor its deliveries. `now` is domain time
 * (the sandbox clock in test), the event's time; its deliveries are real HTTP calls, dated in
 * real time. `context`, when the caller read it with its own reads, is used instead of reading.
 */
export async function recordEvent(
  tx: WriteTx,
  event: NewEvent,
  now: number,
  context?: DeliveryContext,
): Promise<string> {
  const [id] = await recordEvents(tx, [{ event, context }], now);
  return id;
}

/**
 * Appends events to the log with their deliveries, as recordEvent does one, the writing
 * set-based: one statement for the events and one for their deliveries. Returns their ids.
 */
export async function recordEvents(
  tx: WriteTx,
  items: readonly { readonly event: NewEvent; readonly context?: DeliveryContext }[],
  now: number,
): Promise<string[]> {
  const ids = items.map(() => newId("evt"));
  // Nothing of the events is read back in the unit: they ride with the next round trip.
  for (
    const statement of multiRowInserts(
      "INSERT INTO events (id, company_id, line_id, type, event_type_id, disbursement_id, payout_id, payee_id, reason, data, created_at)",
      items.map(({ event }, i) => {
        const catalogued = eventCatalogue[event.key];
        return [
          ids[i],
          event.companyId,
          event.lineId,
          catalogued.type,
          catalogued.id,
          event.disbursementId ?? null,
          event.payoutId ?? null,
          event.payeeId ?? null,
          event.reason,
          JSON.stringify(event.data),
          now,
        ];
      }),
    )
  ) tx.defer(statement);
  const read = new Map<string, DeliveryContext>();
  const deliveries: InValue[][] = [];
  for (const [i, { event, context }] of items.entries()) {
    const scope = `${event.companyId} ${event.lineId}`;
    let known = context ?? read.get(scope);
    if (!known) {
      known = await readDeliveryContext(tx, event.companyId, event.lineId, now);
      read.set(scope, known);
    }
    deliveries.push(...deliveryRows(
      known.endpoints,
      { id: ids[i], lineId: event.lineId, eventTypeId: eventCatalogue[event.key].id },
      { manual: false, surfaces: "all" },
      known.realNow,
    ));
  }
  deferDeliveries(tx, deliveries);
  return ids;
}

/**
 * One delivery per active endpoint that receives the event: /v1 endpoints of its line (for the
 * events /v1 publishes) and, unless `surfaces` is "v1", Surface A endpoints of the company. A
 * manual delivery (a replay) is attempted once and never rescheduled. `realNow` is real time, as
 * every time of a delivery and its attempts is. Returns how many.
 */
export async function queueDeliveries(
  tx: WriteTx,
  event: { id: string; companyId: string; lineId: string | null; eventTypeId: number },
  options: { manual: boolean; surfaces: "all" | "v1" },
  realNow: number,
): Promise<number> {
  const endpoints = await receivingEndpoints(tx, event.companyId, event.lineId);
  const rows = deliveryRows(endpoints, event, options, realNow);
  deferDeliveries(tx, rows);
  return rows.length;
}

/** The delivery rows of the event to those of `endpoints` that receive it. */
function deliveryRows(
  endpoints: readonly ReceivingEndpoint[],
  event: { id: string; lineId: string | null; eventTypeId: number },
  options: { manual: boolean; surfaces: "all" | "v1" },
  realNow: number,
): InValue[][] {
  const catalogued = Object.values(eventCatalogue).find((e) => e.id === event.eventTypeId)!;
  const rows: InValue[][] = [];
  for (const endpoint of endpoints) {
    const receives = endpoint.surface === "api"
      ? options.surfaces === "all"
      : endpoint.lineId === event.lineId && event.lineId !== null && catalogued.type !== null;
    if (!receives) continue;
    const name = endpoint.surface === "v1" ? catalogued.type : catalogued.name;
    const filter = endpoint.events;
    if (filter.length > 0 && (name === null || !filter.includes(name))) continue;
    // Due at once (0).
    rows.push([newId("wd"), endpoint.id, event.id, "pending", options.manual ? 1 : 0, 0, realNow]);
  }
  return rows;
}

function deferDeliveries(tx: WriteTx, rows: readonly InValue[][]): void {
  for (
    const statement of multiRowInserts(
      "INSERT INTO webhook_deliveries (id, endpoint_id, event_id, status, manual, next_attempt_at, created_at)",
      rows,
    )
  ) tx.defer(statement);
}

/** Any event of the database by id, for an operator's replay. */
export async function findEventById(
  executor: SqlExecutor,
  id: string,
): Promise<{ id: string; companyId: string; lineId: string | null; eventTypeId: number } | null> {
  const { rows } = await executor.execute({
    sql: "SELECT id, company_id, line_id, event_type_id FROM events WHERE id = ?",
    args: [id],
  });
  return rows[0] ? toEventScope(rows[0]) : null;
}
