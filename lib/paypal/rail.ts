/**
 * The PayPal rail (issue 19): PayPal and Venmo payouts through PayPal's Payouts API. Null until the
 * rail is built: both methods then stay on the sandbox rail in test and unconfigured in live.
 */
import type { Database } from "../../db/client.ts";
import type { Environment } from "../platform/config.ts";
import type { SecretBox } from "../platform/crypto.ts";
import type { BatchRail } from "../rails/batch.ts";
import type { PayoutRuntime } from "../payouts/jobs.ts";

export interface PaypalRailDeps {
  readonly database: Database;
  readonly environment: Environment;
  readonly secretBox: SecretBox;
  readonly runtime: PayoutRuntime;
}

/** The PayPal rail of one environment's database. */
export function paypalRail(_deps: PaypalRailDeps): BatchRail | null {
  return null;
}
