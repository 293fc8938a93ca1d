/**
 * Imports of return and notice-of-change files (from the live SFTP inbound directory, the CLI,
 * the console, and the sandbox bank): a file already imported (by SHA-256) changes nothing; an
 * entry applies only when it matches an entry this service sent, by original trace, receiving DFI
 * and amount; unmatched or malformed entries are reported, never applied.
 *
 * The file is read and checked before any unit. A first unit claims the file's hash (the unique
 * index makes a second import of it, even a concurrent one, find the first); then its entries are
 * applied in file order, a bounded number a unit, so a later entry sees what an earlier one did (a
 * trace returned twice in one file is applied once). Each unit commits its entries' state changes,
 * ledger postings and events with the import's row (its count applied, its report, how far it
 * went), so the row is true at every commit; anything that throws undoes only its unit. While
 * the import is unfinished its row keeps the file's content, sealed, and a resume job is due when
 * its claim lapses: an import stopped between units is taken up where it stopped, with the scope it
 * was claimed with, by that job (from the kept content), by the sandbox bank's job that wrote the
 * file, or by the next import of the same file, and ends where the uninterrupted import would.
 */
import { desc, eq } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { achImports, railBatchEntries } from "../../db/schema.ts";
import { scheduleJob } from "../../db/scheduler_store.ts";
import type { WriteTx } from "../../db/writer.ts";
import type { Environment } from "../platform/config.ts";
import type { SecretBox } from "../platform/crypto.ts";
import { newId, sha256Hex } from "../platform/keys.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import { batchPayoutMoves, type PayoutRuntime, settleRailBatchEntry } from "../payouts/jobs.ts";
import { batchAdapterOf, type BatchRail, inUnits, sendTransmittedEntry } from "../rails/batch.ts";
import { resolveInDoubt } from "../rails/engine.ts";
import { loadPayout, recordLateReturn } from "../payouts/store.ts";
import { returnClearedAchFunding } from "../funding/store.ts";
import { recordEntryException } from "../rails/exceptions.ts";
import { parseReturnFile, readCorrection, type ReturnedEntry, type ReturnFile } from "./nacha.ts";
import {
  ACH_IMPORT_BYTES_MAX,
  ACH_IMPORT_ENTRIES_PER_UNIT_MAX,
  ACH_IMPORT_RESUME_JOB,
  ACH_RETURNS_IMPORT_LEASE_MS,
  decideImportedEntry,
  type ImportAction,
  type NotAppliedReason,
  type SentEntryFacts,
  type UnfinishedImport,
} from "./import_rules.ts";
import { payoutAccount, recordCorrection, tellPayeeDetailsUpdated } from "./corrections.ts";

export interface AchImportRequest {
  readonly content: Uint8Array;
  readonly fileName: string;
  readonly source: "sftp" | "cli" | "console" | "sandbox_bank";
  /** The operator who imported it (null for the service itself). */
  readonly importedBy: string | null;
  /**
   * The company whose bank delivered the file (its SFTP inbound directory): only that company's
   * entries match. Absent (an operator's import), an entry matches whichever company sent it.
   */
  readonly companyId?: string;
}

export interface AchImportReport {
  readonly importId: string;
  /** True when the same file (by SHA-256) was imported before: nothing changed. */
  readonly duplicate: boolean;
  readonly sha256: string;
  readonly returns: number;
  readonly corrections: number;
  readonly applied: number;
  /** Entries not applied, each with its trace (when readable) and why. */
  readonly notApplied: readonly { readonly trace: string | null; readonly reason: string }[];
}

export interface AchImportDeps {
  readonly database: Database;
  readonly environment: Environment;
  readonly secretBox: SecretBox;
  readonly runtime: PayoutRuntime;
  /** The environment's batch rails, from the composition root: an in-doubt file is resolved on them. */
  readonly rails: readonly BatchRail[];
}

