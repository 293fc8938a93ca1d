/**
 * Imports of paid-items files (issue 19) for one company: from the CLI (`checks:import-paid`), the
 * live SFTP inbound directory, the sandbox bank, or the console. One import is one write unit; a
 * file imported before (same SHA-256 for the company) changes nothing, except that an empty one
 * (the bank paid nothing) again covers the voids it may. Each paid item is matched
 * to the register by its check number, in file order, so a number paid twice in one file is an
 * exception the second time: a clean match completes its payout through the payout state machine
 * (the batch entry settles completed); anything else is recorded in check_exceptions, open, for
 * an operator to resolve (lib/checks/exceptions.ts). Then the voids the file covers, whose checks
 * it did not report paid, fail their payouts (lib/checks/voids.ts). The file is read and checked
 * before the unit; a file without one of its columns is refused whole and nothing is written.
 */
import { and, eq } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { checkExceptions, checkPaidImports, railBatchEntries } from "../../db/schema.ts";
import type { WriteTx } from "../../db/writer.ts";
import type { Environment } from "../platform/config.ts";
import { newId, sha256Hex } from "../platform/keys.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import type { PayoutRuntime } from "../payouts/jobs.ts";
import {
  type CheckExceptionKind,
  decidePaidItem,
  PAID_IMPORT_BYTES_MAX,
  type PaidFileRefusal,
  type PaidItem,
  parsePaidItems,
} from "./paid_import_rules.ts";
import { recordCheckPaid } from "./paid.ts";
import { findCheckByNumber } from "./register.ts";
import { confirmVoids } from "./voids.ts";

export type PaidImportSource = (typeof checkPaidImports.$inferSelect)["source"];

export interface PaidImportRequest {
  readonly companyId: string;
  readonly content: Uint8Array;
  readonly fileName: string;
  readonly source: PaidImportSource;
  /** The operator who imported it (null for the service itself). */
  readonly importedBy: string | null;
}

export interface PaidImportDeps {
  readonly database: Database;
  readonly environment: Environment;
  readonly runtime: PayoutRuntime;
}

/** An item not applied cleanly: an exception (with its id) or a row that could not be read. */
export interface PaidItemNotMatched {
  readonly line: number;
  readonly checkNumber: number | null;
  readonly reason: CheckExceptionKind | "malformed";
  readonly message: string;
  readonly exceptionId: string | null;
}

export interface PaidImportReport {
  readonly importId: string;
  /** True when the company imported the same file (by SHA-256) before: nothing changed. */
  readonly duplicate: boolean;
  readonly sha256: string;
  readonly items: number;
  readonly matched: number;
  readonly exceptions: number;
  readonly notMatched: readonly PaidItemNotMatched[];
}

/** Whether a file the bank dropped in the inbound directory is a paid-items file: a `.csv`. */
export const isPaidItemsFileName = (name: string): boolean => /\.csv$/i.test(name);

/** The file read and checked before any unit: its items, its malformed lines and its SHA-256. */
async function readPaidFile(
  request: PaidImportRequest,
): Promise<
  Result<
    { items: readonly PaidItem[]; malformed: ParsedPaidItems["malformed"]; sha256: string },
    PaidFileRefusal
  >
> {
  const size = request.content.byteLength;
  if (size > PAID_IMPORT_BYTES_MAX) {
    return refuse(
      "file_too_large",
      `${request.fileName} is ${size} bytes; a paid-items file is at most ${PAID_IMPORT_BYTES_MAX} bytes`,
      { field: "file", details: { bytes: size, limit_bytes: PAID_IMPORT_BYTES_MAX } },
    );
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(request.content);
  } catch {
    return refuse("malformed_file", `${request.fileName} is not UTF-8 text (a CSV is expected)`, {
      field: "file",
    });
  }
  const parsed = parsePaidItems(text);
  if (!parsed.ok) {
    return refuse(parsed.code, `${request.fileName}: ${parsed.message}`, {
      field: parsed.field,
    });
  }
  return ok({
    items: parsed.value.items,
    malformed: parsed.value.malformed,
    sha256: await sha256Hex(request.content),
  });
}

