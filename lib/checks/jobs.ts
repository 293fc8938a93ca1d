/**
 * The check rail's own jobs; its cutoff (the claim, a page per unit), its files' release,
 * transmission, window and in-doubt resolution are the rail engine's (lib/rails/cutoff.ts and
 * lib/rails/engine.ts, through the adapters here and in rail.ts). What checks bring to the cutoff
 * (`check.cutoff`, per company): at the company's cutoff (at once when the bank takes files
 * whenever they come, as the sandbox bank does) the claimed entries' checks are the file's issues
 * and the voids not yet told to the bank its voids; the positive-pay CSV and the print file of its
 * postal checks are built outside every unit and kept sealed. A print file is held until its
 * positive-pay file was sent: checks never exist on paper before the bank knows them. When a
 * positive-pay file is sent its issues' payouts are sent (funds_sent) and its voids' payouts fail
 * (`check_voided`, `check_stale`) and are re-offered once the bank can no longer honour the paper.
 * Only a void the bank could never have paid fails its payout then; the others wait for the
 * bank's paid items (lib/checks/voids.ts). `check.stale` (per check), `check.confirm_voids` (per
 * company) and, with the sandbox bank, `check.sandbox_paid`.
 */
import { externalJob, type JobHandler, type RunningJob } from "../../db/scheduler.ts";
import { scheduleJob } from "../../db/scheduler_store.ts";
import type { WriteTx } from "../../db/writer.ts";
import { newId, sha256Hex } from "../platform/keys.ts";
import { addBusinessDays } from "../platform/business_days.ts";
import {
  type BatchPayoutMoves,
  type BatchRow,
  type BatchSend,
  batchSendJob,
  openBatch,
  sendAfterTransmission,
  voidBatch,
} from "../rails/batch.ts";
import { scheduleTransmission } from "../rails/engine.ts";
import {
  type CutoffClaim,
  cutoffJobHandler,
  type CutoffRail,
  type CutoffSlot,
} from "../rails/cutoff.ts";
import { bankLocal, bankTime, nextCutoffSlot } from "../ach/cutoffs.ts";
import {
  addressLinesOf,
  buildPrintFile,
  PRINT_FILE_CHECKS_MAX,
  type PrintableCheck,
} from "./print.ts";
import { formatPositivePayAmount, positivePayCsv, type PositivePayLine } from "./positive_pay.ts";
import { type CheckSettings, readCheckSettings } from "./settings_store.ts";
import {
  type CheckFileRow,
  insertCheckFile,
  loadCheckFile,
  printFileOf,
  sealCheckFile,
} from "./files_store.ts";
import { type CheckRecord, loadCheck, markCheckStale, voidCheck } from "./register.ts";
import { importPaidItems } from "./paid_import.ts";
import {
  confirmVoids,
  failPayoutOfVoid,
  RETURNED_UNDELIVERABLE,
  VOID_NEVER_PAYABLE,
} from "./voids.ts";
import { tellPayeeDigitalCheckReady } from "./digital.ts";
import {
  CHECK_BATCH_JOBS,
  CHECK_CONFIRM_VOIDS_JOB,
  CHECK_CUTOFF,
  CHECK_CUTOFF_JOB,
  CHECK_SANDBOX_PAID_JOB,
  CHECK_SEND_JOB,
  CHECK_STALE_JOB,
  ensureCheckCutoffPlanned,
  POSITIVE_PAY_RAIL,
  PRINT_RAIL,
} from "./schedule.ts";
import type { CheckRailDeps } from "./rail.ts";

/** Issues one positive-pay file takes at most: its print file must hold them all. */
export const CHECK_FILE_ISSUES_MAX = PRINT_FILE_CHECKS_MAX;
/** Voids one unit fails (their payouts re-offered); a larger file goes over several units. */
const VOIDS_PER_UNIT_MAX = 500;

const DAY_MS = 86_400_000;
/**
 * The sandbox bank reports a postal check paid this long after its file was sent (contract §10).
 */
