/** Fees per payment method (contract §5); absent methods cost nothing. */
import type { MethodFees } from "./transition.ts";

export type FeeSchedule = ReadonlyMap<number, MethodFees>;

export const noFees: MethodFees = { payorFeeCents: 0, payeeFeeCents: 0, serviceFeeCents: 0 };

export function feesFor(schedule: FeeSchedule, paymentMethodId: number): MethodFees {
  return schedule.get(paymentMethodId) ?? noFees;
}

/** BilledAmount = Amount + payor fee + service fee. */
export function billedAmountCents(amountCents: number, fees: MethodFees): number {
  return amountCents + fees.payorFeeCents + fees.serviceFeeCents;
}

/** What a create holds: the amount plus the highest payor + service fee among the allowed methods. */
export function holdFor(
  amountCents: number,
  allowedMethodIds: readonly number[],
  schedule: FeeSchedule,
): number {
  let highest = 0;
  for (const id of allowedMethodIds) {
    const fees = feesFor(schedule, id);
    highest = Math.max(highest, fees.payorFeeCents + fees.serviceFeeCents);
  }
  return amountCents + highest;
}
