/**
 * Sanctions screening of payouts before they are submitted, on any rail: each payee and
 * authorization-party name against the loaded OFAC SDN list (the bundled fixture in test). A
 * potential match holds the payout `in_review` until an operator clears or rejects it.
 * CONTRACT STUB: owned by the sanctions helper.
 */
import type { SqlReader, WriteTx } from "../../db/writer.ts";
import type { Environment } from "../platform/config.ts";
import type { PayoutRow } from "../payouts/store.ts";

/**
 * Screens a payout about to be submitted, inside the submit job's claiming unit: `clear` lets
 * the submission go on; `held` means the payout moved to `in_review` with an open review (the
 * caller submits nothing); `no_list` means live has no list loaded (the caller refuses the
 * submission with `sanctions_list_missing`).
 */
export function screenBeforeSubmission(
  _tx: WriteTx,
  _environment: Environment,
  _payout: PayoutRow,
  _now: number,
): Promise<"clear" | "held" | "no_list"> {
  throw new Error("not built yet");
}

/** Whether a sanctions list is in force in `environment` (always in test: the fixture). */
export function sanctionsListLoaded(
  _reader: SqlReader,
  _environment: Environment,
): Promise<boolean> {
  throw new Error("not built yet");
}
