/** What the ledger tells the company about a line: its balances and a day's tie-out. */
import type { Database } from "../../db/client.ts";
import { lineTieOut } from "./reports.ts";
import { type TieOut, tieOutJson } from "./tieout.ts";
import { type LineBalances, readLineBalances } from "./store.ts";
import { achRequestedCents } from "../funding/store.ts";

export type { LineBalances, TieOut };
export { tieOutJson };

/**
 * The line's balances as committed, as the company sees them: pending counts the ACH fundings on
 * their way, those requested and not sent to the bank yet included (the ledger posts a funding
 * when its debit goes).
 */
export async function lineBalances(database: Database, lineId: string): Promise<LineBalances> {
  const [balances, requested] = await Promise.all([
    readLineBalances(database.readClient, lineId),
    achRequestedCents(database.readClient, lineId),
  ]);
  return { ...balances, pending_funding: balances.pending_funding + requested };
}

/** The line's tie-out of one calendar day; null when `date` is not a YYYY-MM-DD date. */
export function lineTieOutOn(
  database: Database,
  lineId: string,
  date: string,
): Promise<TieOut | null> {
  return lineTieOut(database.readClient, lineId, date);
}
