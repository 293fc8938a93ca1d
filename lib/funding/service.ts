/** Funding use cases (DESIGN 5): money a company sends to a line, run in the caller's unit. */
import type { Database } from "../../db/client.ts";
import type { WriteTx } from "../../db/writer.ts";
import { ok, type Result } from "../platform/result.ts";
import { domainNow } from "../sandbox/clock_store.ts";
import {
  addFunds,
  type AddFundsInput,
  type FundingRecord,
  loadFunding,
  receiveWire,
  returnAchFunding,
} from "./store.ts";

export type { FundingRecord };

/**
 * Records a funding of the line; a funding_uuid already used replays its funding when the
 * request is the same, and is refused when it is not.
 */
export async function fundLine(
  tx: WriteTx,
  database: Database,
  input: AddFundsInput,
  realNow: number,
): Promise<Result<{ funding: FundingRecord; replayed: boolean }, "funding_uuid_reused">> {
  const now = await domainNow(database, input.companyId, realNow);
  const added = await addFunds(tx, input, database.environment, now);
  return added.ok ? added : tx.abort(added);
}

/** A funding as committed, for an operator's checks before a unit (its company, its state). */
export async function findFunding(
  database: Database,
  fundingId: string,
): Promise<FundingRecord | null> {
  return await loadFunding(database.readClient, fundingId);
}

/**
 * What an operator records by hand about a funding, each run in the caller's unit: a wire arrived
 * (its amount becomes available), or the bank returned an ACH funding. In live each waits for a
 * second admin's approval and runs in the approval's unit.
 */
export const manualFundingMoves = {
  "wire:receive": receiveWire,
  "funding:return": returnAchFunding,
} as const;
export type ManualFundingMove = keyof typeof manualFundingMoves;

/** Runs one manual move in the caller's unit and returns the funding before and after it. */
export async function recordManualFundingMove(
  tx: WriteTx,
  move: ManualFundingMove,
  fundingId: string,
  now: number,
): Promise<
  Result<
    { before: FundingRecord; after: FundingRecord },
    "funding_not_found" | "funding_not_pending" | "funding_wrong_method"
  >
> {
  const before = await loadFunding(tx, fundingId);
  const moved = await manualFundingMoves[move](tx, fundingId, now);
  return moved.ok ? ok({ before: before!, after: moved.value }) : moved;
}
