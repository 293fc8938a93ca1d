/**
 * Whether a company can pay checks, and the check account its files are built from. The check
 * account is part of the company's sealed bank settings (`check_account`); a test company
 * without one has the sandbox check account, so the test environment always pays checks.
 * Digital checks also need the E-13B font CHECK_MICR_FONT names in live (read once at start, see
 * Config.checkMicrFont): a payee cannot deposit a check whose MICR line the bank cannot read. The
 * sandbox is a full replica without it: its digital checks carry the "not negotiable" mark.
 */
import type { SqlReader } from "../../db/writer.ts";
import type { Environment } from "../platform/config.ts";
import type { SecretBox } from "../platform/crypto.ts";
import type { Cutoff, SftpTarget } from "../ach/bank_settings.ts";
import { readBankSettings } from "../ach/bank_store.ts";
import { type CheckAccount, sandboxCheckAccount } from "./account.ts";
import { lobMails } from "../lob/store.ts";

/** What the check rail needs of a company's bank settings. */
export interface CheckSettings {
  readonly account: CheckAccount;
  /** The bank's cutoffs and time zone: check files are built at them in live. */
  readonly timeZone: string;
  readonly cutoffs: readonly Cutoff[];
  readonly transmitWindowMinutes: number;
  /** Live: where files go; null: they wait for an admin's download and mark-sent. */
  readonly sftp: SftpTarget | null;
  /** Whether a mail provider (Lob) mails the postal checks instead of the company printing them. */
  readonly providerMails: boolean;
}

/**
 * What an environment's check bank is, beyond a company's stored check account: the sandbox check
 * bank gives every company its account and prints digital checks without the MICR font (marked
 * not negotiable); in live a company pays checks once its account is stored.
 */
interface EnvironmentCheckBank {
  readonly standInAccount: ((companyName: string) => CheckAccount) | null;
  readonly printsWithoutMicrFont: boolean;
}

const CHECK_BANKS: Readonly<Record<Environment, EnvironmentCheckBank>> = {
  test: { standInAccount: sandboxCheckAccount, printsWithoutMicrFont: true },
  live: { standInAccount: null, printsWithoutMicrFont: false },
};

/** The company's check settings in `environment`, or null when it has no check account. */
export async function readCheckSettings(
  reader: SqlReader,
  secretBox: SecretBox,
  environment: Environment,
  companyId: string,
): Promise<CheckSettings | null> {
  const settings = await readBankSettings(reader, secretBox, environment, companyId);
  if (!settings) return null;
  let account = settings.checkAccount ?? null;
  const standIn = CHECK_BANKS[environment].standInAccount;
  if (account === null && standIn !== null) {
    const { rows } = await reader.execute({
      sql: "SELECT name FROM companies WHERE id = ?",
      args: [companyId],
    });
    account = standIn(String(rows[0]?.name ?? ""));
  }
  if (account === null) return null;
  return {
    account,
    timeZone: settings.timeZone,
    cutoffs: settings.cutoffs,
    transmitWindowMinutes: settings.transmitWindowMinutes,
    sftp: settings.sftp,
    providerMails: await lobMails(reader, companyId),
  };
}

/** Whether the company can pay postal checks in `environment`: always in test. */
export async function hasCheckRail(
  reader: SqlReader,
  environment: Environment,
  companyId: string,
): Promise<boolean> {
  if (CHECK_BANKS[environment].standInAccount !== null) return true;
  // The sealed document cannot be opened here (no key): its save marks whether it has an account.
  const { rows } = await reader.execute({
    sql: "SELECT has_check_account FROM bank_settings WHERE company_id = ?",
    args: [companyId],
  });
  return rows.length > 0 && Number(rows[0].has_check_account) === 1;
}

/** Whether digital checks can be paid at all in `environment`: in live only with a MICR font. */
export function digitalChecksPrintable(
  environment: Environment,
  micrFont: Uint8Array | null,
): boolean {
  return CHECK_BANKS[environment].printsWithoutMicrFont || micrFont !== null;
}

/** Whether the company can pay digital checks: in live, a check account and a MICR font. */
export async function hasDigitalCheckRail(
  reader: SqlReader,
  environment: Environment,
  companyId: string,
  micrFont: Uint8Array | null,
): Promise<boolean> {
  return digitalChecksPrintable(environment, micrFont) &&
    await hasCheckRail(reader, environment, companyId);
}
