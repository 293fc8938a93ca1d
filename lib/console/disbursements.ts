/**
 * The console's Disbursements page: disbursements of the operator's companies with their payees'
 * derived status, and one disbursement with each payee's status. Reads only.
 */
import type { Client, InValue } from "@libsql/client";
import { disbursementStatus } from "../payouts/disbursement_status.ts";
import type { PayoutStatus } from "../payouts/states.ts";
import {
  allOf,
  orderAndPage,
  type Page,
  pageOf,
  type PageWindow,
  scopeCondition,
  type Sortable,
} from "./paging.ts";

export const disbursementSorts: Sortable = {
  created: "d.created_at",
  amount: "(SELECT sum(p.amount_cents) FROM payouts p WHERE p.disbursement_id = d.id)",
  payees: "(SELECT count(*) FROM payouts p WHERE p.disbursement_id = d.id)",
  company: "(SELECT c.name FROM companies c WHERE c.id = d.company_id)",
};

export interface DisbursementFilter {
  readonly companyIds: readonly string[] | null;
  readonly companyId?: string;
  readonly lineId?: string;
  /** A disbursement id, its uuid or a claim id, exactly. */
  readonly search?: string;
}

export interface DisbursementRow {
  readonly id: string;
  readonly kind: "disbursement" | "simple_payment" | "v1";
  readonly externalUuid: string;
  readonly claimId: string | null;
  readonly companyId: string;
  readonly companyName: string;
  readonly lineCode: string;
  readonly payeeCount: number;
  readonly totalCents: number;
  readonly status: PayoutStatus;
  readonly largeDisbursement: boolean;
  readonly createdAt: number;
}

const statusesOf = (raw: unknown): PayoutStatus[] => String(raw).split(",") as PayoutStatus[];

function toRow(row: Record<string, unknown>): DisbursementRow {
  return {
    id: String(row.id),
    kind: String(row.kind) as DisbursementRow["kind"],
    externalUuid: String(row.external_uuid),
    claimId: row.claim_id === null ? null : String(row.claim_id),
    companyId: String(row.company_id),
    companyName: String(row.company_name),
    lineCode: String(row.line_code),
    payeeCount: Number(row.payee_count),
    totalCents: Number(row.total_cents),
    status: disbursementStatus(statusesOf(row.statuses)),
    largeDisbursement: Number(row.large_disbursement) === 1,
    createdAt: Number(row.created_at),
  };
}

const SELECT =
  `SELECT d.id, d.kind, d.external_uuid, d.claim_id, d.company_id, d.large_disbursement,
         d.created_at, c.name AS company_name, l.code AS line_code,
         (SELECT count(*) FROM payouts p WHERE p.disbursement_id = d.id) AS payee_count,
         (SELECT coalesce(sum(p.amount_cents), 0) FROM payouts p WHERE p.disbursement_id = d.id)
           AS total_cents,
         (SELECT group_concat(p.status) FROM payouts p WHERE p.disbursement_id = d.id) AS statuses
       FROM disbursements d JOIN companies c ON c.id = d.company_id
       JOIN business_lines l ON l.id = d.line_id`;

/** A page of disbursements within the scope and filter. */
export async function listDisbursements(
  client: Client,
  filter: DisbursementFilter,
  request: PageWindow,
): Promise<Page<DisbursementRow>> {
  const conditions: { sql: string; args: InValue[] }[] = [
    scopeCondition("d.company_id", filter.companyIds),
  ];
  if (filter.companyId) conditions.push({ sql: "d.company_id = ?", args: [filter.companyId] });
  if (filter.lineId) conditions.push({ sql: "d.line_id = ?", args: [filter.lineId] });
  if (filter.search) {
    conditions.push({
      sql: "d.id = ? OR d.external_uuid = ? OR d.claim_id = ?",
      args: [filter.search, filter.search, filter.search],
    });
  }
  const where = allOf(conditions);
  const order = orderAndPage(request, disbursementSorts, "d.rowid");
  // The page's ids first, then their totals: a total is computed for the rows shown, not for
  // every disbursement the order passes over.
  const { rows: ids } = await client.execute({
    sql: `SELECT d.id FROM disbursements d WHERE ${where.sql} ${order.sql}`,
    args: [...where.args, ...order.args],
  });
  if (ids.length === 0) return pageOf(request, []);
  const { rows } = await client.execute({
    sql: `${SELECT} WHERE d.id IN (${ids.map(() => "?").join(", ")})`,
    args: ids.map((row) => String(row.id)),
  });
  const byId = new Map(rows.map((row) => [String(row.id), toRow(row)]));
  return pageOf(request, ids.map((row) => byId.get(String(row.id))!));
}

