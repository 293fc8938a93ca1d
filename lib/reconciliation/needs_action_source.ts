/**
 * Reconciliation exceptions as a source of the console's Needs action queue: the open ones of the
 * companies in scope, oldest first, each saying which side of the bank account it is on.
 */
import type { Client } from "@libsql/client";
import type { NeedsActionGroup, NeedsActionSource } from "../console/needs_action.ts";

async function readOpenExceptions(
  client: Client,
  companyIds: readonly string[] | null,
  itemsMax: number,
): Promise<NeedsActionGroup> {
  if (companyIds !== null && companyIds.length === 0) {
    return { kind: "recon_exceptions", count: 0, items: [] };
  }
  const scope = companyIds === null
    ? { sql: "1 = 1", args: [] as string[] }
    : { sql: `x.company_id IN (${companyIds.map(() => "?").join(", ")})`, args: [...companyIds] };
  const counted = await client.execute({
    sql: `SELECT count(*) AS n FROM recon_exceptions x WHERE x.status = 'open' AND ${scope.sql}`,
    args: scope.args,
  });
  const count = Number(counted.rows[0].n);
  if (count === 0 || itemsMax === 0) return { kind: "recon_exceptions", count, items: [] };
  const { rows } = await client.execute({
    sql: `SELECT x.id, x.side, x.kind, x.account_last_four, x.statement_date, x.amount_cents,
            x.reason, x.created_at, c.name AS company_name
          FROM recon_exceptions x JOIN companies c ON c.id = x.company_id
          WHERE x.status = 'open' AND ${scope.sql} ORDER BY x.created_at, x.id LIMIT ?`,
    args: [...scope.args, itemsMax],
  });
  return {
    kind: "recon_exceptions",
    count,
    items: rows.map((row) => ({
      companyName: String(row.company_name),
      path: "/console/reconciliation",
      subject: `account ••••${row.account_last_four} on ${row.statement_date} (${row.id})`,
      detail: `${row.reason}: resolve it`,
      amountCents: Number(row.amount_cents),
      since: Number(row.created_at),
    })),
  };
}

/** The queue's source of open reconciliation exceptions. */
export const reconNeedsActionSource: NeedsActionSource = {
  kind: "recon_exceptions",
  read: readOpenExceptions,
};
