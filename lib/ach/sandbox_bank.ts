/**
 * The sandbox bank: it takes the test environment's ACH files like a bank would, and answers with
 * real NACHA return files. It accepts a file at once, except the first transmission of a file that
 * carries an entry to 000222222227 (refused; the retry succeeds). Two banking days after the
 * effective date it writes a return file (R03) for the entries to 000111111116, which goes
 * through the same import code as a bank's. An entry to 000333333338 settles and completes, and
 * three banking days after its completion comes back R02 (account closed) in a return file of its
 * own: a late return.
 */
import type { JobHandler } from "../../db/scheduler.ts";
import { externalJob, yieldToEventLoop } from "../../db/scheduler.ts";
import { releaseHeldSettlements } from "../rails/outcome_fence.ts";
import { sandboxTestDetails } from "../rails/sandbox.ts";
import { readBankSettings } from "./bank_store.ts";
import { scheduleJob } from "../../db/scheduler_store.ts";
import type { WriteTx } from "../../db/writer.ts";
import type { Client } from "@libsql/client";
import { bankLocal, bankTime, nextBankingDay } from "./cutoffs.ts";
import { type AchImportDeps, importAchFile, resumeAchImport } from "./imports.ts";
import { ACH_RETURNS_IMPORT_LEASE_MS } from "./import_rules.ts";
import { buildReturnFile, type ReturnToWrite } from "./nacha.ts";
import type { UploadAnswer } from "./transport.ts";

/** The job kind that writes and imports the sandbox bank's return file of one ACH file. */
export const SANDBOX_RETURNS_JOB = "ach.sandbox_returns";

/** Entries to this account come back R03 (no account / unable to locate account). */
export const SANDBOX_RETURNED_ACCOUNT = "000111111116";
/** A file carrying an entry to this account is refused at its first transmission. */
export const SANDBOX_REFUSED_ONCE_ACCOUNT = "000222222227";
/** The return reason the sandbox bank gives. */
export const SANDBOX_RETURN_CODE = "R03";

/** The job kind that writes and imports the return file of a file's entries returned late. */
export const SANDBOX_LATE_RETURNS_JOB = "ach.sandbox_late_returns";
/** Entries to this account complete, then come back after completion (a late return). */
export const SANDBOX_LATE_RETURNED_ACCOUNT = sandboxTestDetails.achReturnsLate;
/** The late return's reason: the payee closed the account the money went to. */
export const SANDBOX_LATE_RETURN_CODE = "R02";
/**
 * A late return comes this many banking days after the file's returns day (its entries complete
 * that day at 17:00), at the bank-local hour the sandbox bank writes its returns.
 */
const LATE_RETURN_BANKING_DAYS = 3;
const LATE_RETURNS_TIME = "09:00";

/**
 * The sandbox bank's answer to a transmission of a file whose entries go to `accountNumbers`;
 * `attempt` is 1 for the first transmission of the file.
 */
export function sandboxBankUpload(
  fileName: string,
  accountNumbers: readonly string[],
  attempt: number,
): UploadAnswer {
  if (attempt === 1 && accountNumbers.includes(SANDBOX_REFUSED_ONCE_ACCOUNT)) {
    return {
      kind: "not_uploaded",
      reason:
        `the sandbox bank refuses the first transmission of a file carrying ${SANDBOX_REFUSED_ONCE_ACCOUNT}`,
    };
  }
  return { kind: "uploaded", remotePath: `sandbox://${fileName}` };
}

/** The ABA check digit of a routing number's first 8 digits (weights 3, 7, 1). */
export function routingCheckDigit(dfi: string): string {
  const weights = [3, 7, 1, 3, 7, 1, 3, 7];
  const sum = [...dfi].reduce((total, digit, i) => total + Number(digit) * weights[i], 0);
  return String((10 - (sum % 10)) % 10);
}

/** A credit of the file still waiting for its settlement, with its payee's sealed account. */
interface SentCredit {
  readonly traceNumber: string;
  readonly transactionCode: number;
  readonly receivingDfi: string;
  readonly amountCents: number;
  readonly entryClass: "PPD" | "CCD";
  readonly payoutId: string;
  readonly name: string;
  readonly accountSealed: string | null;
}

interface ReturnsRequest {
  readonly companyId: string;
  readonly batchId: string;
  /** The traces of the credits the claim found, in trace order. */
  readonly traces: readonly string[];
}

/**
 * Credits are read, parsed and unsealed this many at a time, the event loop getting its turn
 * between pages: a 10,000-entry file in one go held the service's thread for tens of ms.
 */
export const CREDITS_PAGE = 200;

