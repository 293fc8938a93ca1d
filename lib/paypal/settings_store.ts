/** Whether a company's PayPal settings are stored (issue 19); not built yet: never. */
import type { SqlReader } from "../../db/writer.ts";
import type { Environment } from "../platform/config.ts";

/** Whether the company can pay PayPal and Venmo payouts in `environment`. */
export function hasPaypalRail(
  _reader: SqlReader,
  _environment: Environment,
  _companyId: string,
): Promise<boolean> {
  return Promise.resolve(false);
}
