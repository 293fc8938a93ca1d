/**
 * The console's Approvals page: actions waiting for a second admin (and decided ones), within the
 * operator's companies; an approval about no company (a new admin) shows to an operator of every
 * company only. Reads the live database, where approvals are kept; the payload stays inside.
 */
import type { Client, InValue } from "@libsql/client";
import type { ApprovalStatus } from "../operators/rules.ts";
import {
  allOf,
  orderAndPage,
  type Page,
  pageOf,
  type PageWindow,
  scopeCondition,
  type Sortable,
} from "./paging.ts";

export const APPROVAL_STATES: readonly ApprovalStatus[] = [
  "pending_approval",
  "approved",
  "rejected",
  "expired",
];

export const approvalSorts: Sortable = {
  requested: "a.requested_at",
  expires: "a.expires_at",
  kind: "a.kind",
};

export interface ApprovalRow {
  readonly id: string;
  readonly kind: string;
  readonly environment: "test" | "live";
  readonly companyName: string | null;
  readonly objectId: string;
  readonly summary: string;
  /** A pending approval past its expiry reads expired, as the CLI shows it. */
  readonly status: ApprovalStatus;
  readonly requestedById: string;
  readonly requestedBy: string;
  readonly requestedAt: number;
  readonly expiresAt: number;
  readonly decidedBy: string | null;
  readonly decidedAt: number | null;
  readonly reason: string | null;
}

/** A page of approvals of one status (null: all) within the scope, at `now`. */
export async function listConsoleApprovals(
  live: Client,
  filter: { companyIds: readonly string[] | null; status: ApprovalStatus | null },
  window: PageWindow,
  now: number,
): Promise<Page<ApprovalRow>> {
  const conditions: { sql: string; args: InValue[] }[] = [
    scopeCondition("a.company_id", filter.companyIds),
  ];
  if (filter.status === "pending_approval") {
    conditions.push({ sql: "a.status = 'pending_approval' AND a.expires_at > ?", args: [now] });
  } else if (filter.status === "expired") {
    conditions.push({
      sql: "a.status = 'expired' OR (a.status = 'pending_approval' AND a.expires_at <= ?)",
      args: [now],
    });
  } else if (filter.status !== null) {
    conditions.push({ sql: "a.status = ?", args: [filter.status] });
  }
  const where = allOf(conditions);
  const order = orderAndPage(window, approvalSorts, "a.rowid");
  const { rows } = await live.execute({
    sql: `${SELECT} WHERE ${where.sql} ${order.sql}`,
    args: [...where.args, ...order.args],
  });
  return pageOf(window, rows.map((row) => toApproval(row, now)));
}

/** One approval within the scope, whatever its status, or null. */
export async function findConsoleApproval(
  live: Client,
  id: string,
  companyIds: readonly string[] | null,
  now: number,
): Promise<ApprovalRow | null> {
  const scope = scopeCondition("a.company_id", companyIds);
  const { rows } = await live.execute({
    sql: `${SELECT} WHERE a.id = ? AND ${scope.sql}`,
    args: [id, ...scope.args],
  });
  return rows[0] ? toApproval(rows[0], now) : null;
}

const SELECT = `SELECT a.id, a.kind, a.environment, c.name AS company_name, a.object_id,
    a.summary, a.status, a.requested_by, r.email AS requested_email, a.requested_at,
    a.expires_at, d.email AS decided_email, a.decided_at, a.outcome
  FROM approvals a JOIN operators r ON r.id = a.requested_by
    LEFT JOIN operators d ON d.id = a.decided_by
    LEFT JOIN companies c ON c.id = a.company_id`;

const text = (value: unknown) => value === null ? null : String(value);

/** A rejection's reason, from its stored outcome ({"reason": …}). */
function rejectionReason(outcome: unknown): string | null {
  if (outcome === null) return null;
  const parsed = JSON.parse(String(outcome)) as { reason?: unknown };
  return typeof parsed.reason === "string" ? parsed.reason : null;
}

function toApproval(row: Record<string, unknown>, now: number): ApprovalRow {
  const expiresAt = Number(row.expires_at);
  const stored = String(row.status) as ApprovalStatus;
  return {
    id: String(row.id),
    kind: String(row.kind),
    environment: String(row.environment) as "test" | "live",
    companyName: text(row.company_name),
    objectId: String(row.object_id),
    summary: String(row.summary),
    status: stored === "pending_approval" && now >= expiresAt ? "expired" : stored,
    requestedById: String(row.requested_by),
    requestedBy: String(row.requested_email),
    requestedAt: Number(row.requested_at),
    expiresAt,
    decidedBy: text(row.decided_email),
    decidedAt: row.decided_at === null ? null : Number(row.decided_at),
    // An approved action's result stays out of the page; a rejection's reason is shown.
    reason: stored === "rejected" ? rejectionReason(row.outcome) : null,
  };
}