/** An entry not applied, as the import's row and its log line keep it. */
interface NotApplied {
  readonly trace: string | null;
  readonly reason: NotAppliedReason;
  readonly code: string | null;
  readonly line: number;
  readonly message: string;
}

/**
 * Imports one file; refuses a file over 10 MiB or not NACHA, writing nothing. The file's entries
 * are applied ACH_IMPORT_ENTRIES_PER_UNIT_MAX a write unit after the unit that claims it, with
 * the event loop's turns between units (`inUnits`); an import stopped between two units is taken
 * up where it stopped by the next import of the same file.
 */
export async function importAchFile(
  deps: AchImportDeps,
  request: AchImportRequest,
  now: number,
): Promise<Result<AchImportReport, "file_too_large" | "malformed_file">> {
  const size = request.content.byteLength;
  if (size > ACH_IMPORT_BYTES_MAX) {
    return refuse(
      "file_too_large",
      `${request.fileName} is ${size} bytes; an imported ACH file is at most ${ACH_IMPORT_BYTES_MAX} bytes`,
      { field: "file", details: { bytes: size, limit_bytes: ACH_IMPORT_BYTES_MAX } },
    );
  }
  const parsed = parseReturnFile(new TextDecoder().decode(request.content));
  if (!parsed.ok) {
    return refuse("malformed_file", `${request.fileName} is not a NACHA file: ${parsed.message}`, {
      field: "file",
    });
  }
  const sha256 = await sha256Hex(request.content);
  const file = parsed.value;
  // Sealed outside the unit: a return file carries full account numbers.
  const contentSealed = await deps.secretBox.seal(request.content);
  const claim = await deps.database.writer.write((tx) =>
    claimImport(tx, request, file, sha256, now, contentSealed)
  );
  if (claim.kind === "duplicate") return ok(claim.outcome.report);
  const outcome = await applyInUnits(deps, claim, now);
  logNotApplied(request, sha256, outcome.notApplied);
  return ok(outcome.report);
}

/** Applies a claimed import's entries not gone through yet, a unit at a time, to its end. */
async function applyInUnits(
  deps: AchImportDeps,
  claim: Extract<ImportClaim, { kind: "applying" }>,
  now: number,
): Promise<ImportOutcome> {
  // The unit that went through the file's last entry (or found it done) keeps the row.
  const last: { finished: ImportRow | null } = { finished: null };
  await inUnits(
    deps.database.writer,
    ACH_IMPORT_ENTRIES_PER_UNIT_MAX,
    async (tx) => {
      const unit = await applyNextEntries(tx, deps, claim, ACH_IMPORT_ENTRIES_PER_UNIT_MAX, now);
      last.finished = unit.finished ?? last.finished;
      return unit.entries;
    },
    deps.runtime.apiBusy,
  );
  if (last.finished === null) throw new Error(`ACH import ${claim.importId} ended unfinished`);
  return outcomeOf(last.finished, false);
}

/**
 * Takes up an unfinished import from the content its row keeps, with the scope it was claimed
 * with, where it stopped; null when it is complete (or keeps no content). Outside every unit.
 */
export async function resumeAchImport(
  deps: AchImportDeps,
  importId: string,
  now: number,
): Promise<AchImportReport | null> {
  const { rows: [row] } = await deps.database.readClient.execute({
    sql: `SELECT company_id, source, file_name, sha256, content_sealed FROM ach_imports
           WHERE id = ? AND progress IS NOT NULL AND content_sealed IS NOT NULL`,
    args: [importId],
  });
  if (!row) return null;
  const content = await deps.secretBox.open(String(row.content_sealed));
  const parsed = parseReturnFile(new TextDecoder().decode(content));
  // The content was parsed before it was claimed: unreadable now, it was altered.
  if (!parsed.ok) throw new Error(`ACH import ${importId}: its kept content is not NACHA`);
  const companyId = row.company_id === null ? undefined : String(row.company_id);
  const outcome = await applyInUnits(
    deps,
    { kind: "applying", importId, file: parsed.value, companyId },
    now,
  );
  logNotApplied(
    { fileName: String(row.file_name), source: String(row.source) as AchImportRequest["source"] },
    String(row.sha256),
    outcome.notApplied,
  );
  return outcome.report;
}

