/** The event log as Surface B shows it: the events of one line, newest first, by cursor. */
import type { SqlExecutor } from "./ledger_store.ts";

export interface StoredEvent {
  readonly id: string;
  readonly type: string;
  readonly eventTypeId: number;
  readonly data: Record<string, unknown>;
  readonly createdAt: number;
}

const toEvent = (row: Record<string, unknown>): StoredEvent => ({
  id: String(row.id),
  type: String(row.type),
  eventTypeId: Number(row.event_type_id),
  data: JSON.parse(String(row.data)) as Record<string, unknown>,
  createdAt: Number(row.created_at),
});

/** One /v1 event of the line (events /v1 does not publish have no type and are not found). */
export async function findLineEvent(
  executor: SqlExecutor,
  scope: { companyId: string; lineId: string },
  id: string,
): Promise<StoredEvent | null> {
  const { rows } = await executor.execute({
    sql: `SELECT id, type, event_type_id, data, created_at FROM events
          WHERE id = ? AND company_id = ? AND line_id = ? AND type IS NOT NULL`,
    args: [id, scope.companyId, scope.lineId],
  });
  return rows[0] ? toEvent(rows[0]) : null;
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
    cursor = { createdAt: Number(rows[0].created_at), seq: Number(rows[0].seq) };
  }
  const { rows } = await executor.execute({
    sql: `SELECT id, type, event_type_id, data, created_at FROM events
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
  return { data: rows.slice(0, page.limit).map(toEvent), hasMore: rows.length > page.limit };
}
