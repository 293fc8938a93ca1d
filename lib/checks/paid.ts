/**
 * A check the bank reports paid, for its issued amount: the check is `paid` and its payout
 * completes, in the caller's unit. The paid-items import calls this for each clean match; the
 * sandbox bank's paid-items file goes the same way.
 */
import type { WriteTx } from "../../db/writer.ts";
import { type PayoutRuntime, settleRailBatchEntry } from "../payouts/jobs.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import type { CheckRecord } from "./register.ts";

export interface PaidItem {
  /** The bank's paid date, YYYY-MM-DD. */
  readonly paidDate: string;
  readonly paidAmountCents: number;
}

export type PaidRefusal = "check_not_issued" | "check_amount_differs" | "entry_not_sent";

/** Completes the payout of an issued check paid for its amount; anything else is refused. */
export async function recordCheckPaid(
  tx: WriteTx,
  runtime: PayoutRuntime,
  check: CheckRecord,
  paid: PaidItem,
  now: number,
): Promise<Result<CheckRecord, PaidRefusal>> {
  if (check.status !== "issued") {
    return refuse(
      "check_not_issued",
      `check ${check.checkNumber} is ${check.status}; only an issued check is paid`,
      { details: { status: check.status } },
    );
  }
  if (paid.paidAmountCents !== check.amountCents) {
    return refuse(
      "check_amount_differs",
      `check ${check.checkNumber} was issued for ${check.amountCents} cents, paid ${paid.paidAmountCents}`,
    );
  }
  const settled = await settleRailBatchEntry(
    tx,
    runtime,
    check.reference,
    { kind: "completed" },
    now,
  );
  if (!settled.ok) {
    return refuse(
      "entry_not_sent",
      `check ${check.checkNumber}: ${settled.message} (its positive-pay file was not sent yet)`,
    );
  }
  await tx.execute({
    sql: `UPDATE checks SET status = 'paid', paid_date = ?, paid_amount_cents = ?, paid_at = ?
          WHERE id = ? AND status = 'issued'`,
    args: [paid.paidDate, paid.paidAmountCents, now, check.id],
  });
  return ok({
    ...check,
    status: "paid",
    paidDate: paid.paidDate,
    paidAmountCents: paid.paidAmountCents,
    paidAt: now,
  });
}