export interface DisbursementPayee {
  readonly payoutId: string;
  readonly payeeUuid: string;
  readonly name: string;
  readonly email: string | null;
  readonly amountCents: number;
  readonly status: PayoutStatus;
  readonly paymentMethodId: number | null;
  readonly methodLastFour: string | null;
  readonly failureReason: string | null;
  readonly updatedAt: number;
}

/** One disbursement of the scope with its payees; null when absent or outside the scope. */
export async function findDisbursement(
  client: Client,
  id: string,
  companyIds: readonly string[] | null,
): Promise<{ disbursement: DisbursementRow; payees: DisbursementPayee[] } | null> {
  const scope = scopeCondition("d.company_id", companyIds);
  const { rows } = await client.execute({
    sql: `${SELECT} WHERE d.id = ? AND ${scope.sql}`,
    args: [id, ...scope.args],
  });
  if (!rows[0]) return null;
  const payees = await client.execute({
    sql: `SELECT p.id, p.payee_uuid, p.first_name, p.last_name, p.email, p.amount_cents, p.status,
            p.payment_method_id, p.method_last_four, p.failure_reason, p.updated_at,
            y.name AS v1_name, y.email AS v1_email
          FROM payouts p LEFT JOIN payees y ON y.id = p.payee_id
          WHERE p.disbursement_id = ? ORDER BY p.rowid`,
    args: [id],
  });
  return {
    disbursement: toRow(rows[0]),
    payees: payees.rows.map((row) => ({
      payoutId: String(row.id),
      payeeUuid: String(row.payee_uuid),
      name: [row.first_name, row.last_name].filter((part) => part !== null).join(" ") ||
        String(row.v1_name ?? row.payee_uuid),
      email: row.email === null
        ? (row.v1_email === null ? null : String(row.v1_email))
        : String(row.email),
      amountCents: Number(row.amount_cents),
      status: String(row.status) as PayoutStatus,
      paymentMethodId: row.payment_method_id === null ? null : Number(row.payment_method_id),
      methodLastFour: row.method_last_four === null ? null : String(row.method_last_four),
      failureReason: row.failure_reason === null ? null : String(row.failure_reason),
      updatedAt: Number(row.updated_at),
    })),
  };
}

/**
 * The disbursements of the scope the company knows by this id of its own (a claim id, a
 * disbursement_uuid or simple_payment_uuid), at most `limit`; the console's address takes it.
 */
export async function disbursementIdsByOwnId(
  client: Client,
  ownId: string,
  companyIds: readonly string[] | null,
  limit: number,
): Promise<string[]> {
  const scope = scopeCondition("d.company_id", companyIds);
  // The public uuid is unique per company and kind: that index answers it, company by company.
  const { rows } = await client.execute({
    sql: `SELECT d.id FROM disbursements d
          WHERE (d.claim_id = ? OR (d.company_id IN (SELECT id FROM companies)
            AND d.kind IN ('disbursement', 'simple_payment', 'v1') AND d.external_uuid = ?))
            AND ${scope.sql}
          ORDER BY d.created_at DESC, d.id LIMIT ?`,
    args: [ownId, ownId, ...scope.args, limit],
  });
  return rows.map((row) => String(row.id));
}