type ParsedPaidItems = Extract<ReturnType<typeof parsePaidItems>, { ok: true }>["value"];

/** Imports one paid-items file of a company; refuses a file it cannot read whole, writing nothing. */
export async function importPaidItems(
  deps: PaidImportDeps,
  request: PaidImportRequest,
  now: number,
): Promise<Result<PaidImportReport, PaidFileRefusal>> {
  const read = await readPaidFile(request);
  if (!read.ok) return read;
  const { items, malformed, sha256 } = read.value;
  const report = await deps.database.writer.write((tx) =>
    applyImport(tx, deps, { request, items, sha256 }, now, malformed)
  );
  if (!report.duplicate) logNotMatched(request, report);
  return ok(report);
}

async function applyImport(
  tx: WriteTx,
  deps: PaidImportDeps,
  input: { request: PaidImportRequest; items: readonly PaidItem[]; sha256: string },
  now: number,
  malformed: readonly { line: number; message: string }[],
): Promise<PaidImportReport> {
  const { request, items, sha256 } = input;
  const importId = newId("cpi");
  const claimed = await tx.db.insert(checkPaidImports).values({
    id: importId,
    companyId: request.companyId,
    sha256,
    source: request.source,
    fileName: request.fileName,
    itemCount: items.length,
    matchedCount: 0,
    exceptionCount: 0,
    report: "[]",
    importedBy: request.importedBy,
    importedAt: now,
  }).onConflictDoNothing({ target: [checkPaidImports.companyId, checkPaidImports.sha256] })
    .returning({ id: checkPaidImports.id });
  if (claimed.length === 0) {
    // An empty file is the same every day the bank paid nothing, and each one is news: the bank
    // paid none of the voids it covers.
    if (items.length === 0 && malformed.length === 0) {
      await confirmVoids(tx, deps.runtime, request.companyId, now, now);
    }
    return await duplicateOf(tx, request.companyId, sha256);
  }

  const notMatched: PaidItemNotMatched[] = malformed.map((row) => ({
    line: row.line,
    checkNumber: null,
    reason: "malformed",
    message: row.message,
    exceptionId: null,
  }));
  let matched = 0;
  let exceptions = 0;
  for (const item of items) {
    const check = await findCheckByNumber(tx, request.companyId, item.checkNumber);
    const entryStatus = check ? await entryStatusOf(tx, check.reference) : null;
    const decision = decidePaidItem(
      item,
      check && {
        status: check.status,
        amountCents: check.amountCents,
        paidDate: check.paidDate,
        issueSent: entryStatus === "sent",
      },
    );
    if (decision.kind === "match") {
      const paid = await recordCheckPaid(tx, deps.runtime, check!, {
        paidDate: item.paidDate,
        paidAmountCents: item.amountCents,
      }, now);
      // The check was read issued, sent and for this amount in this unit: it cannot be refused.
      if (!paid.ok) throw new Error(`paid check ${item.checkNumber}: ${paid.message}`);
      matched++;
      continue;
    }
    const exceptionId = newId("cex");
    await tx.db.insert(checkExceptions).values({
      id: exceptionId,
      companyId: request.companyId,
      importId,
      checkNumber: item.checkNumber,
      checkId: check?.id ?? null,
      kind: decision.exception,
      paidAmountCents: item.amountCents,
      paidDate: item.paidDate,
      status: "open",
      createdAt: now,
    });
    exceptions++;
    notMatched.push({
      line: item.line,
      checkNumber: item.checkNumber,
      reason: decision.exception,
      message: decision.message,
      exceptionId,
    });
  }
  notMatched.sort((a, b) => a.line - b.line);
  // Its items applied first: a void whose check the file reports paid waits for its exception.
  await confirmVoids(tx, deps.runtime, request.companyId, now, now);
  await tx.db.update(checkPaidImports).set({
    matchedCount: matched,
    exceptionCount: exceptions,
    report: JSON.stringify(notMatched),
  }).where(eq(checkPaidImports.id, importId));
  return {
    importId,
    duplicate: false,
    sha256,
    items: items.length,
    matched,
    exceptions,
    notMatched,
  };
}

