/**
 * The SQL of the ACH pipeline: claiming a company's queued entries into a file with set-based
 * statements (a catastrophe day's 10,000 entries in a handful of statements, so the one writer is
 * held briefly), trace sequences per ODFI, the file ID modifiers of a day, the ach_files rows,
 * and what a file's build reads of its entries' payouts and fundings.
 */
import type { SqlReader, WriteTx } from "../../db/writer.ts";
import { columnsOf, rowMapper } from "../../db/rows.ts";
import { achFiles } from "../../db/schema.ts";
import { scheduleJob } from "../../db/scheduler_store.ts";
import { insertQueuedEntry, type NewBatchEntry } from "../rails/batch.ts";
import { STALE_ENTRY } from "../rails/engine.ts";
import type { CutoffSlot } from "./cutoffs.ts";
import type { FileEntry } from "./file_model.ts";
import type { SecretBox } from "../platform/crypto.ts";

/** The rail name of ACH in rail_batches and rail_batch_entries. */
export const ACH_RAIL = "ach";

/** The engine's jobs of ACH files: their transmission and the end of their window. */
export const ACH_BATCH_JOBS = { transmit: "rail.transmit", windowClose: "rail.window_close" };

/**
 * Queues an entry (a payout's credit, a funding's debit) in the caller's unit, and makes sure a
 * cutoff will take it.
 */
export async function queueAchEntry(tx: WriteTx, entry: NewBatchEntry, now: number): Promise<void> {
  await insertQueuedEntry(tx, ACH_RAIL, entry, now);
  await ensureCutoffPlanned(tx, entry.companyId, now);
}

/**
 * Schedules the company's next ACH cutoff unless one is pending and not yet running. The cutoff's
 * time needs the company's bank settings, which are sealed, and a queueing unit may not hold the
 * key (a funding's request), so the job is first due now without a slot: it then finds its
 * cutoff and schedules itself there (lib/ach/jobs.ts).
 */
export async function ensureCutoffPlanned(
  tx: WriteTx,
  companyId: string,
  now: number,
): Promise<void> {
  const { rows } = await tx.execute({
    sql: `SELECT 1 FROM scheduled_jobs
          WHERE company_id = ? AND done_at IS NULL AND kind = 'rail.cutoff' AND subject_id = ?
            AND lease_until IS NULL
          LIMIT 1`,
    args: [companyId, ACH_RAIL],
  });
  if (rows.length > 0) return;
  await scheduleCutoff(tx, companyId, now, null, now);
}

