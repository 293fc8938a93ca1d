/** Funding use cases (DESIGN 5): money a company sends to a line, run in the caller's unit. */
import type { Database } from "../../db/client.ts";
import type { WriteTx } from "../../db/writer.ts";
import type { Result } from "../platform/result.ts";
import { domainNow } from "../sandbox/clock_store.ts";
import { addFunds, type AddFundsInput, type FundingRecord } from "./store.ts";

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
