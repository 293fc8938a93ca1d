/**
 * Bank settings at rest: one sealed JSON document per company in each environment's database.
 * In test, a company without its own settings has the sandbox bank's.
 * CONTRACT STUB: owned by the bank-settings helper.
 */
import type { SqlReader } from "../../db/writer.ts";
import type { Environment } from "../platform/config.ts";
import type { SecretBox } from "../platform/crypto.ts";
import type { BankSettings } from "./bank_settings.ts";

/** The company's settings in `environment`: stored ones, else (test only) the sandbox bank's. */
export function readBankSettings(
  _reader: SqlReader,
  _secretBox: SecretBox,
  _environment: Environment,
  _companyId: string,
): Promise<BankSettings | null> {
  throw new Error("not built yet");
}

/** Whether the company has ACH in `environment`: always in test, with stored settings in live. */
export function hasAchRail(
  _reader: SqlReader,
  _environment: Environment,
  _companyId: string,
): Promise<boolean> {
  throw new Error("not built yet");
}
