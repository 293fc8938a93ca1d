/**
 * A provider's settings at rest: one sealed JSON document per company in each environment's
 * database, in the provider's own table (company_id, settings_sealed, fingerprint, updated_by,
 * updated_at, created_at). A company without a row is not paid through that provider.
 */
import type { SqlReader, WriteTx } from "../../db/writer.ts";
import type { SecretBox } from "../platform/crypto.ts";
import { sha256Hex } from "../platform/keys.ts";
import type { SavedSealedSettings } from "../operators/sealed_settings_approval.ts";

/** The stored document: the settings, and the version of its shape. */
interface SealedDocument<S> {
  readonly version: 1;
  readonly settings: S;
}

/** One provider's settings table, read and written sealed. */
export interface SealedSettingsStore<S> {
  read(reader: SqlReader, secretBox: SecretBox, companyId: string): Promise<S | null>;
  has(reader: SqlReader, companyId: string): Promise<boolean>;
  fingerprint(settings: S): Promise<string>;
  save(
    tx: WriteTx,
    secretBox: SecretBox,
    companyId: string,
    settings: S,
    operatorId: string | null,
    now: number,
  ): Promise<SavedSealedSettings>;
}

/** The store of the provider settings kept in `table` (`label` names them in errors). */
export function sealedSettingsStore<S>(table: string, label: string): SealedSettingsStore<S> {
  const plaintextOf = (settings: S) =>
    JSON.stringify({ version: 1, settings } satisfies SealedDocument<S>);
  return {
    async read(reader, secretBox, companyId) {
      const { rows } = await reader.execute({
        sql: `SELECT settings_sealed FROM ${table} WHERE company_id = ?`,
        args: [companyId],
      });
      if (!rows[0]) return null;
      const document = JSON.parse(
        await secretBox.openText(String(rows[0].settings_sealed)),
      ) as SealedDocument<S>;
      if (document.version !== 1) {
        throw new Error(
          `${label} settings of ${companyId}: unknown document version ${document.version}`,
        );
      }
      return document.settings;
    },
    async has(reader, companyId) {
      const { rows } = await reader.execute({
        sql: `SELECT 1 FROM ${table} WHERE company_id = ?`,
        args: [companyId],
      });
      return rows.length > 0;
    },
    fingerprint: (settings) => sha256Hex(plaintextOf(settings)),
    async save(tx, secretBox, companyId, settings, operatorId, now) {
      const plaintext = plaintextOf(settings);
      const sealed = await secretBox.sealText(plaintext);
      const fingerprint = await sha256Hex(plaintext);
      const { rows } = await tx.execute({
        sql: `SELECT fingerprint FROM ${table} WHERE company_id = ?`,
        args: [companyId],
      });
      await tx.execute({
        sql:
          `INSERT INTO ${table} (company_id, settings_sealed, fingerprint, updated_by, updated_at, created_at)
              VALUES (?, ?, ?, ?, ?, ?)
              ON CONFLICT (company_id) DO UPDATE SET settings_sealed = excluded.settings_sealed,
                fingerprint = excluded.fingerprint, updated_by = excluded.updated_by,
                updated_at = excluded.updated_at`,
        args: [companyId, sealed, fingerprint, operatorId, now, now],
      });
      return { fingerprint, previousFingerprint: rows[0] ? String(rows[0].fingerprint) : null };
    },
  };
}
