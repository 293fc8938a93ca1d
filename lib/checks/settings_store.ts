/** Whether a company's check account is configured (issue 19); not built yet: never. */
import type { SqlReader } from "../../db/writer.ts";
import type { Environment } from "../platform/config.ts";

/** Whether the company can pay postal checks in `environment`. */
export function hasCheckRail(
  _reader: SqlReader,
  _environment: Environment,
  _companyId: string,
): Promise<boolean> {
  return Promise.resolve(false);
}

/** Whether the company can pay digital checks (a check account and CHECK_MICR_FONT). */
export function hasDigitalCheckRail(
  _reader: SqlReader,
  _environment: Environment,
  _companyId: string,
): Promise<boolean> {
  return Promise.resolve(false);
}