/** The traces of a file's credits in `status`, not yet returned (only `traces` when given). */
async function tracesOf(
  tx: WriteTx,
  batchId: string,
  status: "sent" | "completed",
  traces: readonly string[] | null,
): Promise<string[]> {
  const { rows } = await tx.execute({
    sql: `SELECT trace_number FROM rail_batch_entries
           WHERE batch_id = ? AND status = ? AND direction = 'credit' AND return_code IS NULL
             ${traces === null ? "" : `AND trace_number IN (${traces.map(() => "?").join(", ")})`}
           ORDER BY trace_number`,
    args: [batchId, status, ...(traces ?? [])],
  });
  return rows.map((row) => String(row.trace_number));
}

/** The claimed credits (by trace) with their accounts, in trace order. */
async function creditsOf(
  reader: Pick<Client, "execute">,
  batchId: string,
  traces: readonly string[],
): Promise<SentCredit[]> {
  const { rows } = await reader.execute({
    sql: `SELECT e.trace_number, e.transaction_code, e.receiving_dfi, e.amount_cents,
                 e.entry_class, e.payout_id, p.first_name, p.last_name, p.method_details
            FROM rail_batch_entries e JOIN payouts p ON p.id = e.payout_id
           WHERE e.batch_id = ? AND e.direction = 'credit' AND e.return_code IS NULL
             AND e.trace_number IN (${traces.map(() => "?").join(", ")})
           ORDER BY e.trace_number`,
    args: [batchId, ...traces],
  });
  return rows.map((row) => {
    const details = JSON.parse(String(row.method_details ?? "{}"));
    return {
      traceNumber: String(row.trace_number),
      transactionCode: Number(row.transaction_code),
      receivingDfi: String(row.receiving_dfi),
      amountCents: Number(row.amount_cents),
      entryClass: row.entry_class === "CCD" ? "CCD" : "PPD",
      payoutId: String(row.payout_id),
      name: [row.first_name, row.last_name].filter(Boolean).join(" ") || "PAYEE",
      accountSealed: typeof details.account_sealed === "string" ? details.account_sealed : null,
    };
  });
}

/** A claimed credit whose unsealed account is one the sandbox bank answers for. */
interface AnsweredCredit {
  readonly credit: SentCredit;
  readonly account: string;
}

/**
 * The request's credits to one of `accounts`, read and unsealed a page at a time, giving the
 * event loop its turn between pages; outside every write unit.
 */
async function creditsTo(
  deps: AchImportDeps,
  request: ReturnsRequest,
  accounts: readonly string[],
): Promise<AnsweredCredit[]> {
  const answered: AnsweredCredit[] = [];
  for (let from = 0; from < request.traces.length; from += CREDITS_PAGE) {
    if (from > 0) await yieldToEventLoop();
    const page = await creditsOf(
      deps.database.readClient,
      request.batchId,
      request.traces.slice(from, from + CREDITS_PAGE),
    );
    const unsealed = await accountsOf(deps, page);
    page.forEach((credit, i) => {
      const account = unsealed[i];
      if (account !== null && accounts.includes(account)) answered.push({ credit, account });
    });
  }
  return answered;
}

/** The late returns a returns file leaves for later: their traces, due at `dueAt`. */
interface LateReturns {
  readonly traces: readonly string[];
  readonly dueAt: number;
}

/**
 * The handler of `ach.sandbox_returns` (subject: the ACH file's batch id), scheduled when a test
 * file is transmitted, due at `sandboxReturnsAt(effective date)`: writes the return file of its
 * R03 entries, if any, and imports it; entries to the late-return account are planned for their
 * own file (`ach.sandbox_late_returns`) after they complete.
 */
export function sandboxReturnsJob(deps: AchImportDeps): JobHandler {
  return externalJob<ReturnsRequest, LateReturns | null>({
    leaseMs: ACH_RETURNS_IMPORT_LEASE_MS,
    async prepare(tx, job) {
      const traces = await tracesOf(tx, job.subjectId, "sent", null);
      if (traces.length === 0) return null;
      return { companyId: job.companyId, batchId: job.subjectId, traces };
    },
    async call(request, job) {
      const answered = await creditsTo(deps, request, [
        SANDBOX_RETURNED_ACCOUNT,
        SANDBOX_LATE_RETURNED_ACCOUNT,
      ]);
      await writeAndImportReturns(deps, request.companyId, answered, {
        accountNumber: SANDBOX_RETURNED_ACCOUNT,
        code: SANDBOX_RETURN_CODE,
        fileName: `RETURNS_${request.batchId}.txt`,
      }, job.dueAt);
      const late = answered.filter(({ account }) => account === SANDBOX_LATE_RETURNED_ACCOUNT);
      if (late.length === 0) return null;
      const { timeZone } = await settingsOf(deps, request.companyId);
      let day = bankLocal(job.dueAt, timeZone).date;
      for (let n = 0; n < LATE_RETURN_BANKING_DAYS; n++) day = nextBankingDay(day);
      return {
        traces: late.map(({ credit }) => credit.traceNumber),
        dueAt: bankTime(day, LATE_RETURNS_TIME, timeZone),
      };
    },
    async record(tx, job, late) {
      // The returns are in: a settlement held behind this file's reading may run.
      await releaseHeldSettlements(tx, job.companyId, job.id);
      if (late === null) return;
      await scheduleJob(tx, {
        companyId: job.companyId,
        kind: SANDBOX_LATE_RETURNS_JOB,
        subjectId: job.subjectId,
        dueAt: late.dueAt,
        payload: { traces: late.traces },
      }, job.dueAt);
    },
  });
}

