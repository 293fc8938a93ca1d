/**
 * Voiding a check on purpose (issue 19): an operator (`checks:void`, clerk or admin) or a user of
 * the company (`POST /api/checks/{number}/void`) voids an issued check with a reason, audited in
 * the same unit. The register (lib/checks/register.ts) queues the void for the next positive-pay
 * file. A paid check is refused and nothing is written; a check voided or stale already is
 * answered as it is.
 *
 * A void (or a stale check) whose issue reached the bank in an earlier file may have been paid
 * before the void reached the bank, and the bank tells of payments only in its paid-items files.
 * So once the void's file was sent the payout still holds its money (funds_sent, its entry sent)
 * and waits for a paid-items file imported a business day or more after that (`confirmVoids`):
 * only then does it fail `check_voided` (`check_stale`) and is offered again. A paid item of the
 * check goes to the exceptions queue instead, and the payout waits for its resolution. A void the
 * bank could never have paid (told with its issue in one file, a check the post office returned,
 * one its mail provider refused or canceled before mailing) fails its payout as soon as its file
 * was sent.
 */
import { scheduleJob } from "../../db/scheduler_store.ts";
import type { WriteTx } from "../../db/writer.ts";
import { appendAudit, type AuditActor } from "../audit/store.ts";
import type { Environment } from "../platform/config.ts";
import { addBusinessDays } from "../platform/business_days.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import { batchPayoutMoves, type PayoutRuntime } from "../payouts/jobs.ts";
import { type BatchPayoutMoves, settleBatchEntry } from "../rails/batch.ts";
import {
  type CheckRecord,
  findCheckByNumber,
  loadCheck,
  VOID_REASON_LENGTH_MAX,
  voidCheck,
  type VoidRefusal,
} from "./register.ts";
import { CHECK_CONFIRM_VOIDS_JOB } from "./schedule.ts";

/** The reason a check the post office returned is voided with, and its payout fails with. */
export const RETURNED_UNDELIVERABLE = "returned_undeliverable";
/** The reason a check its mail provider canceled before printing is voided with. */
export const CANCELED_BEFORE_MAILING = "canceled at the mail provider before mailing";
/** How the reason of a check its mail provider refused to mail begins (the provider's words follow). */
export const REFUSED_BY_MAIL_PROVIDER = "refused by the mail provider";
/** The payout failure of a check the mail provider refused for its address: the payee can fix it. */
export const ADDRESS_NOT_MAILABLE = "address_not_mailable";
/** Voids one unit confirms (their payouts re-offered); more go on in `check.confirm_voids`. */
export const VOIDS_CONFIRMED_PER_UNIT_MAX = 500;
/**
 * A paid-items file imported this many business days after a void reached the bank covers it:
 * the bank reports each banking day's payments the next banking morning, so any payment made
 * before the void arrived was reported by then.
 */
export const VOID_COVERED_AFTER_BUSINESS_DAYS = 1;

/** The payout failure a void told to the bank stands for. */
export function voidFailureReason(check: Pick<CheckRecord, "status" | "voidReason">): string {
  if (check.status === "stale") return "check_stale";
  if (check.voidReason?.startsWith(`${REFUSED_BY_MAIL_PROVIDER}:`)) return ADDRESS_NOT_MAILABLE;
  return check.voidReason === RETURNED_UNDELIVERABLE ? RETURNED_UNDELIVERABLE : "check_voided";
}

/**
 * The voids (SQL, of checks `c`) the bank could never have paid: told with their issue in one
 * file, of a check the post office returned to the company, or of one never printed (its mail
 * provider refused it, or canceled it before mailing, on its own or when we asked).
 */
export const VOID_NEVER_PAYABLE = `(c.issue_file_id = c.void_file_id
  OR (c.status = 'voided'
    AND c.void_reason IN ('${RETURNED_UNDELIVERABLE}', '${CANCELED_BEFORE_MAILING}'))
  OR (c.status = 'voided' AND c.voided_by = 'system'
    AND c.void_reason LIKE '${REFUSED_BY_MAIL_PROVIDER}:%')
  OR EXISTS (SELECT 1 FROM check_mail_events m WHERE m.check_id = c.id
    AND m.type = 'check.deleted'))`;

/** From when a paid-items file covers a void that reached the bank at `sentAt`. */
export const voidCoveredFrom = (sentAt: number): number =>
  addBusinessDays(sentAt, VOID_COVERED_AFTER_BUSINESS_DAYS);

/** The voids told to the bank whose payouts still hold their money, oldest file first. */
const AWAITING_CONFIRMATION = `SELECT c.id, b.transmitted_at FROM checks c
  JOIN rail_batches b ON b.id = c.void_file_id
  JOIN rail_batch_entries e ON e.reference = c.reference
  WHERE c.company_id = ? AND c.status IN ('voided', 'stale') AND b.status = 'transmitted'
    AND e.status = 'sent'
    AND NOT EXISTS (SELECT 1 FROM check_exceptions x WHERE x.check_id = c.id AND x.status = 'open')
  ORDER BY b.transmitted_at, c.check_number LIMIT ?`;

/**
 * The bank's paid items reported at `reportedAt` show no payment of the voids they cover: their
 * payouts fail (`check_voided`, `check_stale`) and are offered again, at most
 * VOIDS_CONFIRMED_PER_UNIT_MAX in the caller's unit, the rest in `check.confirm_voids`. A void
 * whose check has an open paid-item exception waits for its resolution. Answers how many.
 */