export const SANDBOX_POSTAL_PAID_AFTER_MS = 5 * DAY_MS;
/** ... and a digital check after one business day (contract §10). */
export const SANDBOX_DIGITAL_PAID_AFTER_BUSINESS_DAYS = 1;
/** The reason the checks of a file voided before the bank had it are voided with. */
export const FILE_VOIDED = "file_voided";

/** What a cutoff's claim hands to the build. */
interface FileClaim {
  readonly batchId: string;
  readonly companyId: string;
  readonly cutoffAt: number;
  /** When the claim ran: its files' creation time. */
  readonly builtAt: number;
  readonly settings: CheckSettings;
}

/** One check of a file as the build reads it. */
interface FileCheck {
  readonly check: CheckRecord;
  readonly isIssue: boolean;
  readonly isVoid: boolean;
  readonly addressLines: readonly string[];
}

interface BuiltFile {
  readonly batchId: string;
  readonly positivePay: CheckFileRow | null;
  readonly print: CheckFileRow | null;
  readonly postalCheckIds: readonly string[];
  readonly error: string | null;
}

export async function checkSettingsOf(
  deps: Pick<CheckRailDeps, "secretBox" | "environment">,
  tx: Pick<WriteTx, "execute">,
  companyId: string,
): Promise<CheckSettings> {
  const settings = await readCheckSettings(tx, deps.secretBox, deps.environment, companyId);
  if (!settings) {
    throw new Error(
      `company ${companyId} has no check account in ${deps.environment}: its checks wait (deno task admin bank:set with check_account)`,
    );
  }
  return settings;
}

/**
 * A void goes to the bank after its issue: in the issue's own file, or once the issue's file was
 * sent (a void told first could be undone by the issue arriving after it).
 */
const ISSUE_SENT = `EXISTS (SELECT 1 FROM rail_batches b
  WHERE b.id = c.issue_file_id AND b.status = 'transmitted')`;

/** The voids and stale checks a cutoff tells the bank: not yet told, their issue told before. */
const VOIDS_TO_TELL = `c.company_id = ? AND c.status IN ('voided', 'stale')
  AND c.void_file_id IS NULL`;

type CheckClaim = CutoffClaim<CutoffSlot, CheckSettings>;

/**
 * A check file goes on the banking day of its cutoff, the issue date its checks carry: its window
 * ends at the bank's midnight after the cutoff.
 */
export function endOfBankDay(at: number, timeZone: string): number {
  const date = bankLocal(at, timeZone).date;
  const next = new Date(Date.parse(`${date}T00:00:00Z`) + DAY_MS).toISOString().slice(0, 10);
  return bankTime(next, "00:00", timeZone);
}

const fileClaimOf = (claim: CheckClaim): FileClaim => ({
  batchId: claim.batchId,
  companyId: claim.companyId,
  cutoffAt: claim.slot.at,
  builtAt: claim.builtAt,
  settings: claim.reservation,
});

/**
 * What the check rail brings to the engine's cutoff (`check.cutoff`, per company): at the
 * company's cutoffs (at once when the bank takes files whenever they come, as the sandbox bank
 * does), the claimed entries' checks are the file's issues and the voids and stale checks not yet
 * told to the bank its voids (a file of voids only is built too); the positive-pay CSV and the
 * print file of its postal checks are built outside every unit and kept sealed.
 */
