/**
 * The instant deposit rail's tables: the sealed Increase settings of each company, the push made
 * for each submission (instant_transfers) and the verified webhook events (increase_notices).
 */
import type { SqlReader, WriteTx } from "../../db/writer.ts";
import { sealedSettingsStore } from "../rails/sealed_settings_store.ts";
import type { IncreaseSettings } from "./settings.ts";

/** Increase settings at rest, sealed per company in each environment's database. */
export const increaseSettingsStore = sealedSettingsStore<IncreaseSettings>(
  "increase_settings",
  "Increase",
);

/** The kinds of the rail's jobs. */
export const INSTANT_JOBS = {
  /** Reads a push from Increase and acts on its status. */
  check: "instant.check",
} as const;

/** A push as we keep it. */
export interface InstantTransferRow {
  readonly reference: string;
  readonly payoutId: string;
  readonly companyId: string;
  readonly transferId: string;
  readonly route: string;
  readonly status: string;
  readonly checks: number;
}

function transferOf(row: Record<string, unknown>): InstantTransferRow {
  return {
    reference: String(row.reference),
    payoutId: String(row.payout_id),
    companyId: String(row.company_id),
    transferId: String(row.transfer_id),
    route: String(row.route),
    status: String(row.status),
    checks: Number(row.checks),
  };
}

const COLUMNS = "reference, payout_id, company_id, transfer_id, route, status, checks";

/** Keeps the push of a submission (once: the same answer again is the same row). */
export async function insertInstantTransfer(
  tx: WriteTx,
  transfer: {
    reference: string;
    payoutId: string;
    companyId: string;
    cardTokenId: string | null;
    validationId: string | null;
    transferId: string;
    route: string;
    status: string;
  },
  now: number,
): Promise<void> {
  await tx.execute({
    sql: `INSERT INTO instant_transfers (reference, payout_id, company_id, card_token_id,
            validation_id, transfer_id, route, status, checked_at, created_at)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (reference) DO NOTHING`,
    args: [
      transfer.reference,
      transfer.payoutId,
      transfer.companyId,
      transfer.cardTokenId,
      transfer.validationId,
      transfer.transferId,
      transfer.route,
      transfer.status,
      now,
      now,
    ],
  });
}

export async function findInstantTransfer(
  reader: SqlReader,
  transferId: string,
): Promise<InstantTransferRow | null> {
  const { rows } = await reader.execute({
    sql: `SELECT ${COLUMNS} FROM instant_transfers WHERE transfer_id = ?`,
    args: [transferId],
  });
  return rows[0] ? transferOf(rows[0]) : null;
}

/** Keeps the push's status as Increase last reported it, and counts the check. */
export async function recordTransferStatus(
  tx: WriteTx,
  transferId: string,
  status: string,
  now: number,
): Promise<void> {
  await tx.execute({
    sql: `UPDATE instant_transfers SET status = ?, checks = checks + 1, checked_at = ?
          WHERE transfer_id = ?`,
    args: [status, now, transferId],
  });
}

/** Records a verified event once per id; false: seen before (a replay). */
export async function insertIncreaseNotice(
  tx: WriteTx,
  notice: { id: string; companyId: string; category: string; objectId: string },
  now: number,
): Promise<boolean> {
  const result = await tx.execute({
    sql: `INSERT INTO increase_notices (id, company_id, category, object_id, received_at)
          VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
    args: [notice.id, notice.companyId, notice.category, notice.objectId, now],
  });
  return result.rowsAffected > 0;
}
