/**
 * The SQL of the PayPal rail: its queued entries and batches (rail_batch_entries and rail_batches
 * of rail `paypal`), PayPal's items of them (paypal_items: the batch an item rides, which changes
 * when an item is sent again after the insurer's balance fell short), and verified webhook
 * notices (paypal_notices).
 */
import type { SqlReader, WriteTx } from "../../db/writer.ts";
import { insertQueuedEntry, type NewBatchEntry, openBatch } from "../rails/batch.ts";
import { newId } from "../platform/keys.ts";
import { ensureCutoffPlanned } from "../rails/cutoff.ts";
import { paypalCutoff } from "./rules.ts";

/** The rail's name in rail_batches.rail and rail_batch_entries.rail. */
export const PAYPAL_RAIL = "paypal";

/** The rail's job kinds. */
export const PAYPAL_JOBS = {
  /** Per company, every few minutes while entries wait: gathers them into one batch. */
  cutoff: "paypal.cutoff",
  /** Per batch: creates it at PayPal under sender_batch_id = the batch's id. */
  transmit: "paypal.transmit",
  /** Per batch PayPal took: sends its entries beyond the transmission's unit. */
  send: "paypal.send",
  /** Per open batch, with backoff: reads every item of it from PayPal. */
  poll: "paypal.poll",
  /** Per verified webhook notice: reads the item it names from PayPal. */
  notice: "paypal.notice",
  /** Per item refused for the insurer's balance: sends it again in a batch of its own. */
  retryItem: "paypal.retry_item",
  /** The sandbox's PayPal: per batch it took, sends PayPal's webhooks of its items' states. */
  sandboxWebhooks: "paypal.sandbox_webhooks",
} as const;

/** The engine's jobs of PayPal batches: their transmission and the end of their window. */
export const PAYPAL_BATCH_JOBS = {
  transmit: PAYPAL_JOBS.transmit,
  windowClose: "paypal.window_close",
};

/** Queues an entry for the company's next PayPal cutoff, and plans that cutoff. */
export async function queuePaypalEntry(
  tx: WriteTx,
  entry: NewBatchEntry,
  now: number,
): Promise<void> {
  await insertQueuedEntry(tx, PAYPAL_RAIL, entry, now);
  await planPaypalCutoff(tx, entry.companyId, now);
}

/** The PayPal rail's cutoff as the engine plans and runs it. */
export const PAYPAL_CUTOFF = {
  cutoffJob: PAYPAL_JOBS.cutoff,
  entryRail: PAYPAL_RAIL,
  batchRail: PAYPAL_RAIL,
  label: "PayPal batch",
  jobs: PAYPAL_BATCH_JOBS,
};

/** Makes sure the company's next five-minute cutoff will take its queued entries. */
export function planPaypalCutoff(tx: WriteTx, companyId: string, now: number): Promise<void> {
  return ensureCutoffPlanned(tx, PAYPAL_CUTOFF, companyId, now, paypalCutoff(now));
}

/** Whether a job of this kind and subject waits to run (and is not running). */
export async function pendingJob(
  tx: WriteTx,
  companyId: string,
  kind: string,
  subjectId: string,
): Promise<boolean> {
  const { rows } = await tx.execute({
    sql: `SELECT 1 FROM scheduled_jobs
          WHERE company_id = ? AND kind = ? AND subject_id = ? AND done_at IS NULL
            AND lease_until IS NULL LIMIT 1`,
    args: [companyId, kind, subjectId],
  });
  return rows.length > 0;
}

/** Keeps one PayPal item per entry of a claimed batch, PayPal or Venmo by the payout's method. */
export async function insertBatchItems(tx: WriteTx, batchId: string, now: number): Promise<void> {
  await tx.execute({
    sql: `INSERT INTO paypal_items (entry_id, company_id, batch_id, recipient_wallet, created_at)
          SELECT e.id, e.company_id, e.batch_id,
                 CASE p.payment_method_id WHEN 6 THEN 'VENMO' ELSE 'PAYPAL' END, ?
          FROM rail_batch_entries e JOIN payouts p ON p.id = e.payout_id
          WHERE e.batch_id = ?`,
    args: [now, batchId],
  });
}