function checkCutoffRail(deps: CheckRailDeps): CutoffRail<CutoffSlot, CheckSettings, BuiltFile> {
  return {
    ...CHECK_CUTOFF,
    entriesMax: deps.batchEntriesMax ?? CHECK_FILE_ISSUES_MAX,
    async cutoffs(tx, companyId) {
      const settings = await checkSettingsOf(deps, tx, companyId);
      const slotAt = (at: number) => ({
        at,
        windowEndsAt: endOfBankDay(at, settings.timeZone),
      });
      return deps.transport.takesFilesAnyTime
        ? slotAt
        : (after) => slotAt(nextCutoffSlot(settings, after).at);
    },
    entryMaxCents: () => null,
    async pendingBesidesEntries(tx, companyId) {
      const { rows } = await tx.execute({
        sql: `SELECT 1 FROM checks c WHERE ${VOIDS_TO_TELL} AND ${ISSUE_SENT} LIMIT 1`,
        args: [companyId],
      });
      return rows.length > 0;
    },
    open: async (tx, { companyId }) => ({
      railReference: null,
      reservation: await checkSettingsOf(deps, tx, companyId),
    }),
    resume: (tx, batch) => checkSettingsOf(deps, tx, batch.companyId),
    async claimed(tx, claim, entryIds) {
      await tx.execute({
        sql: `UPDATE checks SET issue_file_id = ? WHERE reference IN
                (SELECT reference FROM rail_batch_entries WHERE id IN (SELECT value FROM json_each(?)))`,
        args: [claim.batchId, JSON.stringify(entryIds)],
      });
    },
    async closing(tx, claim) {
      await tx.execute({
        sql: `UPDATE checks AS c SET void_file_id = ?
              WHERE ${VOIDS_TO_TELL} AND (c.issue_file_id = ? OR ${ISSUE_SENT})`,
        args: [claim.batchId, claim.companyId, claim.batchId],
      });
      const { rows } = await tx.execute({
        sql: "SELECT 1 FROM checks WHERE void_file_id = ? LIMIT 1",
        args: [claim.batchId],
      });
      return rows.length > 0;
    },
    recorded: async (tx, batchId) => await loadCheckFile(tx, batchId) !== null,
    build: (claim) => buildFiles(deps, fileClaimOf(claim)),
    record: (tx, claim, built) => recordFiles(tx, claim, built),
  };
}

async function fileChecks(deps: CheckRailDeps, batchId: string): Promise<FileCheck[]> {
  const { rows } = await deps.database.readClient.execute({
    sql: `SELECT c.id, c.issue_file_id, c.void_file_id, p.method_details, p.address_one,
            p.address_two, p.city, p.state, p.zip_code
          FROM checks c JOIN payouts p ON p.id = c.payout_id
          WHERE c.issue_file_id = ? OR c.void_file_id = ?
          ORDER BY c.check_number`,
    args: [batchId, batchId],
  });
  const checks: FileCheck[] = [];
  for (const row of rows) {
    const check = await loadCheck(deps.database.readClient, String(row.id));
    checks.push({
      check: check!,
      isIssue: row.issue_file_id === batchId,
      isVoid: row.void_file_id === batchId,
      addressLines: addressLinesOf(row),
    });
  }
  return checks;
}

const compactDate = (at: number, timeZone: string) =>
  bankLocal(at, timeZone).date.replaceAll("-", "");

/**
 * Builds the files outside every unit: the positive-pay CSV of every issue and void (an issue
 * voided before its first file is told as both), and the print file of the postal checks issued
 * in it and still issued. The CSV must carry exactly the lines the database says.
 */
