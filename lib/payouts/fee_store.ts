/** A company's fee schedule, read inside the write unit that uses it. */
import type { FeeSchedule } from "./fees.ts";
import type { MethodFees } from "./transition.ts";
import type { WriteTx } from "../../db/writer.ts";

export async function readFeeSchedule(tx: WriteTx, companyId: string): Promise<FeeSchedule> {
  const { rows } = await tx.execute({
    sql: `SELECT payment_method_id, payor_fee_cents, payee_fee_cents, service_fee_cents
          FROM fee_schedules WHERE company_id = ?`,
    args: [companyId],
  });
  return new Map<number, MethodFees>(rows.map((row) => [Number(row.payment_method_id), {
    payorFeeCents: Number(row.payor_fee_cents),
    payeeFeeCents: Number(row.payee_fee_cents),
    serviceFeeCents: Number(row.service_fee_cents),
  }]));
}
