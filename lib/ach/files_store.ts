/**
 * The SQL of the ACH pipeline: the traces of the entries a cutoff claims (set-based, a page in one
 * statement, so the one writer is held briefly), trace sequences per ODFI, the file ID modifiers of a day, the ach_files rows,
 * and what a file's build reads of its entries' payouts and fundings.
 */
import type { SqlReader, WriteTx } from "../../db/writer.ts";
import { columnsOf, rowMapper } from "../../db/rows.ts";
import { achFiles } from "../../db/schema.ts";
import { insertQueuedEntry, type NewBatchEntry } from "../rails/batch.ts";
import { ensureCutoffPlanned } from "../rails/cutoff.ts";
import type { FileEntry } from "./file_model.ts";
import type { SecretBox } from "../platform/crypto.ts";

/** The rail name of ACH in rail_batches and rail_batch_entries. */
export const ACH_RAIL = "ach";

/** The engine's jobs of ACH files: their transmission and the end of their window. */
export const ACH_BATCH_JOBS = { transmit: "rail.transmit", windowClose: "rail.window_close" };

/** The ACH rail's cutoff job (per company): claims the queue into a file at each cutoff. */
export const ACH_CUTOFF_JOB = "rail.cutoff";

/** The ACH rail's cutoff as the engine plans and runs it. */
export const ACH_CUTOFF = {
  cutoffJob: ACH_CUTOFF_JOB,
  entryRail: ACH_RAIL,
  batchRail: ACH_RAIL,
  label: "ACH file",
  jobs: ACH_BATCH_JOBS,
};

/**
 * Queues an entry (a payout's credit, a funding's debit) in the caller's unit, and makes sure a
 * cutoff will take it.
 */
export async function queueAchEntry(tx: WriteTx, entry: NewBatchEntry, now: number): Promise<void> {
  await insertQueuedEntry(tx, ACH_RAIL, entry, now);
  await ensureAchCutoffPlanned(tx, entry.companyId, now);
}

/**
 * Schedules the company's next ACH cutoff unless one is pending and not yet running. The cutoff's
 * time needs the company's bank settings, which are sealed, and a queueing unit may not hold the
 * key (a funding's request), so the job is first due now without a cutoff: it then finds its
 * cutoff and schedules itself there (lib/rails/cutoff.ts).
 */
export function ensureAchCutoffPlanned(tx: WriteTx, companyId: string, now: number): Promise<void> {
  return ensureCutoffPlanned(tx, ACH_CUTOFF, companyId, now);
}

/** Traces carry a 7-digit sequence per ODFI; it starts again at 1 after 9,999,999. */
const TRACE_SEQUENCE_MAX = 9_999_999;

/**
 * How long a trace stays the name of its entry: a return or a notice of change may name an entry
 * this long after it was queued (the longest return window, 60 days after settlement, with room).
 * An entry still queued, in a file or sent keeps its trace whatever its age.
 */
export const TRACE_REUSE_AFTER_DAYS = 180;

const DAY_MS = 86_400_000;

/** Ranges a reservation tries before it gives up (each skips past a trace still in use). */
const TRACE_RANGE_TRIES_MAX = 64;

/**
 * Reserves `count` consecutive trace sequences of the ODFI and answers the first: the next ones,
 * or after 9,999,999 from 1 again, skipping past any trace a return could still name (an entry of
 * the last TRACE_REUSE_AFTER_DAYS, or one not settled yet), so a trace is unique per ODFI while it
 * names its entry, and a wrap never collides.
 */
export async function reserveTraceSequences(
  tx: WriteTx,
  odfi: string,
  count: number,
  now: number,
): Promise<number> {
  if (count > TRACE_SEQUENCE_MAX) {
    throw new Error(`${count} traces do not fit one ODFI's ${TRACE_SEQUENCE_MAX} sequences`);
  }
  const { rows } = await tx.execute({
    sql: "SELECT next_sequence FROM ach_trace_sequences WHERE odfi = ?",
    args: [odfi],
  });
  let first = rows[0] ? Number(rows[0].next_sequence) : 1;
  for (let tries = 0;; tries++) {
    if (first + count - 1 > TRACE_SEQUENCE_MAX) first = 1;
    const inUse = await lastTraceInUse(tx, odfi, first, first + count - 1, now);
    if (inUse === null) break;
    if (tries === TRACE_RANGE_TRIES_MAX) {
      throw new Error(
        `no ${count} consecutive free traces of ODFI ${odfi} after ${tries} ranges: traces are in use up to ${inUse}`,
      );
    }
    first = inUse + 1;
  }
  await tx.execute({
    sql: `INSERT INTO ach_trace_sequences (odfi, next_sequence) VALUES (?, ?)
          ON CONFLICT (odfi) DO UPDATE SET next_sequence = excluded.next_sequence`,
    args: [odfi, first + count],
  });
  return first;
}