async function buildFiles(deps: CheckRailDeps, claim: FileClaim): Promise<BuiltFile> {
  const checks = await fileChecks(deps, claim.batchId);
  const lines: PositivePayLine[] = [];
  for (const { check, isIssue, isVoid } of checks) {
    const line = {
      checkNumber: check.checkNumber,
      amountCents: check.amountCents,
      issueDate: check.issueDate,
      payeeName: check.payeeName,
    };
    if (isIssue) lines.push({ action: "issue", ...line });
    if (isVoid) lines.push({ action: "void", ...line });
  }
  const account = claim.settings.account;
  const csv = new TextEncoder().encode(positivePayCsv(account, lines));
  const day = compactDate(claim.cutoffAt, claim.settings.timeZone);
  const issues = lines.filter((line) => line.action === "issue");
  const base = {
    companyId: claim.companyId,
    createdAt: claim.builtAt,
  };
  const positivePay: CheckFileRow = {
    ...base,
    batchId: claim.batchId,
    kind: "positive_pay",
    positivePayFileId: null,
    contentSealed: await sealCheckFile(deps.secretBox, csv),
    sha256: await sha256Hex(csv),
    byteSize: csv.length,
    fileName: `PPAY_${account.accountNumber.slice(-4)}_${day}_${claim.batchId}.csv`,
    issueCount: issues.length,
    voidCount: lines.length - issues.length,
    totalCents: issues.reduce((sum, line) => sum + line.amountCents, 0),
  };
  const postal = checks.filter(({ check, isIssue }) =>
    isIssue && check.kind === "postal" && check.status === "issued"
  );
  if (postal.length === 0) {
    return { batchId: claim.batchId, positivePay, print: null, postalCheckIds: [], error: null };
  }
  const printable: PrintableCheck[] = postal.map(({ check, addressLines }) => ({
    checkNumber: check.checkNumber,
    amountCents: check.amountCents,
    payeeName: check.payeeName,
    payeeAddressLines: addressLines,
    issueDate: check.issueDate,
    memo: check.memo,
    postageCode: check.postageCode,
  }));
  let pdf: Uint8Array;
  try {
    pdf = await buildPrintFile({
      payer: {
        name: account.payerName,
        addressLines: account.payerAddress,
        routingNumber: account.routingNumber,
        accountNumber: account.accountNumber,
      },
      checks: printable,
      micrFontBytes: deps.runtime.micrFont,
    });
  } catch (error) {
    return {
      batchId: claim.batchId,
      positivePay: null,
      print: null,
      postalCheckIds: [],
      error: `the print file could not be built: ${
        error instanceof Error ? error.message : String(error)
      }`,
    };
  }
  const printId = newId("rbt");
  return {
    batchId: claim.batchId,
    positivePay,
    print: {
      ...base,
      batchId: printId,
      kind: "print",
      positivePayFileId: claim.batchId,
      contentSealed: await sealCheckFile(deps.secretBox, pdf),
      sha256: await sha256Hex(pdf),
      byteSize: pdf.length,
      fileName: `CHECKS_${account.accountNumber.slice(-4)}_${day}_${printId}.pdf`,
      issueCount: printable.length,
      voidCount: 0,
      totalCents: printable.reduce((sum, check) => sum + check.amountCents, 0),
    },
    postalCheckIds: postal.map(({ check }) => check.id),
    error: null,
  };
}

/** The recording unit's part of checks: the files are kept, the print file as a batch of its own. */
async function recordFiles(
  tx: WriteTx,
  claim: CheckClaim,
  built: BuiltFile,
): Promise<string | null> {
  if (built.error !== null || built.positivePay === null) {
    return built.error ?? "the positive-pay file was not built";
  }
  await insertCheckFile(tx, built.positivePay);
  if (built.print) {
    const print = built.print;
    await openBatch(tx, {
      id: print.batchId,
      companyId: print.companyId,
      rail: PRINT_RAIL,
      entryCount: print.issueCount,
      totalCents: print.totalCents,
      cutoffAt: claim.slot.at,
      createdAt: print.createdAt,
    });
    await insertCheckFile(tx, print);
    await tx.execute({
      sql: `UPDATE checks SET print_file_id = ? WHERE id IN (SELECT value FROM json_each(?))`,
      args: [print.batchId, JSON.stringify(built.postalCheckIds)],
    });
  }
  return null;
}

/**
 * Whether a print file may be released: its positive-pay file was transmitted (or marked sent).
 * Checks never exist on paper before the bank knows them.
 */
export async function printReleasable(
  reader: Pick<WriteTx, "execute">,
  file: Pick<CheckFileRow, "kind" | "positivePayFileId">,
): Promise<boolean> {
  if (file.kind !== "print") return true;
  const { rows } = await reader.execute({
    sql: "SELECT status FROM rail_batches WHERE id = ?",
    args: [file.positivePayFileId],
  });
  return rows[0]?.status === "transmitted";
}