interface ImportOutcome {
  readonly report: AchImportReport;
  readonly notApplied: readonly NotApplied[];
}

type ImportRow = typeof achImports.$inferSelect;

/** An unfinished import's progress (ach_imports.progress). */
interface ImportProgress {
  /** The file's entries gone through (applied or reported), in file order. */
  readonly entries_done: number;
  /** The companies whose sent entries they named (the import's company when it is one). */
  readonly companies: readonly string[];
}

/** What the claiming unit found: the file imported before, or an import to go on with. */
type ImportClaim =
  | { readonly kind: "duplicate"; readonly outcome: ImportOutcome }
  | {
    readonly kind: "applying";
    readonly importId: string;
    readonly file: ReturnFile;
    /** Only this company's entries match (the claim's, kept on the row while it is applied). */
    readonly companyId: string | undefined;
  };

const reportOf = (notApplied: readonly NotApplied[]) =>
  notApplied.map(({ trace, reason }) => ({ trace, reason }));

function outcomeOf(row: ImportRow, duplicate: boolean): ImportOutcome {
  const notApplied = JSON.parse(row.report) as NotApplied[];
  return {
    report: {
      importId: row.id,
      duplicate,
      sha256: row.sha256,
      returns: row.returnCount,
      corrections: row.correctionCount,
      applied: row.appliedCount,
      notApplied: reportOf(notApplied),
    },
    notApplied,
  };
}

/**
 * Claims the file's hash (the unique index makes a second import of it, even a concurrent one,
 * find this one) with its malformed records reported. A file whose import is complete is a
 * duplicate; one whose import stopped midway is taken up with the scope it was claimed with.
 * An import applied a unit at a time keeps its content (`contentSealed`) and schedules its resume
 * job, due when its claim lapses; one applied whole in the caller's unit needs neither.
 */
async function claimImport(
  tx: WriteTx,
  request: AchImportRequest,
  file: ReturnFile,
  sha256: string,
  now: number,
  contentSealed: string | null = null,
): Promise<ImportClaim> {
  const importId = newId("aci");
  const returns = file.entries.filter((entry) => entry.kind === "return").length;
  const malformed: NotApplied[] = file.problems.map((problem) => ({
    trace: null,
    reason: "malformed",
    code: null,
    line: problem.line,
    message: problem.message,
  }));
  const progress: ImportProgress = { entries_done: 0, companies: [] };
  const claimed = await tx.db.insert(achImports).values({
    id: importId,
    companyId: request.companyId ?? null,
    sha256,
    source: request.source,
    fileName: request.fileName,
    returnCount: returns,
    correctionCount: file.entries.length - returns,
    appliedCount: 0,
    report: JSON.stringify(malformed),
    importedBy: request.importedBy,
    importedAt: now,
    progress: JSON.stringify(progress),
    contentSealed,
  }).onConflictDoNothing({ target: achImports.sha256 }).returning({ id: achImports.id });
  if (claimed.length === 1) {
    if (contentSealed !== null) await scheduleResume(tx, importId, request.companyId, now);
    return { kind: "applying", importId, file, companyId: request.companyId };
  }
  const [earlier] = await tx.db.select().from(achImports).where(eq(achImports.sha256, sha256));
  if (earlier.progress === null) return { kind: "duplicate", outcome: outcomeOf(earlier, true) };
  return {
    kind: "applying",
    importId: earlier.id,
    file,
    companyId: earlier.companyId ?? undefined,
  };
}

/**
 * Schedules the import's resume job, due when its claim lapses. A job is a company's: an operator's
 * import, which names no company, runs in the sweep of the installation's first company (the
 * import keeps its own scope); with no company at all nothing could apply, and none is scheduled.
 */