/** Schedules a cutoff job: at its slot, or (without one) due at once to find its slot. */
export async function scheduleCutoff(
  tx: WriteTx,
  companyId: string,
  dueAt: number,
  slot: CutoffSlot | null,
  now: number,
): Promise<void> {
  await scheduleJob(tx, {
    companyId,
    kind: "rail.cutoff",
    subjectId: ACH_RAIL,
    dueAt,
    payload: slot === null ? {} : { slot },
  }, now);
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
 * Which queued entries a cutoff takes: the oldest first (in the order they were queued), at most
 * `limit`, none over `maxCents`.
 */
interface ClaimScope {
  readonly companyId: string;
  readonly maxCents: number | null;
  readonly limit: number;
}

const ELIGIBLE = `SELECT id, amount_cents, created_at, rowid AS queued_order
  FROM rail_batch_entries
  WHERE company_id = ? AND rail = ? AND status = 'queued' AND batch_id IS NULL
    AND (? IS NULL OR amount_cents <= ?)
  ORDER BY created_at, rowid LIMIT ?`;

const eligibleArgs = (scope: ClaimScope) => [
  scope.companyId,
  ACH_RAIL,
  scope.maxCents,
  scope.maxCents,
  scope.limit,
];

/**
 * How many queued entries a cutoff would take and their total (some may prove stale when claimed),
 * and how many wait in all.
 */
export async function measureQueue(
  tx: WriteTx,
  scope: ClaimScope,
): Promise<{ count: number; totalCents: number; queued: number }> {
  const { rows } = await tx.execute({
    sql: `SELECT count(*) AS n, coalesce(sum(amount_cents), 0) AS total FROM (${ELIGIBLE})`,
    args: eligibleArgs(scope),
  });
  const queued = await tx.execute({
    sql: `SELECT count(*) AS n FROM rail_batch_entries
          WHERE company_id = ? AND rail = ? AND status = 'queued' AND batch_id IS NULL`,
    args: [scope.companyId, ACH_RAIL],
  });
  return {
    count: Number(rows[0].n),
    totalCents: Number(rows[0].total),
    queued: Number(queued.rows[0].n),
  };
}

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
 * Claims the next page of the company's queue into the batch: of the oldest `scope.limit`
 * eligible entries, those whose payout or funding no longer waits for them (canceled, or queued
 * again under a newer reference) are voided, and the others go into the batch in queue order,
 * each with the next trace (the ODFI and `firstSequence` onwards) and the file's effective date.
 * Answers how many entries the page looked at and how many it claimed.
 */
export async function claimQueuePage(
  tx: WriteTx,
  scope: ClaimScope,
  claim: { batchId: string; odfi: string; firstSequence: number; effectiveDate: string },
): Promise<{ seen: number; claimed: number }> {
  const { rows } = await tx.execute({
    sql: `SELECT e.id, ${STALE_ENTRY} AS stale
          FROM (${ELIGIBLE}) AS q JOIN rail_batch_entries e ON e.id = q.id
          ORDER BY q.created_at, q.queued_order`,
    args: eligibleArgs(scope),
  });
  const stale = rows.filter((row) => Number(row.stale) === 1).map((row) => String(row.id));
  const fresh = rows.filter((row) => Number(row.stale) !== 1).map((row) => String(row.id));
  if (stale.length > 0) {
    await tx.execute({
      sql: `UPDATE rail_batch_entries SET status = 'voided'
            WHERE id IN (SELECT value FROM json_each(?))`,
      args: [JSON.stringify(stale)],
    });
  }
  if (fresh.length > 0) {
    await tx.execute({
      sql: `UPDATE rail_batch_entries SET batch_id = ?, status = 'batched', effective_date = ?,
              trace_number = ? || printf('%07d', ? + j.key)
            FROM json_each(?) AS j WHERE rail_batch_entries.id = j.value`,
      args: [
        claim.batchId,
        claim.effectiveDate,
        claim.odfi,
        claim.firstSequence,
        JSON.stringify(fresh),
      ],
    });
  }
  return { seen: rows.length, claimed: fresh.length };
}

/** How many entries a batch holds so far, and the last trace sequence they took. */
export async function claimedSoFar(
  tx: WriteTx,
  batchId: string,
): Promise<{ count: number; lastSequence: number }> {
  const { rows } = await tx.execute({
    sql: `SELECT count(*) AS n, max(trace_number) AS last FROM rail_batch_entries
          WHERE batch_id = ?`,
    args: [batchId],
  });
  const last = rows[0].last === null ? null : String(rows[0].last);
  return { count: Number(rows[0].n), lastSequence: last === null ? 0 : Number(last.slice(8)) };
}

/**
 * Ends a batch's claim: its count and total become what its entries say (entries that proved
 * stale were voided instead), and a batch left without entries goes, its file never built.
 * Answers how many entries it holds.
 */
export async function closeClaim(tx: WriteTx, batchId: string): Promise<number> {
  const { rows } = await tx.execute({
    sql: `SELECT count(*) AS n, coalesce(sum(amount_cents), 0) AS total FROM rail_batch_entries
          WHERE batch_id = ?`,
    args: [batchId],
  });
  const entries = Number(rows[0].n);
  await tx.execute(
    entries === 0 ? { sql: "DELETE FROM rail_batches WHERE id = ?", args: [batchId] } : {
      sql: "UPDATE rail_batches SET entry_count = ?, total_cents = ? WHERE id = ?",
      args: [entries, Number(rows[0].total), batchId],
    },
  );
  return entries;
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

/** A built ACH batch of this cutoff whose file was never recorded (its build was interrupted). */
export async function findUnfinishedBatch(
  tx: WriteTx,
  companyId: string,
  cutoffAt: number,
): Promise<{ id: string; fileName: string; entryCount: number } | null> {
  const { rows } = await tx.execute({
    sql: `SELECT b.id, b.rail_reference, b.entry_count FROM rail_batches b
          WHERE b.company_id = ? AND b.rail = ? AND b.cutoff_at = ? AND b.status = 'built'
            AND b.error IS NULL AND NOT EXISTS (SELECT 1 FROM ach_files f WHERE f.batch_id = b.id)
          LIMIT 1`,
    args: [companyId, ACH_RAIL, cutoffAt],
  });
  return rows[0]
    ? {
      id: String(rows[0].id),
      fileName: String(rows[0].rail_reference),
      entryCount: Number(rows[0].entry_count),
    }
    : null;
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
const toAchFile = rowMapper({
  batchId: file.batchId,
  companyId: file.companyId,
  immediateOrigin: file.immediateOrigin,
  immediateDestination: file.immediateDestination,
  bankDate: file.bankDate,
  fileIdModifier: file.fileIdModifier,
  effectiveDate: file.effectiveDate,
  cutoffKind: file.cutoffKind,
  windowEndsAt: file.windowEndsAt,
  contentSealed: file.contentSealed,
  sha256: file.sha256,
  byteSize: file.byteSize,
  entryHash: file.entryHash,
  creditTotalCents: file.creditTotalCents,
  debitTotalCents: file.debitTotalCents,
  entryCount: file.entryCount,
  fileName: file.fileName,
  approvalId: file.approvalId,
  createdAt: file.createdAt,
});

/** A file's content sealed for ach_files: it holds full account numbers. */
export async function sealFileContent(secretBox: SecretBox, content: string): Promise<string> {
  return await secretBox.sealText(content);
}

/** The plain content of ach_files.content_sealed. */
export async function openFileContent(secretBox: SecretBox, sealed: string): Promise<string> {
  return await secretBox.openText(sealed);
}

/** An ACH file's row, or null. */
export async function loadAchFile(reader: SqlReader, batchId: string): Promise<AchFileRow | null> {
  const { rows } = await reader.execute({
    sql: `SELECT ${toAchFile.columns.join(", ")} FROM ach_files WHERE batch_id = ?`,
    args: [batchId],
  });
  return rows[0] ? toAchFile(rows[0]) : null;
}

/** Keeps a built file; immutable from here on, but for the approval its release may wait for. */
export async function insertAchFile(tx: WriteTx, row: AchFileRow): Promise<void> {
  await tx.db.insert(achFiles).values(row);
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

/** The references of a transmitted file's entries still sent (neither settled nor returned). */
export async function sentReferences(
  reader: SqlReader,
  batchId: string,
  limit: number,
): Promise<string[]> {
  const { rows } = await reader.execute({
    sql: `SELECT reference FROM rail_batch_entries WHERE batch_id = ? AND status = 'sent'
          ORDER BY trace_number LIMIT ?`,
    args: [batchId, limit],
  });
  return rows.map((row) => String(row.reference));
}