/**
 * A check file reached the bank (or an admin marked it sent): a positive-pay file's issues are
 * sent (their payouts funds_sent), then its voids the bank could never have paid fail their
 * payouts and re-offer them (the others wait for the bank's paid items), and its print file is
 * released; the sandbox bank plans its paid items. In the caller's unit.
 */
export async function checkFileTransmitted(
  tx: WriteTx,
  deps: CheckRailDeps,
  moves: BatchPayoutMoves,
  batch: BatchRow,
  at: number,
): Promise<void> {
  if (batch.rail === POSITIVE_PAY_RAIL) {
    await sendAfterTransmission(tx, moves, checkFileSend(deps, moves), batch, at);
  }
  if (batch.rail === PRINT_RAIL) await deps.transport.printed?.(tx, batch, at);
}

/**
 * A positive-pay file was voided before the bank had it (its window closed, an operator voided it,
 * or the bank did not receive it): its issues' checks were never told, so they are voided here
 * without a void for the bank (their payouts' checks are issued again with new numbers); its
 * voids of checks issued before go in the next file; its print file, held until it was sent, is
 * voided with it. In the caller's unit.
 */
export async function checkFileVoided(
  tx: WriteTx,
  moves: BatchPayoutMoves,
  batch: BatchRow,
  now: number,
): Promise<void> {
  if (batch.rail !== POSITIVE_PAY_RAIL) return;
  await tx.execute({
    sql: `UPDATE checks SET status = 'voided', voided_at = ?, void_reason = ?, voided_by = 'system'
          WHERE issue_file_id = ? AND status = 'issued'`,
    args: [now, FILE_VOIDED, batch.id],
  });
  const told = await tx.execute({
    sql: `UPDATE checks SET void_file_id = NULL
          WHERE void_file_id = ? AND coalesce(issue_file_id, '') <> ?`,
    args: [batch.id, batch.id],
  });
  if (told.rowsAffected > 0) await ensureCheckCutoffPlanned(tx, batch.companyId, now);
  const print = await printFileOf(tx, batch.id);
  if (print?.status === "built") {
    await voidBatch(tx, moves, print.batchId, "its positive-pay file was voided", {
      requeue: () => {
        throw new Error(`print file ${print.batchId} carries no entries of its own`);
      },
      now,
    });
  }
}

/**
 * How positive-pay files are sent: their entries by the engine's send (`check.send` beyond its
 * first unit), then their voids, a bounded number per unit (the rest in the next `check.send`);
 * the last unit releases the print file.
 */
function checkFileSend(deps: CheckRailDeps, moves: BatchPayoutMoves): BatchSend {
  return {
    job: CHECK_SEND_JOB,
    allSent: (tx, batch, at) => fileSent(tx, deps, moves, batch.companyId, batch.id, at),
  };
}

