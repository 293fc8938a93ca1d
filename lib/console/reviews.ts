/**
 * The console's Review queues: payouts held for sanctions (OFAC) review with the names that
 * matched, and the check register's paid-item exceptions, for the operator's companies. Reads
 * only; decisions run as the CLI's sanctions:clear, sanctions:reject and
 * checks:resolve-exception.
 */
import type { Client, InValue } from "@libsql/client";
import type { NameMatch } from "../sanctions/rules.ts";
import {
  type CheckExceptionSummary,
  findCheckException,
  listCheckExceptions,
} from "../checks/views.ts";

export type { CheckExceptionSummary };
import {
  allOf,
  orderAndPage,
  type Page,
  pageOf,
  type PageWindow,
  scopeCondition,
  type Sortable,
} from "./paging.ts";

export const REVIEW_STATES = ["open", "cleared", "rejected", "canceled"] as const;
export type ReviewState = typeof REVIEW_STATES[number];

export const reviewSorts: Sortable = {
  created: "r.created_at",
  amount: "p.amount_cents",
  company: "c.name",
};

export interface ReviewRow {
  readonly id: string;
  readonly companyName: string;
  readonly payoutId: string;
  readonly payeeName: string;
  readonly amountCents: number;
  readonly payoutStatus: string;
  readonly matches: NameMatch[];
  readonly status: ReviewState;
  readonly decidedBy: string | null;
  readonly decidedAt: number | null;
  readonly reason: string | null;
  readonly createdAt: number;
}

/** A page of the scope's sanctions reviews of one status (or all). */
export async function listSanctionsReviews(
  client: Client,
  filter: { companyIds: readonly string[] | null; status: ReviewState | null },
  window: PageWindow,
): Promise<Page<ReviewRow>> {
  const conditions: { sql: string; args: InValue[] }[] = [
    scopeCondition("r.company_id", filter.companyIds),
  ];
  if (filter.status) conditions.push({ sql: "r.status = ?", args: [filter.status] });
  const where = allOf(conditions);
  const order = orderAndPage(window, reviewSorts, "r.rowid");
  const { rows } = await client.execute({
    sql: `${REVIEW_SELECT} WHERE ${where.sql} ${order.sql}`,
    args: [...where.args, ...order.args],
  });
  return pageOf(window, rows.map(toReview));
}

/** One sanctions review within the scope, or null. */
export async function findSanctionsReview(
  client: Client,
  id: string,
  companyIds: readonly string[] | null,
): Promise<ReviewRow | null> {
  const scope = scopeCondition("r.company_id", companyIds);
  const { rows } = await client.execute({
    sql: `${REVIEW_SELECT} WHERE r.id = ? AND ${scope.sql}`,
    args: [id, ...scope.args],
  });
  return rows[0] ? toReview(rows[0]) : null;
}

const REVIEW_SELECT = `SELECT r.id, c.name AS company_name, r.payout_id, r.matches, r.status,
    coalesce(o.email, r.decided_by) AS decided_by, r.decided_at, r.reason, r.created_at, p.amount_cents,
    p.status AS payout_status,
    trim(coalesce(p.first_name, '') || ' ' || coalesce(p.last_name, '')) AS payee_name,
    y.name AS v1_name
  FROM sanctions_reviews r JOIN payouts p ON p.id = r.payout_id
    JOIN companies c ON c.id = r.company_id LEFT JOIN payees y ON y.id = p.payee_id
    LEFT JOIN operators o ON o.id = r.decided_by`;

const text = (value: unknown) => value === null ? null : String(value);

function toReview(row: Record<string, unknown>): ReviewRow {
  return {
    id: String(row.id),
    companyName: String(row.company_name),
    payoutId: String(row.payout_id),
    payeeName: String(row.payee_name) || String(row.v1_name ?? ""),
    amountCents: Number(row.amount_cents),
    payoutStatus: String(row.payout_status),
    matches: JSON.parse(String(row.matches)) as NameMatch[],
    status: String(row.status) as ReviewState,
    decidedBy: text(row.decided_by),
    decidedAt: row.decided_at === null ? null : Number(row.decided_at),
    reason: text(row.reason),
    createdAt: Number(row.created_at),
  };
}

/** Check exceptions one console page shows; the register's listing is oldest first. */
export const CHECK_EXCEPTIONS_LISTED_MAX = 100;

/**
 * The scope's paid-item exceptions of the check register (issue 19), oldest first, of one status
 * (null: all), at most CHECK_EXCEPTIONS_LISTED_MAX.
 */
export async function listCheckExceptionsInScope(
  client: Client,
  filter: { companyIds: readonly string[] | null; status: "open" | "resolved" | null },
): Promise<{ data: CheckExceptionSummary[]; hasMore: boolean }> {
  const found = await listCheckExceptions(client, filter, CHECK_EXCEPTIONS_LISTED_MAX + 1);
  return {
    data: found.slice(0, CHECK_EXCEPTIONS_LISTED_MAX),
    hasMore: found.length > CHECK_EXCEPTIONS_LISTED_MAX,
  };
}

/** One check exception within the scope, or null. */
export async function findCheckExceptionInScope(
  client: Client,
  id: string,
  companyIds: readonly string[] | null,
): Promise<CheckExceptionSummary | null> {
  const found = await findCheckException(client, id);
  return found && (companyIds === null || companyIds.includes(found.companyId)) ? found : null;
}
