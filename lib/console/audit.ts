/**
 * The console's audit log: one environment's rows, newest first, with the CLI's filters (operator,
 * action, object, time) and the operator's company scope, paged. Before and after are stored
 * masked (lib/audit/rules.ts), so what is shown holds no secret.
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

export const auditSorts: Sortable = { seq: "seq", action: "action" };

export interface AuditFilter {
  readonly companyIds: readonly string[] | null;
  /** An operator's e-mail or id. */
  readonly operator?: string;
  readonly action?: string;
  readonly objectId?: string;
  readonly since?: number;
  readonly until?: number;
}

export interface AuditLine {
  readonly seq: number;
  readonly id: string;
  readonly at: number;
  readonly operator: string | null;
  readonly origin: string;
  readonly action: string;
  readonly objectType: string;
  readonly objectId: string | null;
  readonly companyId: string | null;
  readonly before: string | null;
  readonly after: string | null;
}

/** A page of one database's audit rows matching the filter. */
export async function listAuditLines(
  client: Client,
  filter: AuditFilter,
  window: PageWindow,
): Promise<Page<AuditLine>> {
  const conditions: { sql: string; args: InValue[] }[] = [];
  if (filter.companyIds !== null) {
    conditions.push(scopeCondition("company_id", filter.companyIds));
  }
  if (filter.operator) {
    conditions.push({
      sql: "operator_id = ? OR operator_email = ?",
      args: [filter.operator, filter.operator.toLowerCase()],
    });
  }
  if (filter.action) conditions.push({ sql: "action = ?", args: [filter.action] });
  if (filter.objectId) conditions.push({ sql: "object_id = ?", args: [filter.objectId] });
  if (filter.since !== undefined) conditions.push({ sql: "at >= ?", args: [filter.since] });
  if (filter.until !== undefined) conditions.push({ sql: "at < ?", args: [filter.until] });
  const where = allOf(conditions);
  const order = orderAndPage(window, auditSorts, "seq");
  const { rows } = await client.execute({
    sql: `SELECT seq, id, at, operator_email, origin, action, object_type, object_id, company_id,
            before, after FROM audit_log WHERE ${where.sql} ${order.sql}`,
    args: [...where.args, ...order.args],
  });
  const text = (value: unknown) => value === null ? null : String(value);
  return pageOf(
    window,
    rows.map((row) => ({
      seq: Number(row.seq),
      id: String(row.id),
      at: Number(row.at),
      operator: text(row.operator_email),
      origin: String(row.origin),
      action: String(row.action),
      objectType: String(row.object_type),
      objectId: text(row.object_id),
      companyId: text(row.company_id),
      before: text(row.before),
      after: text(row.after),
    })),
  );
}