/** Whether entries ride the batch (a cutoff's batch, not an item sent again on its own). */
export async function batchCarriesEntries(reader: SqlReader, batchId: string): Promise<boolean> {
  const { rows } = await reader.execute({
    sql: "SELECT 1 FROM rail_batch_entries WHERE batch_id = ? LIMIT 1",
    args: [batchId],
  });
  return rows.length > 0;
}

/** Whether a batch's items were kept (its cutoff's claim ended). */
export async function batchHasItems(reader: SqlReader, batchId: string): Promise<boolean> {
  const { rows } = await reader.execute({
    sql: "SELECT 1 FROM paypal_items WHERE batch_id = ? LIMIT 1",
    args: [batchId],
  });
  return rows.length > 0;
}

/** What a batch's creation sends of one item. */
export interface ItemToSend {
  readonly reference: string;
  readonly amountCents: number;
  readonly wallet: "PAYPAL" | "VENMO";
  /** The payee's PayPal e-mail or Venmo phone, as entered at selection (else their contact). */
  readonly receiver: string | null;
}

/** The items a batch carries now (those sent again after a shortfall ride a batch of their own). */
export async function itemsToSend(reader: SqlReader, batchId: string): Promise<ItemToSend[]> {
  const { rows } = await reader.execute({
    sql: `SELECT e.reference, e.amount_cents, i.recipient_wallet,
                 CASE i.recipient_wallet
                   WHEN 'VENMO' THEN coalesce(json_extract(p.method_details, '$.phone'), p.phone)
                   ELSE coalesce(json_extract(p.method_details, '$.email'), p.email) END AS receiver
          FROM paypal_items i
            JOIN rail_batch_entries e ON e.id = i.entry_id
            JOIN payouts p ON p.id = e.payout_id
          WHERE i.batch_id = ?
          ORDER BY e.created_at, e.id`,
    args: [batchId],
  });
  return rows.map((row) => ({
    reference: String(row.reference),
    amountCents: Number(row.amount_cents),
    wallet: String(row.recipient_wallet) as "PAYPAL" | "VENMO",
    receiver: row.receiver === null ? null : String(row.receiver),
  }));
}

/** Our side of one PayPal item, found by the entry reference it was sent under. */
export interface ItemRecord {
  readonly entryId: string;
  readonly companyId: string;
  readonly reference: string;
  readonly payoutId: string;
  readonly entryStatus: string;
  /** The batch the item rides now, and PayPal's id of it once created. */
  readonly batchId: string;
  readonly payoutBatchId: string | null;
  readonly payoutItemId: string | null;
  readonly transactionStatus: string | null;
}

const ITEM_SELECT =
  `SELECT i.entry_id, e.company_id, e.reference, e.payout_id, e.status AS entry_status,
        i.batch_id, b.rail_reference AS payout_batch_id, i.payout_item_id, i.transaction_status
  FROM paypal_items i JOIN rail_batch_entries e ON e.id = i.entry_id
    JOIN rail_batches b ON b.id = i.batch_id`;

const toItemRecord = (row: Record<string, unknown>): ItemRecord => ({
  entryId: String(row.entry_id),
  companyId: String(row.company_id),
  reference: String(row.reference),
  payoutId: String(row.payout_id),
  entryStatus: String(row.entry_status),
  batchId: String(row.batch_id),
  payoutBatchId: row.payout_batch_id === null ? null : String(row.payout_batch_id),
  payoutItemId: row.payout_item_id === null ? null : String(row.payout_item_id),
  transactionStatus: row.transaction_status === null ? null : String(row.transaction_status),
});

/** The item of a company sent under `reference` (PayPal's sender_item_id), or null. */
export async function findItemByReference(
  reader: SqlReader,
  companyId: string,
  reference: string,
): Promise<ItemRecord | null> {
  const { rows } = await reader.execute({
    sql: `${ITEM_SELECT} WHERE e.company_id = ? AND e.reference = ?`,
    args: [companyId, reference],
  });
  return rows[0] ? toItemRecord(rows[0]) : null;
}

