/**
 * ACH file rows written straight into a database, for tests of what the API and the CLI show of
 * files: a rail_batches row, its ach_files row and its entries, as the pipeline would leave them.
 */
import type { Database } from "../db/client.ts";
import { filePiecesOf } from "../lib/ach/files_store.ts";
import { newId } from "../lib/platform/keys.ts";

export interface FileEntryRow {
  readonly payoutId?: string;
  readonly fundingId?: string;
  readonly amountCents: number;
  readonly trace: string;
  readonly lastFour: string;
  readonly status?: "batched" | "sent" | "completed" | "failed" | "voided";
  readonly returnCode?: string;
}

export interface FileRow {
  readonly companyId: string;
  readonly status: "built" | "transmitting" | "transmitted" | "in_doubt" | "voided";
  readonly effectiveDate: string;
  readonly createdAt: number;
  readonly transmittedAt?: number;
  readonly entries: readonly FileEntryRow[];
  /** The SHA-256 of the plain content, and the content as the caller sealed it. */
  readonly sha256?: string;
  readonly contentSealed?: string;
  readonly modifier?: string;
}

const MODIFIERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/** Inserts one file with its entries; answers its id. */
export async function insertAchFile(database: Database, file: FileRow): Promise<string> {
  const id = newId("rbt");
  const credits = file.entries.filter((e) => e.payoutId !== undefined);
  const debits = file.entries.filter((e) => e.fundingId !== undefined);
  const sum = (rows: readonly FileEntryRow[]) => rows.reduce((t, e) => t + e.amountCents, 0);
  await database.writer.write(async (tx) => {
    // File ID modifiers are unique per origin, destination and day: A, B, … in insertion order.
    const { rows } = await tx.execute("SELECT count(*) AS n FROM ach_files");
    const modifier = file.modifier ?? MODIFIERS[Number(rows[0].n)];
    await tx.execute({
      sql: `INSERT INTO rail_batches (id, company_id, rail, status, entry_count, total_cents,
              cutoff_at, rail_reference, transmitted_at, created_at)
            VALUES (?, ?, 'ach', ?, ?, ?, ?, NULL, ?, ?)`,
      args: [
        id,
        file.companyId,
        file.status,
        file.entries.length,
        sum(credits) + sum(debits),
        file.createdAt,
        file.transmittedAt ?? null,
        file.createdAt,
      ],
    });
    await tx.execute({
      sql: `INSERT INTO ach_files (batch_id, company_id, immediate_origin, immediate_destination,
              bank_date, file_id_modifier, effective_date, cutoff_kind, window_ends_at,
              content_sealed, sha256, byte_size, entry_hash, credit_total_cents,
              debit_total_cents, entry_count, file_name, approval_id, created_at)
            VALUES (?, ?, '1234567890', ' 021000021', ?, ?, ?, 'next_day', ?, ?, ?, 940,
              '0000000000', ?, ?, ?, ?, NULL, ?)`,
      args: [
        id,
        file.companyId,
        new Date(file.createdAt).toISOString().slice(0, 10),
        modifier,
        file.effectiveDate,
        file.createdAt + 3_600_000,
        file.contentSealed ?? "sealed",
        file.sha256 ?? "ab".repeat(32),
        sum(credits),
        sum(debits),
        file.entries.length,
        `ACH_${id}.txt`,
        file.createdAt,
      ],
    });
    for (const entry of file.entries) {
      await tx.execute({
        sql: `INSERT INTO rail_batch_entries (id, company_id, rail, batch_id, payout_id, funding_id,
                direction, reference, amount_cents, status, trace_number, receiving_dfi,
                account_last_four, transaction_code, entry_class, effective_date, return_code,
                created_at)
              VALUES (?, ?, 'ach', ?, ?, ?, ?, ?, ?, ?, ?, '02100002', ?, ?, 'PPD', ?, ?, ?)`,
        args: [
          newId("rbe"),
          file.companyId,
          id,
          entry.payoutId ?? null,
          entry.fundingId ?? null,
          entry.payoutId ? "credit" : "debit",
          newId("ref"),
          entry.amountCents,
          entry.status ?? "batched",
          entry.trace,
          entry.lastFour,
          entry.payoutId ? 22 : 27,
          file.effectiveDate,
          entry.returnCode ?? null,
          file.createdAt,
        ],
      });
    }
  });
  return id;
}

/** Replaces a kept file's content by `sealed`, cut into pieces as a build keeps it. */
export async function keepSealedInstead(
  database: Database,
  batchId: string,
  sealed: string,
): Promise<void> {
  const pieces = filePiecesOf(sealed);
  await database.writer.write(async (tx) => {
    await tx.execute({ sql: "DELETE FROM ach_file_pieces WHERE batch_id = ?", args: [batchId] });
    for (const [part, piece] of pieces.entries()) {
      await tx.execute({
        sql: "INSERT INTO ach_file_pieces (batch_id, part, content) VALUES (?, ?, ?)",
        args: [batchId, part, piece],
      });
    }
    await tx.execute({
      sql: "UPDATE ach_files SET content_pieces = ?, content_sealed = '' WHERE batch_id = ?",
      args: [pieces.length, batchId],
    });
  });
}