async function scheduleResume(
  tx: WriteTx,
  importId: string,
  companyId: string | undefined,
  now: number,
): Promise<void> {
  const { rows: [first] } = companyId === undefined
    ? await tx.execute("SELECT id FROM companies ORDER BY created_at, id LIMIT 1")
    : { rows: [{ id: companyId }] };
  if (!first) return;
  await scheduleJob(tx, {
    companyId: String(first.id),
    kind: ACH_IMPORT_RESUME_JOB,
    subjectId: importId,
    dueAt: now + ACH_RETURNS_IMPORT_LEASE_MS,
  }, now);
}

/**
 * Goes through at most `limit` of the file's entries after those its import went through, in file
 * order (a later entry sees what an earlier one did: a trace returned twice in one file is applied
 * once), and records them on the import's row in the same unit: its count applied, its report and
 * its progress, or, with the last entry, its company and its end. Returns how many entries it went
 * through, and the row once the import is complete.
 */
async function applyNextEntries(
  tx: WriteTx,
  deps: AchImportDeps,
  claim: Extract<ImportClaim, { kind: "applying" }>,
  limit: number,
  now: number,
): Promise<{ entries: number; finished: ImportRow | null }> {
  const [row] = await tx.db.select().from(achImports).where(eq(achImports.id, claim.importId));
  if (row.progress === null) return { entries: 0, finished: row };
  const progress = JSON.parse(row.progress) as ImportProgress;
  const entries = claim.file.entries.slice(
    progress.entries_done,
    progress.entries_done + limit,
  );
  const notApplied = JSON.parse(row.report) as NotApplied[];
  const companies = new Set(progress.companies);
  let applied = 0;
  for (const entry of entries) {
    const named = {
      receivingDfi: entry.receivingDfi,
      amountCents: entry.kind === "return" ? entry.amountCents : null,
    };
    let sent = await findSentEntry(tx, entry.originalTraceNumber, claim.companyId, named);
    if (sent && await resolvedByReturn(tx, deps, sent.id, now)) {
      sent = await findSentEntry(tx, entry.originalTraceNumber, claim.companyId, named);
    }
    if (sent) companies.add(sent.companyId);
    const decided = decideImportedEntry(entry, sent);
    if (!decided.ok && decided.code === "entry_voided" && entry.kind === "return") {
      // The bank returned an entry of a file that was voided: it processed that file after all.
      await recordEntryException(
        tx,
        sent!.id,
        {
          kind: "failed",
          reason: entry.code,
          returnCode: entry.code,
        },
        "the bank returned an entry of a voided file: it may have paid the file's other entries too",
        now,
      );
    }
    const done = decided.ok
      ? await applyEntry(
        tx,
        deps,
        { entry, sent: sent!, action: decided.value, importId: claim.importId },
        now,
      )
      : decided;
    if (done.ok) {
      applied++;
    } else {
      notApplied.push({
        trace: entry.originalTraceNumber,
        reason: done.code,
        code: entry.code,
        line: entry.line,
        message: done.message,
      });
    }
  }
  const entriesDone = progress.entries_done + entries.length;
  const complete = entriesDone === claim.file.entries.length;
  notApplied.sort((a, b) => a.line - b.line);
  const change = {
    appliedCount: row.appliedCount + applied,
    report: JSON.stringify(notApplied),
    ...complete
      ? {
        companyId: claim.companyId ?? (companies.size === 1 ? [...companies][0] : null),
        progress: null,
        contentSealed: null,
      }
      : { progress: JSON.stringify({ entries_done: entriesDone, companies: [...companies] }) },
  };
  await tx.db.update(achImports).set(change).where(eq(achImports.id, claim.importId));
  // A complete import has nothing to resume: its job need not run.
  if (complete) {
    await tx.execute({
      sql: `UPDATE scheduled_jobs SET done_at = ? WHERE kind = ? AND subject_id = ?
              AND done_at IS NULL AND lease_until IS NULL`,
      args: [now, ACH_IMPORT_RESUME_JOB, claim.importId],
    });
  }
  return { entries: entries.length, finished: complete ? { ...row, ...change } : null };
}