/** The status of the batch entry a check's submission queued, or null when there is none. */
async function entryStatusOf(tx: WriteTx, reference: string): Promise<string | null> {
  const [entry] = await tx.db.select({ status: railBatchEntries.status }).from(railBatchEntries)
    .where(eq(railBatchEntries.reference, reference));
  return entry?.status ?? null;
}

/** The company's earlier import of the same file, as its report: nothing of this one is applied. */
async function duplicateOf(
  tx: WriteTx,
  companyId: string,
  sha256: string,
): Promise<PaidImportReport> {
  const [earlier] = await tx.db.select().from(checkPaidImports).where(
    and(eq(checkPaidImports.companyId, companyId), eq(checkPaidImports.sha256, sha256)),
  );
  return {
    importId: earlier.id,
    duplicate: true,
    sha256,
    items: earlier.itemCount,
    matched: earlier.matchedCount,
    exceptions: earlier.exceptionCount,
    notMatched: JSON.parse(earlier.report) as PaidItemNotMatched[],
  };
}

/** One JSON line per item not matched, so an operator sees each exception as it arrives. */
function logNotMatched(request: PaidImportRequest, report: PaidImportReport): void {
  for (const item of report.notMatched) {
    console.error(JSON.stringify({
      level: "warn",
      msg: "a paid item of an imported paid-items file did not match its check",
      company_id: request.companyId,
      file: request.fileName,
      source: request.source,
      sha256: report.sha256,
      line: item.line,
      check_number: item.checkNumber,
      reason: item.reason,
      exception_id: item.exceptionId,
      detail: item.message,
    }));
  }
}

/** What a hand import of paid items would do now: applied in a unit that is then undone. */
export interface PaidImportPreview {
  readonly sha256: string;
  readonly duplicate: boolean;
  readonly items: number;
  readonly matched: number;
  readonly exceptions: number;
  /** The money the ledger would move, in cents. */
  readonly movedCents: number;
  readonly payouts: readonly string[];
}

/** Previews a paid-items import exactly as it would apply now; nothing is written. */
export async function previewPaidItems(
  deps: PaidImportDeps,
  request: PaidImportRequest,
  now: number,
): Promise<Result<PaidImportPreview, PaidFileRefusal>> {
  const read = await readPaidFile(request);
  if (!read.ok) return read;
  const { items, malformed, sha256 } = read.value;
  const undone = await deps.database.writer.write(async (tx) => {
    const { rows: [mark] } = await tx.execute(
      "SELECT coalesce(max(id), 0) AS id FROM ledger_entries",
    );
    const report = await applyImport(tx, deps, { request, items, sha256 }, now, malformed);
    const { rows } = await tx.execute({
      sql: `SELECT t.payout_id, e.amount_cents FROM ledger_entries e
              JOIN ledger_transactions t ON t.id = e.transaction_id
             WHERE e.id > ? AND e.amount_cents > 0`,
      args: [Number(mark.id)],
    });
    const preview: PaidImportPreview = {
      sha256,
      duplicate: report.duplicate,
      items: report.items,
      matched: report.matched,
      exceptions: report.exceptions,
      movedCents: rows.reduce((sum, row) => sum + Number(row.amount_cents), 0),
      payouts: [...new Set(rows.flatMap((row) => row.payout_id ? [String(row.payout_id)] : []))],
    };
    return tx.abort(refuse("preview", "undone", { details: { preview } }));
  });
  return ok((undone as unknown as { details: { preview: PaidImportPreview } }).details.preview);
}

/** Imports paid items in the caller's unit (a staged hand import, once a second admin approves). */
export async function importPaidItemsInUnit(
  tx: WriteTx,
  deps: PaidImportDeps,
  request: PaidImportRequest,
  now: number,
): Promise<Result<PaidImportReport, PaidFileRefusal>> {
  const read = await readPaidFile(request);
  if (!read.ok) return read;
  const { items, malformed, sha256 } = read.value;
  return ok(await applyImport(tx, deps, { request, items, sha256 }, now, malformed));
}