/** The last sequence from `first` to `last` whose trace still names an entry, or null. */
async function lastTraceInUse(
  tx: WriteTx,
  odfi: string,
  first: number,
  last: number,
  now: number,
): Promise<number | null> {
  const trace = (sequence: number) => `${odfi}${String(sequence).padStart(7, "0")}`;
  const { rows } = await tx.execute({
    sql: `SELECT max(trace_number) AS trace FROM rail_batch_entries
          WHERE trace_number BETWEEN ? AND ?
            AND (created_at > ? OR status IN ('queued', 'batched', 'sent'))`,
    args: [trace(first), trace(last), now - TRACE_REUSE_AFTER_DAYS * DAY_MS],
  });
  return rows[0].trace === null ? null : Number(String(rows[0].trace).slice(8));
}

/**
 * Gives a claimed page of entries, in queue order, the next traces of the batch's reserved range
 * (the ODFI and `firstSequence` onwards) and the file's effective date.
 */
export async function giveTraces(
  tx: WriteTx,
  entryIds: readonly string[],
  page: { odfi: string; firstSequence: number; effectiveDate: string },
): Promise<void> {
  await tx.execute({
    sql: `UPDATE rail_batch_entries SET effective_date = ?,
            trace_number = ? || printf('%07d', ? + j.key)
          FROM json_each(?) AS j WHERE rail_batch_entries.id = j.value`,
    args: [page.effectiveDate, page.odfi, page.firstSequence, JSON.stringify(entryIds)],
  });
}

/**
 * How many ACH batches were named for the day with this file-name prefix: the index of the next
 * file ID modifier. Voided files count: the bank may have seen their names.
 */
export async function countFilesNamed(tx: WriteTx, prefix: string): Promise<number> {
  const { rows } = await tx.execute({
    sql: `SELECT count(*) AS n FROM rail_batches WHERE rail = ? AND rail_reference LIKE ? || '%'`,
    args: [ACH_RAIL, prefix],
  });
  return Number(rows[0].n);
}

/** What a file's build reads of one entry: the entry and its payout's or funding's details. */
export interface EntryForFile extends FileEntry {
  readonly reference: string;
  /** The payout's method details (JSON as stored), null for a debit. */
  readonly methodDetails: string | null;
  /** What the database says the entry moves: a payout's amount less its payee fee, a funding's amount. */
  readonly expectedCents: number;
}

/** The batch's entries, in trace order, with what the file needs of each payout. */
export async function entriesForFile(
  reader: SqlReader,
  batchId: string,
): Promise<EntryForFile[]> {
  const { rows } = await reader.execute({
    sql:
      `SELECT e.id, e.reference, e.direction, e.amount_cents, e.trace_number, e.payout_id, e.funding_id,
              p.method_details, p.payee_type_id, py.type AS payee_type,
              coalesce(nullif(trim(coalesce(p.first_name, '') || ' ' || coalesce(p.last_name, '')), ''),
                       py.name, p.payee_uuid, '') AS payee_name,
              coalesce(p.amount_cents - p.payee_fee_cents, f.amount_cents) AS expected_cents
          FROM rail_batch_entries e
            LEFT JOIN payouts p ON p.id = e.payout_id
            LEFT JOIN payees py ON py.id = p.payee_id
            LEFT JOIN fundings f ON f.id = e.funding_id
          WHERE e.batch_id = ? AND e.status = 'batched'
          ORDER BY e.trace_number`,
    args: [batchId],
  });
  return rows.map((row) => ({
    id: String(row.id),
    reference: String(row.reference),
    direction: row.direction === "debit" ? "debit" : "credit",
    amountCents: Number(row.amount_cents),
    traceNumber: String(row.trace_number),
    payoutId: row.payout_id === null ? null : String(row.payout_id),
    fundingId: row.funding_id === null ? null : String(row.funding_id),
    methodDetails: row.method_details === null ? null : String(row.method_details),
    payeeTypeId: row.payee_type_id === null ? null : Number(row.payee_type_id),
    payeeType: row.payee_type === "business"
      ? "business"
      : row.payee_type === "individual"
      ? "individual"
      : null,
    payeeName: String(row.payee_name),
    expectedCents: Number(row.expected_cents),
  }));
}

