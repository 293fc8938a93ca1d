/**
 * The check rails (issue 19): postal and digital checks take numbers from the company's check
 * register when submitted and reach the bank through positive-pay files (and, for postal checks,
 * print files) built at each cutoff. Null until the rail is built: checks then stay on the
 * sandbox rail in test and unconfigured in live.
 */
import type { Database } from "../../db/client.ts";
import type { Environment } from "../platform/config.ts";
import type { SecretBox } from "../platform/crypto.ts";
import type { BatchRail } from "../rails/batch.ts";
import type { PayoutRuntime } from "../payouts/jobs.ts";

export interface CheckRailDeps {
  readonly database: Database;
  readonly environment: Environment;
  readonly secretBox: SecretBox;
  readonly runtime: PayoutRuntime;
}

/** The check rail of one environment's database. */
export function checkRail(_deps: CheckRailDeps): BatchRail | null {
  return null;
}
