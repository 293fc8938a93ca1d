/**
 * What of a company's obligations needs an operator, as a source of the console's Needs action
 * queue: payouts whose pay_by deadline passed unchosen and whose fallback check could not go out
 * (no mailing address on file, or its hold did not fit). The payee may still choose meanwhile.
 */
import type { Client } from "@libsql/client";
import type { NeedsActionGroup, NeedsActionSource } from "../console/needs_action.ts";

const KIND = "deadlines_not_fallen_back";

async function readNotFallenBack(
  client: Client,
  companyIds: readonly string[] | null,
  itemsMax: number,
): Promise<NeedsActionGroup> {
  if (companyIds !== null && companyIds.length === 0) return { kind: KIND, count: 0, items: [] };
  const scope = companyIds === null
    ? { sql: "1 = 1", args: [] as string[] }
    : { sql: `p.company_id IN (${companyIds.map(() => "?").join(", ")})`, args: [...companyIds] };
  // Offered payouts are few beside the rest: the status index bounds the scan.
  const where = `p.status = 'modality_offered' AND p.offer_expired_at IS NOT NULL
    AND p.fell_back_at IS NULL AND c.offer_expiry_action = 'fallback' AND ${scope.sql}`;
  const counted = await client.execute({
    sql: `SELECT count(*) AS n FROM payouts p JOIN companies c ON c.id = p.company_id
          WHERE ${where}`,
    args: scope.args,
  });
  const count = Number(counted.rows[0].n);
  if (count === 0 || itemsMax === 0) return { kind: KIND, count, items: [] };
  const { rows } = await client.execute({
    sql: `SELECT p.id, p.amount_cents, p.first_name, p.last_name, p.email, p.payee_uuid, p.pay_by,
            p.offer_expired_at, c.name AS company_name
          FROM payouts p JOIN companies c ON c.id = p.company_id
          WHERE ${where} ORDER BY p.offer_expired_at, p.id LIMIT ?`,
    args: [...scope.args, itemsMax],
  });
  return {
    kind: KIND,
    count,
    items: rows.map((row) => ({
      companyName: String(row.company_name),
      path: `/console/payouts/${row.id}`,
      subject: [row.first_name, row.last_name].filter(Boolean).join(" ") ||
        String(row.email ?? row.payee_uuid),
      detail: `pay_by ${
        row.pay_by ?? "deadline"
      } passed unchosen and no fallback check went out (no mailing address on file, or its hold did not fit): add the address or funds, or cancel`,
      amountCents: Number(row.amount_cents),
      since: Number(row.offer_expired_at),
    })),
  };
}

/** The queue's source of deadlines that could not fall back. */
export const deadlineNoFallbackSource: NeedsActionSource = { kind: KIND, read: readNotFallenBack };
