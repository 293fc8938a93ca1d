/** What the ledger tells the company about a line: its balances and a day's tie-out. */
import type { Database } from "../../db/client.ts";
import { lineTieOut } from "./reports.ts";
import { type TieOut, tieOutJson } from "./tieout.ts";
import { type LineBalances, readLineBalances } from "./store.ts";

export type { LineBalances, TieOut };
export { tieOutJson };

/** The line's balances as committed. */
export function lineBalances(database: Database, lineId: string): Promise<LineBalances> {
  return readLineBalances(database.readClient, lineId);
}

/** The line's tie-out of one calendar day; null when `date` is not a YYYY-MM-DD date. */
export function lineTieOutOn(
  database: Database,
  lineId: string,
  date: string,
): Promise<TieOut | null> {
  return lineTieOut(database.readClient, lineId, date);
}
