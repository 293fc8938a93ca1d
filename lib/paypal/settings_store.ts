/**
 * PayPal settings at rest: one sealed JSON document per company in each environment's database.
 * A company without them is not paid through PayPal: in live PayPal and Venmo are not offered, in
 * test the sandbox's PayPal pays them (lib/paypal/simulator.ts), as the composition root binds it.
 */
import type { SqlReader, WriteTx } from "../../db/writer.ts";
import type { Environment } from "../platform/config.ts";
import type { SecretBox } from "../platform/crypto.ts";
import { sha256Hex } from "../platform/keys.ts";
import { type ProviderReach, providerReach } from "../rails/provider_reach.ts";
import type { PaypalConnection } from "./client.ts";
import type { PaypalSettings } from "./settings.ts";
import type { PaypalSimulator } from "./simulator.ts";

/** The stored document: the settings, and the version of its shape. */
interface SealedDocument {
  readonly version: 1;
  readonly settings: PaypalSettings;
}

/** The company's stored settings in this database, unsealed; null when it has none. */
export async function readPaypalSettings(
  reader: SqlReader,
  secretBox: SecretBox,
  companyId: string,
): Promise<PaypalSettings | null> {
  const { rows } = await reader.execute({
    sql: "SELECT settings_sealed FROM paypal_settings WHERE company_id = ?",
    args: [companyId],
  });
  if (!rows[0]) return null;
  const document = JSON.parse(
    await secretBox.openText(String(rows[0].settings_sealed)),
  ) as SealedDocument;
  if (document.version !== 1) {
    throw new Error(
      `PayPal settings of ${companyId}: unknown document version ${document.version}`,
    );
  }
  return document.settings;
}

/** Whether the company can pay PayPal and Venmo payouts in `environment`: its settings are stored. */
export function hasPaypalRail(
  reader: SqlReader,
  _environment: Environment,
  companyId: string,
): Promise<boolean> {
  return paypalSettingsStored(reader, companyId);
}

async function paypalSettingsStored(reader: SqlReader, companyId: string): Promise<boolean> {
  const { rows } = await reader.execute({
    sql: "SELECT 1 FROM paypal_settings WHERE company_id = ?",
    args: [companyId],
  });
  return rows.length > 0;
}

/**
 * How each company reaches PayPal: its own settings, called through `paypalFetch` (the network's
 * fetch unless the simulation answers in process), else its account at `simulator` (the sandbox's
 * PayPal, bound in test); without either it does not, and is not paid by PayPal or Venmo.
 */
export function paypalReachOf(
  secretBox: SecretBox,
  simulator: PaypalSimulator | null,
  paypalFetch: typeof fetch = globalThis.fetch,
): ProviderReach<PaypalConnection> {
  return providerReach(
    {
      read: (reader, companyId) => readPaypalSettings(reader, secretBox, companyId),
      has: paypalSettingsStored,
    },
    (settings) => ({ settings, fetch: paypalFetch }),
    simulator && ((companyId) => simulator.connectionFor(companyId)),
  );
}

function plaintextOf(settings: PaypalSettings): string {
  const document: SealedDocument = { version: 1, settings };
  return JSON.stringify(document);
}

/** The SHA-256 of the sealed text: audit rows tell versions apart without holding the secret. */
export async function paypalSettingsFingerprint(settings: PaypalSettings): Promise<string> {
  return await sha256Hex(plaintextOf(settings));
}

/** What a save left: the fingerprint of the saved document and the one it replaced. */
export interface SavedPaypalSettings {
  readonly companyId: string;
  readonly fingerprint: string;
  readonly previousFingerprint: string | null;
}

/** Seals and saves the company's settings in the unit's database, replacing any before. */
export async function savePaypalSettings(
  tx: WriteTx,
  secretBox: SecretBox,
  companyId: string,
  settings: PaypalSettings,
  operatorId: string | null,
  now: number,
): Promise<SavedPaypalSettings> {
  const plaintext = plaintextOf(settings);
  const sealed = await secretBox.sealText(plaintext);
  const fingerprint = await sha256Hex(plaintext);
  const { rows } = await tx.execute({
    sql: "SELECT fingerprint FROM paypal_settings WHERE company_id = ?",
    args: [companyId],
  });
  await tx.execute({
    sql:
      `INSERT INTO paypal_settings (company_id, settings_sealed, fingerprint, updated_by, updated_at, created_at)
          VALUES (?, ?, ?, ?, ?, ?)
          ON CONFLICT (company_id) DO UPDATE SET settings_sealed = excluded.settings_sealed,
            fingerprint = excluded.fingerprint, updated_by = excluded.updated_by,
            updated_at = excluded.updated_at`,
    args: [companyId, sealed, fingerprint, operatorId, now, now],
  });
  return {
    companyId,
    fingerprint,
    previousFingerprint: rows[0] ? String(rows[0].fingerprint) : null,
  };
}