/** Imports a file in the caller's unit (a preview's, an approval's): its claim and what is left. */
async function applyImport(
  tx: WriteTx,
  deps: AchImportDeps,
  input: { request: AchImportRequest; file: ReturnFile; sha256: string },
  now: number,
): Promise<ImportOutcome> {
  const claim = await claimImport(tx, input.request, input.file, input.sha256, now);
  if (claim.kind === "duplicate") return claim.outcome;
  const { finished } = await applyNextEntries(tx, deps, claim, input.file.entries.length, now);
  if (finished === null) throw new Error(`ACH import ${claim.importId} ended unfinished`);
  return outcomeOf(finished, false);
}

interface SentEntry extends SentEntryFacts {
  readonly id: string;
  readonly companyId: string;
  readonly reference: string;
  readonly payoutId: string | null;
  readonly fundingId: string | null;
}

/**
 * A return or notice naming an entry of an in-doubt file proves the bank has that file: the file
 * is resolved as transmitted in the import's unit (audited as the bank's answer), so the entry is
 * sent and its return applies as any other. Answers whether it resolved one.
 */
async function resolvedByReturn(
  tx: WriteTx,
  deps: AchImportDeps,
  entryId: string,
  now: number,
): Promise<boolean> {
  const { rows } = await tx.execute({
    sql: `SELECT b.id, b.rail FROM rail_batch_entries e JOIN rail_batches b ON b.id = e.batch_id
          WHERE e.id = ? AND b.status = 'in_doubt'`,
    args: [entryId],
  });
  if (!rows[0]) return false;
  const of = batchAdapterOf(
    { rails: deps.rails, moves: batchPayoutMoves(deps.runtime) },
    String(rows[0].rail),
  );
  if (!of) return false;
  const resolved = await resolveInDoubt(
    tx,
    of.engine,
    of.adapter,
    { operator: null, origin: "bank file naming the entry" },
    String(rows[0].id),
    "transmitted",
    now,
  );
  if (!resolved.ok) return false;
  // The resolution sends the file's first entries; the rest go a unit at a time after it.
  await sendTransmittedEntry(tx, of.engine.moves, entryId, now);
  return true;
}

/**
 * The entry this service sent under `trace` (of `companyId` when given), with its payout's state.
 * A trace may name an older entry too, from before its sequence wrapped: the entry with the
 * return's receiving DFI and amount is the one, the newest when several are.
 */
async function findSentEntry(
  tx: WriteTx,
  trace: string,
  companyId: string | undefined,
  named: { receivingDfi: string; amountCents: number | null },
): Promise<SentEntry | null> {
  const candidates = (await tx.db.select().from(railBatchEntries)
    .where(eq(railBatchEntries.traceNumber, trace))
    .orderBy(desc(railBatchEntries.createdAt), desc(railBatchEntries.id)))
    .filter((row) => companyId === undefined || row.companyId === companyId);
  const row = candidates.find((candidate) =>
    candidate.receivingDfi === named.receivingDfi &&
    (named.amountCents === null || candidate.amountCents === named.amountCents)
  ) ?? candidates[0];
  if (!row) return null;
  const payout = row.payoutId ? await loadPayout(tx, row.payoutId) : null;
  return {
    id: row.id,
    companyId: row.companyId,
    reference: row.reference,
    payoutId: row.payoutId,
    fundingId: row.fundingId,
    status: row.status,
    direction: row.direction,
    receivingDfi: row.receivingDfi,
    amountCents: row.amountCents,
    returnCode: row.returnCode,
    payoutStatus: payout?.status ?? null,
  };
}