/** What the file says of one entry, kept on its row. */
export interface EntryFacts {
  readonly id: string;
  readonly receivingDfi: string;
  readonly accountLastFour: string;
  readonly transactionCode: number;
  readonly entryClass: string;
}

/** Keeps a page of entries' facts (a JSON array of EntryFacts) in one statement. */
export async function recordEntryFacts(tx: WriteTx, factsJson: string): Promise<void> {
  await tx.execute({
    sql: `UPDATE rail_batch_entries SET receiving_dfi = j.value ->> '$.receivingDfi',
            account_last_four = j.value ->> '$.accountLastFour',
            transaction_code = j.value ->> '$.transactionCode',
            entry_class = j.value ->> '$.entryClass'
          FROM json_each(?) AS j WHERE rail_batch_entries.id = j.value ->> '$.id'`,
    args: [factsJson],
  });
}

/**
 * Keeps the sandbox test accounts a file used on their payouts, as entered details are kept: a
 * page (a JSON array of {payoutId, routingNumber, accountSealed}) in one statement.
 */
export async function recordSandboxAccounts(tx: WriteTx, accountsJson: string): Promise<void> {
  await tx.execute({
    sql: `UPDATE payouts SET method_details = json_set(coalesce(method_details, '{}'),
            '$.routing_number', j.value ->> '$.routingNumber', '$.account_type', 'checking',
            '$.account_sealed', j.value ->> '$.accountSealed')
          FROM json_each(?) AS j WHERE payouts.id = j.value ->> '$.payoutId'`,
    args: [accountsJson],
  });
}

export type AchFileRow = typeof achFiles.$inferSelect;

const file = columnsOf(achFiles);
const fileSummaryColumns = {
  batchId: file.batchId,
  companyId: file.companyId,
  immediateOrigin: file.immediateOrigin,
  immediateDestination: file.immediateDestination,
  bankDate: file.bankDate,
  fileIdModifier: file.fileIdModifier,
  effectiveDate: file.effectiveDate,
  cutoffKind: file.cutoffKind,
  windowEndsAt: file.windowEndsAt,
  sha256: file.sha256,
  byteSize: file.byteSize,
  entryHash: file.entryHash,
  creditTotalCents: file.creditTotalCents,
  debitTotalCents: file.debitTotalCents,
  entryCount: file.entryCount,
  fileName: file.fileName,
  approvalId: file.approvalId,
  createdAt: file.createdAt,
  contentPieces: file.contentPieces,
};
const toAchFile = rowMapper({ ...fileSummaryColumns, contentSealed: file.contentSealed });
const toAchFileSummary = rowMapper(fileSummaryColumns);

/** A file's content sealed for ach_files: it holds full account numbers. */
export async function sealFileContent(secretBox: SecretBox, content: string): Promise<string> {
  return await secretBox.sealText(content);
}

/** The plain content of ach_files.content_sealed. */
export async function openFileContent(secretBox: SecretBox, sealed: string): Promise<string> {
  return await secretBox.openText(sealed);
}

/** An ACH file's row, or null; its sealed content whole, wherever it is kept. */
export async function loadAchFile(reader: SqlReader, batchId: string): Promise<AchFileRow | null> {
  const { rows } = await reader.execute({
    sql: `SELECT ${toAchFile.columns.join(", ")} FROM ach_files WHERE batch_id = ?`,
    args: [batchId],
  });
  if (!rows[0]) return null;
  const row = toAchFile(rows[0]);
  if (row.contentPieces === null) return row;
  const pieces = await reader.execute({
    sql: "SELECT content FROM ach_file_pieces WHERE batch_id = ? AND part < ? ORDER BY part",
    args: [batchId, row.contentPieces],
  });
  if (pieces.rows.length !== row.contentPieces) {
    throw new Error(
      `ACH batch ${batchId}'s file has ${pieces.rows.length} of its ${row.contentPieces} pieces`,
    );
  }
  return { ...row, contentSealed: pieces.rows.map((piece) => String(piece.content)).join("") };
}

