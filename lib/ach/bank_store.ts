/**
 * Bank settings at rest: one sealed JSON document per company in each environment's database.
 * In test, a company without its own settings has the sandbox bank's (ENVIRONMENT_BANKS).
 */
import type { SqlReader, WriteTx } from "../../db/writer.ts";
import type { Environment } from "../platform/config.ts";
import type { SecretBox } from "../platform/crypto.ts";
import { sha256Hex } from "../platform/keys.ts";
import { type BankSettings, ENVIRONMENT_BANKS } from "./bank_settings.ts";

/** The stored document: BankSettings as JSON, and the version of its shape. */
interface SealedDocument {
  readonly version: 1;
  readonly settings: BankSettings;
}

/** The company's own stored settings in this database, unsealed; null when it has none. */
export async function readStoredBankSettings(
  reader: SqlReader,
  secretBox: SecretBox,
  companyId: string,
): Promise<BankSettings | null> {
  const { rows } = await reader.execute({
    sql: "SELECT settings_sealed FROM bank_settings WHERE company_id = ?",
    args: [companyId],
  });
  if (!rows[0]) return null;
  const document = JSON.parse(
    await secretBox.openText(String(rows[0].settings_sealed)),
  ) as SealedDocument;
  if (document.version !== 1) {
    throw new Error(`bank settings of ${companyId}: unknown document version ${document.version}`);
  }
  return { ...document.settings, checkAccount: document.settings.checkAccount ?? null };
}

/**
 * The company's settings in `environment`: stored ones, else its bank's stand-in (the sandbox
 * bank's), else none.
 */
export async function readBankSettings(
  reader: SqlReader,
  secretBox: SecretBox,
  environment: Environment,
  companyId: string,
): Promise<BankSettings | null> {
  const stored = await readStoredBankSettings(reader, secretBox, companyId);
  const standIn = ENVIRONMENT_BANKS[environment].standInSettings;
  if (stored !== null || standIn === null) return stored;
  const { rows } = await reader.execute({
    sql: "SELECT name, tin FROM companies WHERE id = ?",
    args: [companyId],
  });
  if (!rows[0]) return null;
  return standIn(String(rows[0].name), String(rows[0].tin));
}

/**
 * Whether the company has ACH in `environment`: always with a bank that stands in (the sandbox
 * bank), else once its settings are stored.
 */
export async function hasAchRail(
  reader: SqlReader,
  environment: Environment,
  companyId: string,
): Promise<boolean> {
  if (ENVIRONMENT_BANKS[environment].standInSettings !== null) return true;
  const { rows } = await reader.execute({
    sql: "SELECT 1 FROM bank_settings WHERE company_id = ?",
    args: [companyId],
  });
  return rows.length > 0;
}

/** What a save left: the fingerprint of the saved document and the one it replaced. */
export interface SavedBankSettings {
  readonly companyId: string;
  readonly fingerprint: string;
  readonly previousFingerprint: string | null;
}

/**
 * The fingerprint of settings: the SHA-256 of the JSON text that is sealed, so an audit row
 * can tell two versions apart without holding an account number or an SFTP secret.
 */
export async function bankSettingsFingerprint(settings: BankSettings): Promise<string> {
  return await sha256Hex(plaintextOf(settings));
}

/** The JSON text that is sealed. */
function plaintextOf(settings: BankSettings): string {
  const document: SealedDocument = { version: 1, settings };
  return JSON.stringify(document);
}

/** Seals and saves the company's settings in the unit's database, replacing any before. */
export async function saveBankSettings(
  tx: WriteTx,
  secretBox: SecretBox,
  companyId: string,
  settings: BankSettings,
  operatorId: string | null,
  now: number,
): Promise<SavedBankSettings> {
  const plaintext = plaintextOf(settings);
  const sealed = await secretBox.sealText(plaintext);
  const fingerprint = await sha256Hex(plaintext);
  const { rows } = await tx.execute({
    sql: "SELECT fingerprint FROM bank_settings WHERE company_id = ?",
    args: [companyId],
  });
  await tx.execute({
    sql: `INSERT INTO bank_settings (company_id, settings_sealed, fingerprint, has_check_account,
            updated_by, updated_at, created_at)
          VALUES (?, ?, ?, ?, ?, ?, ?)
          ON CONFLICT (company_id) DO UPDATE SET settings_sealed = excluded.settings_sealed,
            fingerprint = excluded.fingerprint, has_check_account = excluded.has_check_account,
            updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
    // Whether checks can be offered is read without the key (lib/checks/settings_store.ts).
    args: [companyId, sealed, fingerprint, settings.checkAccount ? 1 : 0, operatorId, now, now],
  });
  return {
    companyId,
    fingerprint,
    previousFingerprint: rows[0] ? String(rows[0].fingerprint) : null,
  };
}
