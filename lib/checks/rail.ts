/**
 * The check rail, in both environments, for postal and digital checks: a submitted payout queues
 * an entry and takes the next number of the company's check register in the same unit; at each
 * cutoff a positive-pay file (and a print file of the postal checks) is built from the new issues
 * and voids, kept sealed, and handed over by the environment's transport (the sandbox bank in
 * test; SFTP, or an admin's download and mark-sent, in live). Its jobs are in lib/checks/jobs.ts.
 */
import type { Database } from "../../db/client.ts";
import type { WriteTx } from "../../db/writer.ts";
import type { Environment } from "../platform/config.ts";
import type { SecretBox } from "../platform/crypto.ts";
import { bankLocal } from "../ach/cutoffs.ts";
import { type BatchRail, insertQueuedEntry, type NewBatchEntry } from "../rails/batch.ts";
import type { PayoutRuntime } from "../payouts/jobs.ts";
import { modalityOf } from "../payouts/states.ts";
import { issueCheck } from "./register.ts";
import { hasCheckRail, readCheckSettings } from "./settings_store.ts";
import { checkJobHandlers } from "./jobs.ts";
import { CHECK_RAIL, ensureCheckCutoffPlanned } from "./schedule.ts";

export interface CheckRailDeps {
  readonly database: Database;
  readonly environment: Environment;
  readonly secretBox: SecretBox;
  readonly runtime: PayoutRuntime;
}

/** The postage a postal check goes with when neither the company nor the payee chose one. */
export const POSTAGE_DEFAULT = "FC";

/** What a check prints of its payout: the payee, the claim id, the postage. */
async function checkFacts(tx: WriteTx, payoutId: string) {
  const { rows } = await tx.execute({
    sql: `SELECT p.payment_method_id, p.method_details, p.payment_method_settings, d.external_uuid,
            coalesce(nullif(trim(coalesce(p.first_name, '') || ' ' || coalesce(p.last_name, '')), ''),
                     py.name, p.payee_uuid) AS payee_name
          FROM payouts p JOIN disbursements d ON d.id = p.disbursement_id
            LEFT JOIN payees py ON py.id = p.payee_id
          WHERE p.id = ?`,
    args: [payoutId],
  });
  const row = rows[0];
  if (!row) throw new Error(`no payout ${payoutId}`);
  const kind = modalityOf(Number(row.payment_method_id))?.code === "digital_check"
    ? "digital" as const
    : "postal" as const;
  const details = JSON.parse(String(row.method_details ?? "{}")) as Record<string, unknown>;
  const settings = JSON.parse(String(row.payment_method_settings ?? "{}")) as Record<
    string,
    unknown
  >;
  const postage = typeof details.postage === "string"
    ? details.postage
    : typeof settings.check_postage_type === "string"
    ? settings.check_postage_type
    : POSTAGE_DEFAULT;
  return {
    kind,
    payeeName: String(row.payee_name),
    memo: row.external_uuid === null ? null : String(row.external_uuid),
    postageCode: kind === "postal" ? postage : null,
  };
}

/**
 * Queues a check payout's entry and gives it its check in the caller's unit (the submission's
 * number is its own from here on), and makes sure a cutoff will tell the bank.
 */
async function queueCheck(
  deps: CheckRailDeps,
  tx: WriteTx,
  entry: NewBatchEntry,
  now: number,
): Promise<void> {
  if (entry.payoutId === null) throw new Error("a check entry pays a payout");
  const settings = await readCheckSettings(tx, deps.secretBox, deps.environment, entry.companyId);
  if (!settings) throw new Error(`company ${entry.companyId} has no check account`);
  await insertQueuedEntry(tx, CHECK_RAIL, entry, now);
  const facts = await checkFacts(tx, entry.payoutId);
  await issueCheck(tx, {
    companyId: entry.companyId,
    payoutId: entry.payoutId,
    reference: entry.reference,
    kind: facts.kind,
    amountCents: entry.amountCents,
    payeeName: facts.payeeName,
    memo: facts.memo,
    postageCode: facts.postageCode,
    issueDate: bankLocal(now, settings.timeZone).date,
    firstCheckNumber: settings.account.firstCheckNumber,
    staleDays: settings.account.staleDays,
  }, now);
  await ensureCheckCutoffPlanned(tx, entry.companyId, now);
}

/** The check rail of one environment's database (postal and digital checks). */
export function checkRail(deps: CheckRailDeps): BatchRail {
  return {
    shape: "batch",
    name: CHECK_RAIL,
    // A bank may already have picked a file up: a file is never handed over twice on its own.
    retransmitsSafely: false,
    configured: (tx: WriteTx, companyId: string) => hasCheckRail(tx, deps.environment, companyId),
    queue: (tx: WriteTx, entry: NewBatchEntry, now: number) => queueCheck(deps, tx, entry, now),
    jobHandlers: (moves) => checkJobHandlers(deps, moves),
  };
}