/**
 * The most of a file's sealed content one write unit keeps: a catastrophe day's 1.25 MB in one
 * commit wrote and synced about 300 pages on the service's thread (14 to 27 ms).
 */
export const ACH_FILE_PIECE_CHARS = 128 * 1024;

/** A sealed content cut in pieces of at most `pieceChars` characters (one piece when empty). */
export function filePiecesOf(sealed: string, pieceChars = ACH_FILE_PIECE_CHARS): string[] {
  const pieces: string[] = [];
  for (let at = 0; at < sealed.length || pieces.length === 0; at += pieceChars) {
    pieces.push(sealed.slice(at, at + pieceChars));
  }
  return pieces;
}

/**
 * Keeps one piece of a file's sealed content; the first also drops the pieces of an earlier run
 * beyond this one's count, so a build run again after a crash leaves only its own.
 */
export async function keepFilePiece(
  tx: WriteTx,
  batchId: string,
  piece: { readonly part: number; readonly count: number; readonly content: string },
): Promise<void> {
  if (piece.part === 0) {
    await tx.execute({
      sql: "DELETE FROM ach_file_pieces WHERE batch_id = ? AND part >= ?",
      args: [batchId, piece.count],
    });
  }
  await tx.execute({
    sql: "INSERT OR REPLACE INTO ach_file_pieces (batch_id, part, content) VALUES (?, ?, ?)",
    args: [batchId, piece.part, piece.content],
  });
}

/** How many of the pieces 0 to count - 1 of a file are kept. */
async function filePiecesKept(tx: WriteTx, batchId: string, count: number): Promise<number> {
  const { rows } = await tx.execute({
    sql: "SELECT count(*) AS n FROM ach_file_pieces WHERE batch_id = ? AND part < ?",
    args: [batchId, count],
  });
  return Number(rows[0].n);
}

/** A file's row without its content: a catastrophe day's is about a megabyte, read for nothing. */
export type AchFileSummary = Omit<AchFileRow, "contentSealed">;

/** An ACH file's row without its content, or null. */
export async function loadAchFileSummary(
  reader: SqlReader,
  batchId: string,
): Promise<AchFileSummary | null> {
  const { rows } = await reader.execute({
    sql: `SELECT ${toAchFileSummary.columns.join(", ")} FROM ach_files WHERE batch_id = ?`,
    args: [batchId],
  });
  return rows[0] ? toAchFileSummary(rows[0]) : null;
}

/**
 * Keeps a built file whose sealed content is kept in `contentPieces` pieces (keepFilePiece);
 * immutable from here on, but for the approval its release may wait for. Answers why it was
 * refused (a piece missing), or null.
 */
export async function insertAchFile(
  tx: WriteTx,
  row: Omit<AchFileRow, "contentSealed" | "contentPieces"> & { readonly contentPieces: number },
): Promise<string | null> {
  const kept = await filePiecesKept(tx, row.batchId, row.contentPieces);
  if (kept !== row.contentPieces) {
    return `the file's content has ${kept} of its ${row.contentPieces} pieces kept`;
  }
  await tx.db.insert(achFiles).values({ ...row, contentSealed: "" });
  return null;
}

/** Names the approval a file's release waits for. */
export async function setFileApproval(
  tx: WriteTx,
  batchId: string,
  approvalId: string,
): Promise<void> {
  await tx.execute({
    sql: "UPDATE ach_files SET approval_id = ? WHERE batch_id = ?",
    args: [approvalId, batchId],
  });
}

/** The fundings a file debits become available when its return window closes, unless returned. */
export async function setFundingsExpectedAt(
  tx: WriteTx,
  batchId: string,
  availableAt: number,
): Promise<void> {
  await tx.execute({
    sql: `UPDATE fundings SET expected_available_at = ? WHERE id IN
            (SELECT funding_id FROM rail_batch_entries WHERE batch_id = ? AND funding_id IS NOT NULL)`,
    args: [availableAt, batchId],
  });
}

/** Whether the company has notices of change on record (then each entry's account is looked up). */
export async function hasCorrections(reader: SqlReader, companyId: string): Promise<boolean> {
  const { rows } = await reader.execute({
    sql: "SELECT 1 FROM ach_corrections WHERE company_id = ? LIMIT 1",
    args: [companyId],
  });
  return rows.length > 0;
}