/** Applies one matched entry; a refusal here (the payout or funding says no) is reported. */
async function applyEntry(
  tx: WriteTx,
  deps: AchImportDeps,
  matched: { entry: ReturnedEntry; sent: SentEntry; action: ImportAction; importId: string },
  now: number,
): Promise<Result<void, NotAppliedReason>> {
  const { entry, sent, action } = matched;
  switch (action) {
    case "return":
    case "debit_return": {
      // One path for both directions: the payout fails (retry or re-offer), the funding returns.
      const settled = await settleRailBatchEntry(
        tx,
        deps.runtime,
        sent.reference,
        { kind: "failed", reason: entry.code, returnCode: entry.code },
        now,
      );
      // The entry was read as sent in this unit, so the pipeline cannot refuse it.
      if (!settled.ok) throw new Error(`return of ${sent.reference}: ${settled.message}`);
      return ok(undefined);
    }
    case "debit_return_after_clear": {
      const returned = await returnClearedAchFunding(tx, sent.fundingId!, now);
      if (!returned.ok) return refuse("funding_not_cleared", returned.message);
      await tx.db.update(railBatchEntries).set({ returnCode: entry.code })
        .where(eq(railBatchEntries.id, sent.id));
      return ok(undefined);
    }
    case "late_return": {
      const returned = await recordLateReturn(tx, sent.payoutId!, entry.code, now);
      if (!returned.ok) {
        return refuse(
          returned.code === "already_returned" ? "already_returned" : "payout_not_completed",
          returned.message,
        );
      }
      await tx.db.update(railBatchEntries).set({ returnCode: entry.code })
        .where(eq(railBatchEntries.id, sent.id));
      return ok(undefined);
    }
    case "correction":
      return await applyCorrection(tx, deps, matched, now);
  }
}

async function applyCorrection(
  tx: WriteTx,
  deps: AchImportDeps,
  matched: { entry: ReturnedEntry; sent: SentEntry; importId: string },
  now: number,
): Promise<Result<void, NotAppliedReason>> {
  const { entry, sent } = matched;
  const correction = readCorrection(entry.code, entry.correctedData ?? "");
  if (correction === null) {
    return refuse(
      "malformed",
      `the corrected data ${JSON.stringify(entry.correctedData)} does not fit ${entry.code}`,
    );
  }
  const payout = (await loadPayout(tx, sent.payoutId!))!;
  const original = await payoutAccount(deps.secretBox, payout);
  if (original === null) {
    return refuse("malformed", `payout ${payout.id} holds no bank account to correct`);
  }
  const recorded = await recordCorrection(tx, deps.secretBox, {
    companyId: sent.companyId,
    original,
    changeCode: entry.code,
    correction,
    importId: matched.importId,
  }, now);
  if (recorded === null) {
    return refuse(
      "already_corrected",
      `the corrected details of ${entry.code} are on record already: the payee was told once`,
    );
  }
  await tellPayeeDetailsUpdated(tx, deps.runtime.notifications, payout.id, now);
  return ok(undefined);
}

/** One JSON line per entry not applied, so an operator sees each unmatched or malformed entry. */
function logNotApplied(
  request: Pick<AchImportRequest, "fileName" | "source">,
  sha256: string,
  notApplied: readonly NotApplied[],
): void {
  for (const entry of notApplied) {
    console.error(JSON.stringify({
      level: "warn",
      msg: "an entry of an imported ACH file was not applied",
      file: request.fileName,
      source: request.source,
      sha256,
      trace: entry.trace,
      code: entry.code,
      line: entry.line,
      reason: entry.reason,
      detail: entry.message,
    }));
  }
}

/** What a hand import would apply, for the second admin who decides it. */
export interface AchImportPreview {
  readonly sha256: string;
  readonly duplicate: boolean;
  readonly returns: number;
  readonly corrections: number;
  /** Entries that matched a payout or funding and would be applied. */
  readonly applied: number;
  readonly notApplied: AchImportReport["notApplied"];
  /** The money the ledger would move, in cents (each transaction counted once). */
  readonly movedCents: number;
  /** The payouts and fundings it would change. */
  readonly payouts: readonly string[];
  readonly fundings: readonly string[];
  /** An import of the file stopped midway, which this one would complete; null when none is. */
  readonly unfinished: UnfinishedImport | null;
}

