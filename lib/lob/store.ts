/**
 * The mailed checks' tables: each company's sealed Lob settings (with its mailing choice beside
 * them, readable without the key) and the tracking events of the checks Lob mails, each kept once.
 */
import type { SqlReader, WriteTx } from "../../db/writer.ts";
import { sealedSettingsStore } from "../rails/sealed_settings_store.ts";
import type { SavedSealedSettings } from "../operators/sealed_settings_approval.ts";
import type { SecretBox } from "../platform/crypto.ts";
import type { LobSettings } from "./settings.ts";

const sealed = sealedSettingsStore<LobSettings>("lob_settings", "Lob");

/** Lob settings at rest, sealed per company in each environment's database. */
export const lobSettingsStore = {
  ...sealed,
  /** Saves the settings, and the mailing choice in the clear beside them. */
  async save(
    tx: WriteTx,
    secretBox: SecretBox,
    companyId: string,
    settings: LobSettings,
    operatorId: string | null,
    now: number,
  ): Promise<SavedSealedSettings> {
    const saved = await sealed.save(tx, secretBox, companyId, settings, operatorId, now);
    await tx.execute({
      sql: "UPDATE lob_settings SET provider_mails = ? WHERE company_id = ?",
      args: [settings.mailing === "provider" ? 1 : 0, companyId],
    });
    return saved;
  },
};

/** Whether Lob mails the company's postal checks in this database's environment. */
export async function lobMails(reader: SqlReader, companyId: string): Promise<boolean> {
  const { rows } = await reader.execute({
    sql: "SELECT provider_mails FROM lob_settings WHERE company_id = ?",
    args: [companyId],
  });
  return rows.length > 0 && Number(rows[0].provider_mails) === 1;
}

/** One tracking event of a mailed check. */
export interface MailEvent {
  readonly id: string;
  readonly companyId: string;
  readonly checkId: string;
  readonly payoutId: string;
  readonly lobCheckId: string;
  readonly type: string;
  readonly at: number;
}

/** Keeps an event once; answers false when it was kept before (a replay). */
export async function recordMailEvent(
  tx: WriteTx,
  event: MailEvent,
  now: number,
): Promise<boolean> {
  const result = await tx.execute({
    sql: `INSERT INTO check_mail_events (id, company_id, check_id, payout_id, lob_check_id, type,
            at, received_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
    args: [
      event.id,
      event.companyId,
      event.checkId,
      event.payoutId,
      event.lobCheckId,
      event.type,
      event.at,
      now,
    ],
  });
  return result.rowsAffected === 1;
}

/** A check's mail events, oldest first. */
export async function mailEventsOf(reader: SqlReader, checkId: string): Promise<MailEvent[]> {
  const { rows } = await reader.execute({
    sql: `SELECT id, company_id, check_id, payout_id, lob_check_id, type, at
          FROM check_mail_events WHERE check_id = ? ORDER BY at, id`,
    args: [checkId],
  });
  return rows.map((row) => ({
    id: String(row.id),
    companyId: String(row.company_id),
    checkId: String(row.check_id),
    payoutId: String(row.payout_id),
    lobCheckId: String(row.lob_check_id),
    type: String(row.type),
    at: Number(row.at),
  }));
}
