/**
 * A disbursement's status, derived from its payees' (contract §4): Completed when every payee is
 * terminal, else the least advanced payee state. Two choices where the contract is silent: a
 * disbursement whose payees were all canceled is Canceled (nothing was paid), and a failed payee
 * stands after modality_offered and before modality_selected, where its payee or the company must
 * act again (a re-offer or a retry), so one failure shows unless another payee has yet to choose.
 */
import type { PayoutStatus } from "./states.ts";

/** The payee states that are not terminal, least advanced first. */
const ADVANCEMENT: readonly PayoutStatus[] = [
  "pending_funds",
  "created",
  "pending_approval",
  "awaiting_endorsement",
  "modality_offered",
  "failed",
  "modality_selected",
  "funds_sent",
];

/** The status of a disbursement whose payees are in `statuses` (at least one). */
export function disbursementStatus(statuses: readonly PayoutStatus[]): PayoutStatus {
  if (statuses.length === 0) throw new Error("disbursementStatus: a disbursement has a payee");
  const open = ADVANCEMENT.find((status) => statuses.includes(status));
  if (open !== undefined) return open;
  return statuses.every((status) => status === "canceled") ? "canceled" : "completed";
}
