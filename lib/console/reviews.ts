/**
 * The console's Review queues: payouts held for sanctions (OFAC) review with the names that
 * matched, for the operator's companies. Reads only; decisions run as the CLI's sanctions:clear
 * and sanctions:reject.
 */
import type { Client, InValue } from "@libsql/client";
import type { NameMatch } from "../sanctions/rules.ts";
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
    sql: `SELECT r.id, c.name AS company_name, r.payout_id, r.matches, r.status, r.decided_by,
            r.decided_at, r.reason, r.created_at, p.amount_cents, p.status AS payout_status,
            trim(coalesce(p.first_name, '') || ' ' || coalesce(p.last_name, '')) AS payee_name,
            y.name AS v1_name
          FROM sanctions_reviews r JOIN payouts p ON p.id = r.payout_id
            JOIN companies c ON c.id = r.company_id LEFT JOIN payees y ON y.id = p.payee_id
          WHERE ${where.sql} ${order.sql}`,
    args: [...where.args, ...order.args],
  });
  const text = (value: unknown) => value === null ? null : String(value);
  return pageOf(
    window,
    rows.map((row) => ({
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
    })),
  );
}
