/**
 * The sandbox bank: it takes the test environment's ACH files like a bank would, and answers with
 * real NACHA return files. It accepts a file at once, except the first transmission of a file that
 * carries an entry to 000222222227 (refused; the retry succeeds). Two banking days after the
 * effective date it writes a return file (R03) for the entries to 000111111116, which goes
 * through the same import code as a bank's.
 */
import type { JobHandler } from "../../db/scheduler.ts";
import { externalJob } from "../../db/scheduler.ts";
import { releaseHeldSettlements } from "../rails/outcome_fence.ts";
import { readBankSettings } from "./bank_store.ts";
import { bankLocal } from "./cutoffs.ts";
import { type AchImportDeps, importAchFile } from "./imports.ts";
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
  readonly credits: readonly SentCredit[];
}

/**
 * The handler of `ach.sandbox_returns` (subject: the ACH file's batch id), scheduled when a test
 * file is transmitted, due at `sandboxReturnsAt(effective date)`: writes the return file of its
 * R03 entries, if any, and imports it.
 */
export function sandboxReturnsJob(deps: AchImportDeps): JobHandler {
  return externalJob<ReturnsRequest, void>({
    // Writing and importing one file: well within a minute.
    leaseMs: 60_000,
    async prepare(tx, job) {
      const { rows } = await tx.execute({
        sql: `SELECT e.trace_number, e.transaction_code, e.receiving_dfi, e.amount_cents,
                     e.entry_class, e.payout_id, p.first_name, p.last_name, p.method_details
                FROM rail_batch_entries e JOIN payouts p ON p.id = e.payout_id
               WHERE e.batch_id = ? AND e.status = 'sent' AND e.direction = 'credit'
               ORDER BY e.trace_number`,
        args: [job.subjectId],
      });
      if (rows.length === 0) return null;
      return {
        companyId: job.companyId,
        batchId: job.subjectId,
        credits: rows.map((row) => {
          const details = JSON.parse(String(row.method_details ?? "{}"));
          return {
            traceNumber: String(row.trace_number),
            transactionCode: Number(row.transaction_code),
            receivingDfi: String(row.receiving_dfi),
            amountCents: Number(row.amount_cents),
            entryClass: row.entry_class === "CCD" ? "CCD" : "PPD",
            payoutId: String(row.payout_id),
            name: [row.first_name, row.last_name].filter(Boolean).join(" ") || "PAYEE",
            accountSealed: typeof details.account_sealed === "string"
              ? details.account_sealed
              : null,
          };
        }),
      };
    },
    call: (request, job) => writeAndImportReturns(deps, request, job.dueAt),
    // The returns are in: a settlement held behind this file's reading may run.
    record: (tx, job) => releaseHeldSettlements(tx, job.companyId, job.id),
  });
}

/** Writes the return file of the request's entries to the returned account and imports it. */
async function writeAndImportReturns(
  deps: AchImportDeps,
  request: ReturnsRequest,
  now: number,
): Promise<void> {
  const returned: ReturnToWrite[] = [];
  for (const credit of request.credits) {
    if (credit.accountSealed === null) continue;
    const accountNumber = await deps.secretBox.openText(credit.accountSealed);
    if (accountNumber !== SANDBOX_RETURNED_ACCOUNT) continue;
    returned.push({
      kind: "return",
      code: SANDBOX_RETURN_CODE,
      original: {
        traceNumber: credit.traceNumber,
        transactionCode: credit.transactionCode,
        routingNumber: credit.receivingDfi + routingCheckDigit(credit.receivingDfi),
        accountNumber,
        amountCents: credit.amountCents,
        individualId: credit.payoutId.slice(-15),
        name: credit.name,
        entryClass: credit.entryClass,
      },
    });
  }
  if (returned.length === 0) return;
  const settings = await readBankSettings(
    deps.database.readClient,
    deps.secretBox,
    deps.environment,
    request.companyId,
  );
  if (!settings) throw new Error(`sandbox returns: company ${request.companyId} has no bank`);
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
    fileName: `RETURNS_${request.batchId}.txt`,
    source: "sandbox_bank",
    importedBy: null,
    companyId: request.companyId,
  }, now);
  // The sandbox bank wrote the file itself: a refusal is a bug, and parks the job for a look.
  if (!imported.ok) throw new Error(`sandbox return file refused: ${imported.message}`);
}
