/** A company's fee schedule, read inside the write unit that uses it. */
import type { FeeSchedule } from "./fees.ts";
import type { MethodFees } from "./transition.ts";
import { columnsOf, rowMapper } from "../../db/rows.ts";
import { feeSchedules } from "../../db/schema.ts";
import type { WriteTx } from "../../db/writer.ts";

const fee = columnsOf(feeSchedules);
const toMethodFees = rowMapper({
  paymentMethodId: fee.paymentMethodId,
  payorFeeCents: fee.payorFeeCents,
  payeeFeeCents: fee.payeeFeeCents,
  serviceFeeCents: fee.serviceFeeCents,
});

export async function readFeeSchedule(tx: WriteTx, companyId: string): Promise<FeeSchedule> {
  const { rows } = await tx.execute({
    sql: `SELECT payment_method_id, payor_fee_cents, payee_fee_cents, service_fee_cents
          FROM fee_schedules WHERE company_id = ?`,
    args: [companyId],
  });
  return new Map<number, MethodFees>(rows.map((row) => {
    const { paymentMethodId, ...fees } = toMethodFees(row);
    return [paymentMethodId, fees];
  }));
}
