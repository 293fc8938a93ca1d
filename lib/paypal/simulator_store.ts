/**
 * The SQL of the sandbox's PayPal simulator (sandbox_paypal_batches, sandbox_paypal_items): what
 * it took, per company (its PayPal account) and sender_batch_id. It is PayPal's side of the seam,
 * so it commits in its own write unit, never in one of the job that called it: a batch taken is
 * kept even if the caller stops before recording the answer.
 */
import type { Database } from "../../db/client.ts";
import type { SqlReader, WriteTx } from "../../db/writer.ts";

/** An item as the simulator keeps it. */
export interface SimulatedItem {
  readonly payoutItemId: string;
  readonly payoutBatchId: string;
  readonly senderItemId: string;
  readonly recipientType: string;
  readonly recipientWallet: string;
  readonly receiver: string;
  readonly amountValue: string;
  readonly transactionStatus: string;
  readonly errorName: string | null;
  readonly createdAt: number;
}

/** An item to keep with its batch. */
export type ItemToKeep = Omit<SimulatedItem, "payoutItemId" | "payoutBatchId" | "createdAt">;

/**
 * Keeps a batch once per company and sender_batch_id; `items` are kept only with a new one. The
 * batch id (and each item's, by its place) come from the sender_batch_id. Returns the id of the
 * batch kept under that sender_batch_id and whether it was this call that kept it.
 */
export function keepBatchOnce(
  database: Database,
  batch: {
    readonly companyId: string;
    readonly senderBatchId: string;
    readonly payoutBatchId: string;
    readonly at: number;
  },
  items: readonly ItemToKeep[],
  /** Runs in the unit that keeps a new batch, with its items' ids in their order. */
  onTaken?: (tx: WriteTx, payoutItemIds: readonly string[]) => Promise<void>,
): Promise<{ payoutBatchId: string; taken: boolean }> {
  return database.writer.write(async (tx) => {
    const { rows } = await tx.execute({
      sql: `SELECT payout_batch_id FROM sandbox_paypal_batches
            WHERE company_id = ? AND sender_batch_id = ?`,
      args: [batch.companyId, batch.senderBatchId],
    });
    if (rows[0]) return { payoutBatchId: String(rows[0].payout_batch_id), taken: false };
    await tx.execute({
      sql: `INSERT INTO sandbox_paypal_batches
              (payout_batch_id, company_id, sender_batch_id, created_at) VALUES (?, ?, ?, ?)`,
      args: [batch.payoutBatchId, batch.companyId, batch.senderBatchId, batch.at],
    });
    for (const [index, item] of items.entries()) {
      await tx.execute({
        sql: `INSERT INTO sandbox_paypal_items
                (payout_item_id, payout_batch_id, company_id, position, sender_item_id,
                 recipient_type, recipient_wallet, receiver, amount_value, transaction_status,
                 error_name, created_at)
              VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        args: [
          `${batch.payoutBatchId}-${index + 1}`,
          batch.payoutBatchId,
          batch.companyId,
          index + 1,
          item.senderItemId,
          item.recipientType,
          item.recipientWallet,
          item.receiver,
          item.amountValue,
          item.transactionStatus,
          item.errorName,
          batch.at,
        ],
      });
    }
    await onTaken?.(tx, items.map((_, index) => `${batch.payoutBatchId}-${index + 1}`));
    return { payoutBatchId: batch.payoutBatchId, taken: true };
  });
}

const ITEM_SELECT = `SELECT payout_item_id, payout_batch_id, sender_item_id, recipient_type,
    recipient_wallet, receiver, amount_value, transaction_status, error_name, created_at
  FROM sandbox_paypal_items`;

const toItem = (row: Record<string, unknown>): SimulatedItem => ({
  payoutItemId: String(row.payout_item_id),
  payoutBatchId: String(row.payout_batch_id),
  senderItemId: String(row.sender_item_id),
  recipientType: String(row.recipient_type),
  recipientWallet: String(row.recipient_wallet),
  receiver: String(row.receiver),
  amountValue: String(row.amount_value),
  transactionStatus: String(row.transaction_status),
  errorName: row.error_name === null ? null : String(row.error_name),
  createdAt: Number(row.created_at),
});

/** A company's batch with its items in their order, or null. */
export async function loadSimulatedBatch(
  reader: SqlReader,
  companyId: string,
  payoutBatchId: string,
): Promise<{ senderBatchId: string; items: SimulatedItem[] } | null> {
  const { rows } = await reader.execute({
    sql: `SELECT sender_batch_id FROM sandbox_paypal_batches
          WHERE company_id = ? AND payout_batch_id = ?`,
    args: [companyId, payoutBatchId],
  });
  if (!rows[0]) return null;
  const items = await reader.execute({
    sql: `${ITEM_SELECT} WHERE payout_batch_id = ? ORDER BY position`,
    args: [payoutBatchId],
  });
  return { senderBatchId: String(rows[0].sender_batch_id), items: items.rows.map(toItem) };
}

/** A company's item, or null. */
export async function loadSimulatedItem(
  reader: SqlReader,
  companyId: string,
  payoutItemId: string,
): Promise<SimulatedItem | null> {
  const { rows } = await reader.execute({
    sql: `${ITEM_SELECT} WHERE company_id = ? AND payout_item_id = ?`,
    args: [companyId, payoutItemId],
  });
  return rows[0] ? toItem(rows[0]) : null;
}

/** Sets an item's state (a cancelled item is RETURNED); returns it. */
export async function setSimulatedItemState(
  database: Database,
  companyId: string,
  payoutItemId: string,
  status: string,
  /** What else the change's unit writes (the webhook PayPal will send of it). */
  changed: (tx: WriteTx) => Promise<void> = () => Promise.resolve(),
): Promise<SimulatedItem> {
  await database.writer.write(async (tx) => {
    await tx.execute({
      sql: `UPDATE sandbox_paypal_items SET transaction_status = ?, error_name = NULL
            WHERE company_id = ? AND payout_item_id = ?`,
      args: [status, companyId, payoutItemId],
    });
    await changed(tx);
  });
  const item = await loadSimulatedItem(database.readClient, companyId, payoutItemId);
  if (!item) throw new Error(`the PayPal simulator has no item ${payoutItemId} of ${companyId}`);
  return item;
}

/** Whether a company of this database exists: the simulator's accounts are its companies. */
export async function companyExists(reader: SqlReader, companyId: string): Promise<boolean> {
  const { rows } = await reader.execute({
    sql: "SELECT 1 FROM companies WHERE id = ?",
    args: [companyId],
  });
  return rows.length > 0;
}