/** The item of a payout's latest PayPal entry, or null. */
export async function findItemOfPayout(
  reader: SqlReader,
  payoutId: string,
): Promise<ItemRecord | null> {
  const { rows } = await reader.execute({
    sql: `${ITEM_SELECT} WHERE e.payout_id = ? ORDER BY e.created_at DESC, e.id DESC LIMIT 1`,
    args: [payoutId],
  });
  return rows[0] ? toItemRecord(rows[0]) : null;
}

/** Keeps what PayPal said of an item when asked. */
export async function recordItemState(
  tx: WriteTx,
  entryId: string,
  state: { payoutItemId: string; status: string; errorName: string | null },
  now: number,
): Promise<void> {
  await tx.execute({
    sql: `UPDATE paypal_items SET payout_item_id = ?, transaction_status = ?, error_name = ?,
            checked_at = ? WHERE entry_id = ?`,
    args: [state.payoutItemId, state.status, state.errorName, now, entryId],
  });
}

/** Whether any item riding the batch may still change in a way a poll must see. */
export async function batchHasOpenItems(reader: SqlReader, batchId: string): Promise<boolean> {
  const { rows } = await reader.execute({
    sql: `SELECT 1 FROM paypal_items i JOIN rail_batch_entries e ON e.id = i.entry_id
          WHERE i.batch_id = ? AND e.status = 'sent'
            AND coalesce(i.transaction_status, 'NEW') NOT IN
              ('SUCCESS', 'FAILED', 'RETURNED', 'BLOCKED', 'DENIED', 'REFUNDED', 'REVERSED')
          LIMIT 1`,
    args: [batchId],
  });
  return rows.length > 0;
}

/**
 * Moves an item to a new built batch of its own (sent again after the insurer's PayPal balance
 * fell short); its entry stays sent, its payout funds_sent. Returns the new batch's id.
 */
export async function rebatchItem(
  tx: WriteTx,
  item: ItemRecord,
  amountCents: number,
  now: number,
): Promise<string> {
  const batchId = newId("rb");
  await openBatch(tx, {
    id: batchId,
    companyId: item.companyId,
    rail: PAYPAL_RAIL,
    entryCount: 1,
    totalCents: amountCents,
    cutoffAt: now,
    createdAt: now,
  });
  await tx.execute({
    sql: `UPDATE paypal_items SET batch_id = ?, payout_item_id = NULL, transaction_status = NULL,
            error_name = NULL, checked_at = ? WHERE entry_id = ?`,
    args: [batchId, now, item.entryId],
  });
  return batchId;
}

/** The amount of an entry, in cents. */
export async function entryAmount(reader: SqlReader, entryId: string): Promise<number> {
  const { rows } = await reader.execute({
    sql: "SELECT amount_cents FROM rail_batch_entries WHERE id = ?",
    args: [entryId],
  });
  return Number(rows[0].amount_cents);
}

/** A verified webhook notice, recorded once per PayPal event id; false when it was already. */
export async function insertNotice(
  tx: WriteTx,
  notice: { id: string; companyId: string; eventType: string; resourceId: string },
  now: number,
): Promise<boolean> {
  const result = await tx.execute({
    sql: `INSERT INTO paypal_notices (id, company_id, event_type, resource_id, received_at)
          VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
    args: [notice.id, notice.companyId, notice.eventType, notice.resourceId, now],
  });
  return result.rowsAffected > 0;
}

/** A notice not yet acted on, or null. */
export async function loadOpenNotice(
  reader: SqlReader,
  noticeId: string,
): Promise<{ id: string; companyId: string; eventType: string; resourceId: string } | null> {
  const { rows } = await reader.execute({
    sql: `SELECT id, company_id, event_type, resource_id FROM paypal_notices
          WHERE id = ? AND processed_at IS NULL`,
    args: [noticeId],
  });
  if (!rows[0]) return null;
  return {
    id: String(rows[0].id),
    companyId: String(rows[0].company_id),
    eventType: String(rows[0].event_type),
    resourceId: String(rows[0].resource_id),
  };
}

export async function markNoticeProcessed(tx: WriteTx, noticeId: string, now: number) {
  await tx.execute({
    sql: "UPDATE paypal_notices SET processed_at = ? WHERE id = ?",
    args: [now, noticeId],
  });
}