/**
 * The handler of `ach.sandbox_late_returns` (subject: the ACH file's batch id; payload: the traces
 * of its entries to the late-return account): writes the return file (R02) of those that completed
 * and imports it, which records each as a late return.
 */
export function sandboxLateReturnsJob(deps: AchImportDeps): JobHandler {
  return externalJob<ReturnsRequest, void>({
    leaseMs: ACH_RETURNS_IMPORT_LEASE_MS,
    async prepare(tx, job) {
      const traces = (job.payload.traces ?? []) as string[];
      if (traces.length === 0) return null;
      const completed = await tracesOf(tx, job.subjectId, "completed", traces);
      if (completed.length === 0) return null;
      return { companyId: job.companyId, batchId: job.subjectId, traces: completed };
    },
    async call(request, job) {
      const answered = await creditsTo(deps, request, [SANDBOX_LATE_RETURNED_ACCOUNT]);
      await writeAndImportReturns(deps, request.companyId, answered, {
        accountNumber: SANDBOX_LATE_RETURNED_ACCOUNT,
        code: SANDBOX_LATE_RETURN_CODE,
        fileName: `LATE_RETURNS_${request.batchId}.txt`,
      }, job.dueAt);
    },
    record: async () => {},
  });
}

/** Each credit's account number, unsealed (null when the payout keeps none). */
function accountsOf(
  deps: AchImportDeps,
  credits: readonly SentCredit[],
): Promise<(string | null)[]> {
  return Promise.all(
    credits.map((credit) =>
      credit.accountSealed === null ? null : deps.secretBox.openText(credit.accountSealed)
    ),
  );
}

async function settingsOf(deps: AchImportDeps, companyId: string) {
  const settings = await readBankSettings(
    deps.database.readClient,
    deps.secretBox,
    deps.environment,
    companyId,
  );
  if (!settings) throw new Error(`sandbox returns: company ${companyId} has no bank`);
  return settings;
}

/**
 * Writes the return file (`code`) of the credits to one account and imports it. A run of the job
 * stopped in the middle of its import takes that import up instead: a file written again from the
 * credits still outstanding would be another file, and the first import would stay unfinished.
 */
async function writeAndImportReturns(
  deps: AchImportDeps,
  companyId: string,
  answered: readonly AnsweredCredit[],
  returning: { readonly accountNumber: string; readonly code: string; readonly fileName: string },
  now: number,
): Promise<void> {
  const { rows: [unfinished] } = await deps.database.readClient.execute({
    sql: `SELECT id FROM ach_imports WHERE source = 'sandbox_bank' AND company_id = ?
            AND file_name = ? AND progress IS NOT NULL`,
    args: [companyId, returning.fileName],
  });
  if (unfinished) {
    await resumeAchImport(deps, String(unfinished.id), now);
    return;
  }
  const returned: ReturnToWrite[] = [];
  answered.forEach(({ credit, account }) => {
    if (account !== returning.accountNumber) return;
    returned.push({
      kind: "return",
      code: returning.code,
      original: {
        traceNumber: credit.traceNumber,
        transactionCode: credit.transactionCode,
        routingNumber: credit.receivingDfi + routingCheckDigit(credit.receivingDfi),
        accountNumber: returning.accountNumber,
        amountCents: credit.amountCents,
        individualId: credit.payoutId.slice(-15),
        name: credit.name,
        entryClass: credit.entryClass,
      },
    });
  });
  if (returned.length === 0) return;
  const settings = await settingsOf(deps, companyId);
  const created = bankLocal(now, settings.timeZone);
  const content = buildReturnFile({
    immediateDestination: settings.immediateDestination,
    immediateOrigin: settings.immediateOrigin,
    companyName: settings.companyName,
    companyIdentification: settings.companyIdentification,
    rdfi: settings.odfiRouting.slice(0, 8),
    createdDate: created.date,
    createdTime: created.time,
    fileIdModifier: "A",
    entries: returned,
  });
  const imported = await importAchFile(deps, {
    content: new TextEncoder().encode(content),
    fileName: returning.fileName,
    source: "sandbox_bank",
    importedBy: null,
    companyId,
  }, now);
  // The sandbox bank wrote the file itself: a refusal is a bug, and parks the job for a look.
  if (!imported.ok) throw new Error(`sandbox return file refused: ${imported.message}`);
}
