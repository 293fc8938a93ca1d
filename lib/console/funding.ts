/** The console's Funding page: fundings of the operator's companies. Reads only. */
import type { Client, InValue } from "@libsql/client";
import type { FundingMethod, FundingStatus } from "../funding/store.ts";

export type { FundingStatus };
import {
  allOf,
  orderAndPage,
  type Page,
  pageOf,
  type PageWindow,
  scopeCondition,
  type Sortable,
} from "./paging.ts";

export const fundingSorts: Sortable = {
  created: "f.created_at",
  amount: "f.amount_cents",
  status: "f.status",
  company: "c.name",
};

export const FUNDING_STATUSES: readonly FundingStatus[] = ["Pending", "Completed", "Returned"];

export interface FundingRow {
  readonly id: string;
  readonly fundingUuid: string | null;
  readonly companyId: string;
  readonly companyName: string;
  readonly lineCode: string;
  readonly paymentMethod: FundingMethod;
  readonly amountCents: number;
  readonly status: FundingStatus;
  readonly largeDisbursement: boolean;
  readonly expectedAvailableAt: number | null;
  readonly completedAt: number | null;
  readonly createdAt: number;
}

/** A page of fundings within the scope, of one status and company when given. */
export async function listConsoleFundings(
  client: Client,
  filter: { companyIds: readonly string[] | null; companyId?: string; status?: FundingStatus },
  request: PageWindow,
): Promise<Page<FundingRow>> {
  const conditions: { sql: string; args: InValue[] }[] = [
    scopeCondition("f.company_id", filter.companyIds),
  ];
  if (filter.companyId) conditions.push({ sql: "f.company_id = ?", args: [filter.companyId] });
  if (filter.status) conditions.push({ sql: "f.status = ?", args: [filter.status] });
  const where = allOf(conditions);
  const order = orderAndPage(request, fundingSorts, "f.rowid");
  const { rows } = await client.execute({
    sql: `SELECT f.id, f.funding_uuid, f.company_id, c.name AS company_name, l.code AS line_code,
            f.payment_method, f.amount_cents, f.status, f.large_disbursement,
            f.expected_available_at, f.completed_at, f.created_at
          FROM fundings f JOIN companies c ON c.id = f.company_id
            JOIN business_lines l ON l.id = f.line_id
          WHERE ${where.sql} ${order.sql}`,
    args: [...where.args, ...order.args],
  });
  return pageOf(
    request,
    rows.map((row) => ({
      id: String(row.id),
      fundingUuid: row.funding_uuid === null ? null : String(row.funding_uuid),
      companyId: String(row.company_id),
      companyName: String(row.company_name),
      lineCode: String(row.line_code),
      paymentMethod: String(row.payment_method) as FundingMethod,
      amountCents: Number(row.amount_cents),
      status: String(row.status) as FundingStatus,
      largeDisbursement: Number(row.large_disbursement) === 1,
      expectedAvailableAt: row.expected_available_at === null
        ? null
        : Number(row.expected_available_at),
      completedAt: row.completed_at === null ? null : Number(row.completed_at),
      createdAt: Number(row.created_at),
    })),
  );
}