export async function confirmVoids(
  tx: WriteTx,
  runtime: PayoutRuntime,
  companyId: string,
  reportedAt: number,
  now: number,
): Promise<number> {
  const { rows } = await tx.execute({
    sql: AWAITING_CONFIRMATION,
    args: [companyId, VOIDS_CONFIRMED_PER_UNIT_MAX + 1],
  });
  let confirmed = 0;
  for (const row of rows) {
    if (voidCoveredFrom(Number(row.transmitted_at)) > reportedAt) break;
    if (confirmed === VOIDS_CONFIRMED_PER_UNIT_MAX) {
      await scheduleJob(tx, {
        companyId,
        kind: CHECK_CONFIRM_VOIDS_JOB,
        subjectId: companyId,
        dueAt: now,
        payload: { reported_at: reportedAt },
      }, now);
      break;
    }
    await failPayoutOfVoid(tx, batchPayoutMoves(runtime), String(row.id), now);
    confirmed++;
  }
  return confirmed;
}

/** The void of check `checkId` stands: its entry fails, and so its payout (then re-offered). */
export async function failPayoutOfVoid(
  tx: WriteTx,
  moves: BatchPayoutMoves,
  checkId: string,
  at: number,
): Promise<void> {
  const check = (await loadCheck(tx, checkId))!;
  const failed = await settleBatchEntry(
    tx,
    moves,
    check.reference,
    { kind: "failed", reason: voidFailureReason(check) },
    at,
  );
  if (!failed.ok) throw new Error(`check ${check.checkNumber}: ${failed.message}`);
}

/**
 * A void already told to the bank whose check turned out never printed (its mail provider canceled
 * it when we asked): its payout, which waited for the bank's paid items, fails at once and is
 * offered again, in the caller's unit. Answers whether it did.
 */
export async function failVoidNeverPaid(
  tx: WriteTx,
  runtime: PayoutRuntime,
  checkId: string,
  now: number,
): Promise<boolean> {
  const { rows } = await tx.execute({
    sql: `SELECT c.id FROM checks c JOIN rail_batches b ON b.id = c.void_file_id
            JOIN rail_batch_entries e ON e.reference = c.reference
          WHERE c.id = ? AND c.status IN ('voided', 'stale') AND b.status = 'transmitted'
            AND e.status = 'sent' AND ${VOID_NEVER_PAYABLE}
            AND NOT EXISTS (SELECT 1 FROM check_exceptions x WHERE x.check_id = c.id
              AND x.status = 'open')`,
    args: [checkId],
  });
  if (rows.length === 0) return false;
  await failPayoutOfVoid(tx, batchPayoutMoves(runtime), checkId, now);
  return true;
}

/** Why a payout waits on its voided check, or null when it does not. */
export interface VoidAwaitingPaidItems {
  readonly checkNumber: number;
  /** A paid-items file imported from then on covers the void. */
  readonly coveredFrom: number;
  /** The check has an open paid-item exception: its resolution decides. */
  readonly exceptionOpen: boolean;
}

/** The void of the payout's current check that waits for the bank's paid items, if any. */
export async function voidAwaitingPaidItems(
  reader: Pick<WriteTx, "execute">,
  reference: string,
): Promise<VoidAwaitingPaidItems | null> {
  const { rows } = await reader.execute({
    sql: `SELECT c.check_number, b.transmitted_at,
            EXISTS (SELECT 1 FROM check_exceptions x WHERE x.check_id = c.id
              AND x.status = 'open') AS exception_open
          FROM checks c JOIN rail_batches b ON b.id = c.void_file_id
            JOIN rail_batch_entries e ON e.reference = c.reference
          WHERE c.reference = ? AND c.status IN ('voided', 'stale')
            AND b.status = 'transmitted' AND e.status = 'sent'`,
    args: [reference],
  });
  const row = rows[0];
  if (!row) return null;
  return {
    checkNumber: Number(row.check_number),
    coveredFrom: voidCoveredFrom(Number(row.transmitted_at)),
    exceptionOpen: Number(row.exception_open) === 1,
  };
}

export interface VoidRequest {
  readonly companyId: string;
  readonly checkNumber: number;
  readonly reason: string;
  /** Who voids it, kept on the check: an operator's e-mail, or `api user <id>`. */
  readonly voidedBy: string;
}

export type VoidRequestRefusal = VoidRefusal | "invalid_reason";

/** Voids the check in the caller's unit and writes its audit row; a refusal writes nothing. */
export async function voidCheckAudited(
  tx: WriteTx,
  environment: Environment,
  actor: AuditActor,
  request: VoidRequest,
  now: number,
): Promise<Result<CheckRecord, VoidRequestRefusal>> {
  const reason = request.reason.trim();
  if (reason === "" || reason.length > VOID_REASON_LENGTH_MAX) {
    return refuse(
      "invalid_reason",
      `reason: 1 to ${VOID_REASON_LENGTH_MAX} characters, got ${reason.length}`,
      { field: "reason" },
    );
  }
  const before = await findCheckByNumber(tx, request.companyId, request.checkNumber);
  const voided = await voidCheck(tx, {
    companyId: request.companyId,
    checkNumber: request.checkNumber,
    reason,
    operator: request.voidedBy,
  }, now);
  if (!voided.ok) return voided;
  // A check voided or stale before is answered as it is, and nothing is recorded twice.
  if (before?.status === "issued") {
    await appendAudit(tx, environment, actor, {
      at: now,
      action: "checks:void",
      objectType: "check",
      objectId: voided.value.id,
      companyId: request.companyId,
      before: { check_number: before.checkNumber, status: before.status },
      after: {
        check_number: voided.value.checkNumber,
        status: voided.value.status,
        reason,
        voided_by: request.voidedBy,
        payout_id: voided.value.payoutId,
      },
    });
  }
  return ok(voided.value);
}
