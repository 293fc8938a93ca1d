/** Fundings of a line. A received wire is credited to available at once. */
import { newId } from "../lib/keys.ts";
import { postTransaction } from "./ledger_store.ts";
import type { WriteTx } from "./writer.ts";

/** Records a wire that has arrived: a Completed funding and bank → available. */
export async function recordReceivedWire(
  tx: WriteTx,
  input: {
    companyId: string;
    lineId: string;
    amountCents: number;
    description: string;
    now: number;
  },
): Promise<string> {
  const fundingId = newId("fund");
  await tx.execute({
    sql: `INSERT INTO fundings (id, company_id, line_id, payment_method, amount_cents, description,
            large_disbursement, status, request_fingerprint, completed_at, created_at)
          VALUES (?, ?, ?, 'WireTransfer', ?, ?, 0, 'Completed', '', ?, ?)`,
    args: [
      fundingId,
      input.companyId,
      input.lineId,
      input.amountCents,
      input.description,
      input.now,
      input.now,
    ],
  });
  const posted = await postTransaction(tx, {
    companyId: input.companyId,
    lineId: input.lineId,
    kind: "funding.wire_received",
    fundingId,
    postedAt: input.now,
    transfers: [{ from: "bank", to: "available", amountCents: input.amountCents }],
  });
  // Crediting available from the external bank account cannot overdraw a never-negative account.
  if (!posted.ok) throw new Error(`a received wire was refused by the ledger: ${posted.message}`);
  return fundingId;
}