async function fileSent(
  tx: WriteTx,
  deps: CheckRailDeps,
  moves: BatchPayoutMoves,
  companyId: string,
  fileId: string,
  at: number,
): Promise<void> {
  const again = () =>
    scheduleJob(tx, { companyId, kind: CHECK_SEND_JOB, subjectId: fileId, dueAt: at }, at);
  const { rows } = await tx.execute({
    sql: `SELECT c.id FROM checks c
          WHERE c.void_file_id = ? AND ${VOID_NEVER_PAYABLE}
            AND EXISTS (SELECT 1 FROM rail_batch_entries e
              WHERE e.reference = c.reference AND e.status = 'sent')
          ORDER BY c.check_number LIMIT ?`,
    args: [fileId, VOIDS_PER_UNIT_MAX],
  });
  for (const row of rows) await failPayoutOfVoid(tx, moves, String(row.id), at);
  if (rows.length === VOIDS_PER_UNIT_MAX) return void await again();
  const waiting = await tx.execute({
    sql: `SELECT 1 FROM checks WHERE issue_file_id = ? AND status IN ('voided', 'stale')
            AND void_file_id IS NULL LIMIT 1`,
    args: [fileId],
  });
  // Voids made while this file waited to be sent go in the next one.
  if (waiting.rows.length > 0) await ensureCheckCutoffPlanned(tx, companyId, at);
  // Once, with the file's last unit: the payees of its digital checks are told they are ready.
  const digital = await tx.execute({
    sql: `SELECT id FROM checks WHERE issue_file_id = ? AND kind = 'digital' AND status = 'issued'
          ORDER BY check_number`,
    args: [fileId],
  });
  for (const row of digital.rows) {
    await tellPayeeDigitalCheckReady(
      tx,
      {
        secretBox: deps.secretBox,
        notifications: deps.runtime.notifications,
      },
      String(row.id),
      at,
    );
  }
  const print = await printFileOf(tx, fileId);
  if (print?.status === "built") {
    await scheduleTransmission(tx, CHECK_BATCH_JOBS, { companyId, id: print.batchId }, at, 1);
  }
  await deps.transport.sent?.(tx, companyId, fileId, at);
}

/** The sandbox bank's paid items of a positive-pay file it took: postal after 5 days, digital after 1 business day. */
export async function planSandboxPaidItems(
  tx: WriteTx,
  companyId: string,
  fileId: string,
  at: number,
): Promise<void> {
  await scheduleJob(tx, {
    companyId,
    kind: CHECK_SANDBOX_PAID_JOB,
    subjectId: fileId,
    dueAt: at + SANDBOX_POSTAL_PAID_AFTER_MS,
    payload: { kind: "postal" },
  }, at);
  await scheduleJob(tx, {
    companyId,
    kind: CHECK_SANDBOX_PAID_JOB,
    subjectId: fileId,
    dueAt: addBusinessDays(at, SANDBOX_DIGITAL_PAID_AFTER_BUSINESS_DAYS),
    payload: { kind: "digital" },
  }, at);
}

/** `check.stale`: an issued check past its account's stale days (read now) goes stale. */
async function staleCheck(deps: CheckRailDeps, tx: WriteTx, job: RunningJob): Promise<void> {
  const check = await loadCheck(tx, job.subjectId);
  if (check?.status !== "issued") return;
  const settings = await checkSettingsOf(deps, tx, check.companyId);
  const staleAt = check.issuedAt + settings.account.staleDays * DAY_MS;
  if (staleAt > job.dueAt) {
    // The stale days were raised since the check was issued.
    await scheduleJob(tx, {
      companyId: check.companyId,
      kind: CHECK_STALE_JOB,
      subjectId: check.id,
      dueAt: staleAt,
    }, job.dueAt);
    return;
  }
  await markCheckStale(tx, check.id, job.dueAt);
}

/** What the sandbox bank reports of a file's checks: the paid items it writes into its file. */
interface SandboxPaidItems {
  readonly companyId: string;
  readonly fileName: string;
  readonly csv: string;
}

/**
 * `check.sandbox_paid` (test only), claiming unit: the postal or digital checks of a positive-pay
 * file still issued (and, a business day after a file of voids, the day's report). A postal check to the sandbox's undeliverable ZIP was returned by the post
 * office: it is voided here, and its payout fails `returned_undeliverable` once the void's file
 * was sent. The others are paid for their amount: the bank's paid-items file, written here,
 * goes through the same import as a bank's (`importPaidItems`).
 */
