/**
 * Funding use cases (docs/contract.md §5): money a company sends to a line, run in the caller's
 * unit.
 */
import type { Database } from "../../db/client.ts";
import { readBankSettings } from "../ach/bank_store.ts";
import type { CutoffSchedule } from "../ach/cutoffs.ts";
import type { SecretBox } from "../platform/crypto.ts";
import type { WriteTx } from "../../db/writer.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import { domainNow } from "../sandbox/clock_store.ts";
import {
  addFunds,
  type AddFundsInput,
  type AddFundsRefusal,
  type FundingRecord,
  type FundingReport,
  listFundings,
  listReleasedBy,
  loadFunding,
  manualReturnBlocker,
  receiveWire,
  returnAchFunding,
} from "./store.ts";

export type { FundingRecord, FundingReport };

/** Fundings a page of GET /api/funds holds by default, and at most. */
export const FUNDINGS_PAGE_SIZE_DEFAULT = 10;
export const FUNDINGS_PAGE_SIZE_MAX = 100;

/**
 * Records a funding of the line; a funding_uuid already used replays its funding when the
 * request is the same, and is refused when it is not. A funding that names a disbursement must
 * name one of the line waiting in pending_funds. Answers with what its credit released, if any.
 */
export async function fundLine(
  tx: WriteTx,
  database: Database,
  input: AddFundsInput,
  realNow: number,
): Promise<Result<{ funding: FundingReport; replayed: boolean }, AddFundsRefusal>> {
  const now = await domainNow(database, input.companyId, realNow);
  const added = await addFunds(tx, input, database.environment, now);
  if (!added.ok) return tx.abort(added);
  const { funding, replayed } = added.value;
  return ok({ funding: { ...funding, released: await listReleasedBy(tx, funding) }, replayed });
}

/**
 * The company's ACH cutoff schedule in the database's environment (its bank's, or the sandbox
 * bank's in test), read before a funding's unit: the settings are sealed, and a unit does not
 * wait on unsealing. Null when the company has no ACH there.
 */
export async function achFundingSchedule(
  database: Database,
  secretBox: SecretBox,
  companyId: string,
): Promise<CutoffSchedule | null> {
  const settings = await readBankSettings(
    database.readClient,
    secretBox,
    database.environment,
    companyId,
  );
  return settings === null ? null : {
    timeZone: settings.timeZone,
    cutoffs: settings.cutoffs,
    transmitWindowMinutes: settings.transmitWindowMinutes,
  };
}

/** A page of the company's fundings (of one line, or all), newest first; null: no such cursor. */
export function listCompanyFundings(
  database: Database,
  scope: { companyId: string; lineId: string | null },
  page: { limit: number; startingAfter: string | null },
): Promise<{ data: FundingReport[]; hasMore: boolean } | null> {
  return listFundings(database.readClient, scope, page);
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
    "funding_not_found" | "funding_not_pending" | "funding_wrong_method" | "funding_in_file"
  >
> {
  if (move === "funding:return") {
    const blocker = await manualReturnBlocker(tx, fundingId);
    if (blocker !== null) return refuse("funding_in_file", blocker, { field: "funding" });
  }
  const before = await loadFunding(tx, fundingId);
  const moved = await manualFundingMoves[move](tx, fundingId, now);
  return moved.ok ? ok({ before: before!, after: moved.value }) : moved;
}

/** Why a funding's return may not be recorded by hand now (its debit is in a file), or null. */
export function manualFundingReturnBlocker(
  database: Database,
  fundingId: string,
): Promise<string | null> {
  return manualReturnBlocker(database.readClient, fundingId);
}
