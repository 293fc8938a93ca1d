/**
 * The pay_by deadline's fallback, in the caller's unit: an offer nobody answered chooses the
 * company's fallback method, a postal check to the payee's address on file, through the payout
 * state machine (`fallback`). The check then goes the way of any chosen check (the check rail,
 * in-house print or the mail provider as the company configured it). Without an address, or
 * when the check's hold does not fit, the offer stays open and owed, and the payout is listed
 * in the console's Needs action queue.
 */
import type { WriteTx } from "../../db/writer.ts";
import { ok, type Result } from "../platform/result.ts";
import { feesFor } from "../payouts/fees.ts";
import { readFeeSchedule } from "../payouts/fee_store.ts";
import { modalityOf } from "../payouts/states.ts";
import { applyMove, type MoveRefusal, type PayoutRow } from "../payouts/store.ts";
import { addressOnFile } from "./store.ts";
import { sandboxScenario, testPayeeMarker } from "../rails/sandbox.ts";

/** The fallback method: a postal check. */
export const FALLBACK_METHOD = modalityOf("check")!;

/** What the timeline and the events say of a fallback. */
export const FALLBACK_DETAIL = "fallback at deadline: a check mailed to the address on file";
/** The timeline's words when the fallback could not choose the check. */
export const FALLBACK_NO_ADDRESS_DETAIL =
  "fallback at deadline: no mailing address on file; the offer stays open and owed (needs action)";

export type FallbackOutcome =
  | { readonly kind: "fell_back"; readonly payout: PayoutRow }
  | { readonly kind: "no_address" | "refused"; readonly payout: PayoutRow };

/**
 * Falls an offered payout back to a mailed check at its deadline. The caller schedules the
 * check's submission for a `fell_back` outcome, in the same unit.
 */
export async function fallBackAtDeadline(
  tx: WriteTx,
  payout: PayoutRow,
  now: number,
): Promise<Result<FallbackOutcome, MoveRefusal>> {
  const stayOwed = async (kind: "no_address" | "refused", detail: string) => {
    const held = await applyMove(tx, payout.id, { kind: "hold_owed" }, now, { detail });
    return held.ok ? ok({ kind, payout: held.value }) : held;
  };
  const address = await addressOnFile(tx, payout.id);
  if (address === null) return await stayOwed("no_address", FALLBACK_NO_ADDRESS_DETAIL);
  const schedule = await readFeeSchedule(tx, payout.companyId);
  const marker = testPayeeMarker(payout.payeeId ? payout.payeeUuid : payout.email);
  const moved = await applyMove(
    tx,
    payout.id,
    {
      kind: "fallback",
      paymentMethodId: FALLBACK_METHOD.id,
      fees: feesFor(schedule, FALLBACK_METHOD.id),
    },
    now,
    {
      detail: FALLBACK_DETAIL,
      methodDetails: {
        // The check is printed to the address on file, as one the payee entered would be.
        ...address,
        modality: FALLBACK_METHOD.code,
        scenario: sandboxScenario(FALLBACK_METHOD.code, {}, marker),
        fallback: true,
      },
    },
  );
  if (moved.ok) return ok({ kind: "fell_back", payout: moved.value });
  // The check's fees need more than available holds, or its payee fee exceeds the amount.
  if (moved.code === "insufficient_funds" || moved.code === "fee_exceeds_amount") {
    return await stayOwed(
      "refused",
      `fallback at deadline refused: ${moved.message}; the offer stays open and owed (needs action)`,
    );
  }
  return moved;
}