async function sandboxPaidItems(
  deps: CheckRailDeps,
  tx: WriteTx,
  job: RunningJob,
): Promise<SandboxPaidItems | null> {
  const kind = job.payload.kind === "digital" ? "digital" : "postal";
  const { rows } = await tx.execute({
    sql: `SELECT c.id, p.method_details FROM checks c JOIN payouts p ON p.id = c.payout_id
          WHERE c.issue_file_id = ? AND c.kind = ? AND c.status = 'issued'
          ORDER BY c.check_number`,
    args: [job.subjectId, kind],
  });
  // A file carrying voids the bank might have met with a payment gets its report a business day
  // later, empty when nothing was paid: the report those voids' payouts wait for.
  const reportsVoids = kind === "digital" && (await tx.execute({
        sql:
          `SELECT 1 FROM checks c WHERE c.void_file_id = ? AND NOT ${VOID_NEVER_PAYABLE} LIMIT 1`,
        args: [job.subjectId],
      })).rows.length > 0;
  if (rows.length === 0 && !reportsVoids) return null;
  const settings = await checkSettingsOf(deps, tx, job.companyId);
  const paidDate = bankLocal(job.dueAt, settings.timeZone).date;
  const lines = ["check_number,amount,paid_date"];
  for (const row of rows) {
    const check = (await loadCheck(tx, String(row.id)))!;
    const scenario = (JSON.parse(String(row.method_details ?? "{}")) as { scenario?: string })
      .scenario;
    if (scenario === "undeliverable") {
      const voided = await voidCheck(tx, {
        companyId: check.companyId,
        checkNumber: check.checkNumber,
        reason: RETURNED_UNDELIVERABLE,
        operator: "system",
      }, job.dueAt);
      if (!voided.ok) throw new Error(`check ${check.checkNumber}: ${voided.message}`);
      continue;
    }
    lines.push(
      `${check.checkNumber},${formatPositivePayAmount(check.amountCents, "dollars")},${paidDate}`,
    );
  }
  if (lines.length === 1 && !reportsVoids) return null;
  return {
    companyId: job.companyId,
    fileName: `sandbox_paid_${paidDate.replaceAll("-", "")}_${job.subjectId}_${kind}.csv`,
    csv: lines.map((line) => `${line}\r\n`).join(""),
  };
}

/** The sandbox bank's paid-items file, imported as a bank's would be (idempotent per file). */
async function importSandboxPaidItems(
  deps: CheckRailDeps,
  items: SandboxPaidItems,
  job: RunningJob,
): Promise<void> {
  const imported = await importPaidItems(deps, {
    companyId: items.companyId,
    content: new TextEncoder().encode(items.csv),
    fileName: items.fileName,
    source: "sandbox_bank",
    importedBy: null,
  }, job.dueAt);
  if (!imported.ok) throw new Error(`the sandbox bank's paid items: ${imported.message}`);
}

/** The handlers of the check rail's own jobs. */
export function checkJobHandlers(
  deps: CheckRailDeps,
  moves: BatchPayoutMoves,
): Readonly<Record<string, JobHandler>> {
  return {
    [CHECK_CUTOFF_JOB]: cutoffJobHandler(
      { policy: deps.policy, moves },
      checkCutoffRail(deps),
      { writer: deps.database.writer, apiBusy: deps.runtime.apiBusy },
    ),
    [CHECK_SEND_JOB]: batchSendJob(
      { writer: deps.database.writer, apiBusy: deps.runtime.apiBusy },
      moves,
      checkFileSend(deps, moves),
    ),
    [CHECK_STALE_JOB]: (tx, job) => staleCheck(deps, tx, job),
    [CHECK_CONFIRM_VOIDS_JOB]: async (tx, job) => {
      const reportedAt = Number(job.payload.reported_at);
      await confirmVoids(tx, deps.runtime, job.companyId, reportedAt, job.dueAt);
    },
    [CHECK_SANDBOX_PAID_JOB]: externalJob<SandboxPaidItems, void>({
      // Writing and importing one file: well within a minute.
      leaseMs: 60_000,
      prepare: (tx, job) => sandboxPaidItems(deps, tx, job),
      call: (items, job) => importSandboxPaidItems(deps, items, job),
      record: () => Promise.resolve(),
    }),
  };
}