/**
 * Previews an import: applies it in a write unit that is then undone, so the preview is exactly
 * what the import would do now (nothing is written, nothing is notified).
 */
export async function previewAchImport(
  deps: AchImportDeps,
  request: AchImportRequest,
  now: number,
): Promise<Result<AchImportPreview, "file_too_large" | "malformed_file">> {
  const size = request.content.byteLength;
  if (size > ACH_IMPORT_BYTES_MAX) {
    return refuse(
      "file_too_large",
      `${request.fileName} is ${size} bytes; an imported ACH file is at most ${ACH_IMPORT_BYTES_MAX} bytes`,
      { field: "file" },
    );
  }
  const parsed = parseReturnFile(new TextDecoder().decode(request.content));
  if (!parsed.ok) {
    return refuse("malformed_file", `${request.fileName} is not a NACHA file: ${parsed.message}`, {
      field: "file",
    });
  }
  const sha256 = await sha256Hex(request.content);
  const undone = await deps.database.writer.write(async (tx) => {
    const { rows: [mark] } = await tx.execute(
      "SELECT coalesce(max(id), 0) AS id FROM ledger_entries",
    );
    // An import of the file stopped midway: what it applied is done, not what this one would do.
    const { rows: [unfinished] } = await tx.execute({
      sql: `SELECT i.applied_count, i.progress, i.return_count + i.correction_count AS entries,
                   EXISTS (SELECT 1 FROM scheduled_jobs j WHERE j.kind = ? AND j.subject_id = i.id
                             AND j.done_at IS NULL AND j.lease_until IS NOT NULL) AS resuming
              FROM ach_imports i WHERE i.sha256 = ? AND i.progress IS NOT NULL`,
      args: [ACH_IMPORT_RESUME_JOB, sha256],
    });
    const { report } = await applyImport(tx, deps, { request, file: parsed.value, sha256 }, now);
    const { rows } = await tx.execute({
      sql: `SELECT t.payout_id, t.funding_id, e.amount_cents FROM ledger_entries e
              JOIN ledger_transactions t ON t.id = e.transaction_id
             WHERE e.id > ? AND e.amount_cents > 0`,
      args: [Number(mark.id)],
    });
    const preview: AchImportPreview = {
      sha256,
      duplicate: report.duplicate,
      returns: report.returns,
      corrections: report.corrections,
      applied: report.applied - (unfinished ? Number(unfinished.applied_count) : 0),
      notApplied: report.notApplied,
      movedCents: rows.reduce((sum, row) => sum + Number(row.amount_cents), 0),
      payouts: [...new Set(rows.flatMap((row) => row.payout_id ? [String(row.payout_id)] : []))],
      fundings: [...new Set(rows.flatMap((row) => row.funding_id ? [String(row.funding_id)] : []))],
      unfinished: unfinished
        ? {
          state: Number(unfinished.resuming) === 1 ? "resuming" : "stopped",
          entriesDone: (JSON.parse(String(unfinished.progress)) as ImportProgress).entries_done,
          entries: Number(unfinished.entries),
        }
        : null,
    };
    return tx.abort(refuse("preview", "undone", { details: { preview } }));
  });
  return ok((undone as unknown as { details: { preview: AchImportPreview } }).details.preview);
}

/** Imports a file in the caller's unit (a staged hand import, once a second admin approves). */
export async function importAchFileInUnit(
  tx: WriteTx,
  deps: AchImportDeps,
  request: AchImportRequest,
  now: number,
): Promise<Result<AchImportReport, "malformed_file">> {
  const parsed = parseReturnFile(new TextDecoder().decode(request.content));
  if (!parsed.ok) {
    return refuse("malformed_file", `${request.fileName} is not a NACHA file: ${parsed.message}`);
  }
  const sha256 = await sha256Hex(request.content);
  const { report } = await applyImport(tx, deps, { request, file: parsed.value, sha256 }, now);
  return ok(report);
}
