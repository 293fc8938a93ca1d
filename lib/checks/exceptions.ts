/**
 * Paid-item exceptions (issue 19): a paid item that did not match its check cleanly stays open
 * until an operator resolves it, audited in the same unit. Two resolutions:
 * - `payment_stands`: the bank's payment is final, so the ledger records it. While the payout still
 *   holds its money for the check (its entry sent: the check issued, or voided or stale and paid
 *   before the void reached the bank), the payment completes the payout, the check is paid, and a
 *   difference from the amount written is posted: more is `check.paid_exception` (available to the
 *   bank), less is `check.paid_short` (the bank to available). Before the check's positive-pay file
 *   is sent the resolution is refused (resolve it once it is). Any other paid check (voided once
 *   its payout was offered again, unknown or paid twice) was money the ledger had released, so the
 *   whole paid amount goes from available to the bank (`check.paid_exception`); when available
 *   cannot cover it the resolution is refused and nothing is written (fund the line first).
 * - `bank_reversed`: the bank took the payment back; nothing is posted, the check stays as it is,
 *   and a void the bank's paid items covered already fails its payout now (lib/checks/voids.ts).
 */
import { and, eq } from "drizzle-orm";
import { checkExceptions, railBatchEntries } from "../../db/schema.ts";
import type { WriteTx } from "../../db/writer.ts";
import { appendAudit, type AuditActor } from "../audit/store.ts";
import { resolveLine } from "../identity/line_store.ts";
import type { LedgerTransactionKind } from "../ledger/postings.ts";
import { postTransaction } from "../ledger/store.ts";
import type { LedgerAccountCode } from "../ledger/types.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import { settleRailBatchEntry } from "../payouts/jobs.ts";
import { loadPayout } from "../payouts/store.ts";
import type { PaidImportDeps } from "./paid_import.ts";
import {
  exceptionLedgerEffect,
  type ExceptionResolution,
  exceptionResolutions,
  RESOLUTION_NOTE_LENGTH_MAX,
} from "./paid_import_rules.ts";
import { type CheckRecord, loadCheck } from "./register.ts";
import { confirmVoids } from "./voids.ts";

export type CheckExceptionRow = typeof checkExceptions.$inferSelect;

/** What resolving an exception posts when the bank's payment stands, before it is resolved. */
export interface LedgerEffect {
  readonly kind: LedgerTransactionKind;
  readonly from: LedgerAccountCode;
  readonly to: LedgerAccountCode;
  readonly amountCents: number;
}

/** The exceptions whose payment is the payout's own while the payout still holds its money. */
const PAYOUT_PAYMENT_KINDS: readonly string[] = ["amount_mismatch", "not_sent", "voided", "stale"];

/** A check as an exception's resolution reads it, with the status of its submission's entry. */
export interface ExceptionCheck {
  readonly status: string;
  readonly amountCents: number;
  /** The rail entry of the check's submission: `sent` while its payout holds the money in flight. */
  readonly entryStatus: string | null;
}

/**
 * Whether the bank's payment, if it stands, is the payout's own payment: the payout still holds
 * its money for this check (its entry is sent), whether the check is issued, or was voided or went
 * stale and the bank paid it before the void reached it. It then completes the payout.
 */
export function paymentCompletesPayout(
  exception: { readonly kind: string },
  check: ExceptionCheck | null,
): boolean {
  return check !== null && check.status !== "paid" && check.entryStatus === "sent" &&
    PAYOUT_PAYMENT_KINDS.includes(exception.kind);
}

/**
 * The ledger effect of `payment_stands` for an exception, given its check as it is now (null: the
 * register never gave the number): a payment that completes its payout posts only the difference
 * from the amount written (completion posts the rest, as every completion does); any other was
 * money the ledger had released, all of it from available. Null when nothing would be posted.
 */
export function ledgerEffectOf(
  exception: { readonly kind: string; readonly paidAmountCents: number },
  check: ExceptionCheck | null,
): LedgerEffect | null {
  const completes = paymentCompletesPayout(exception, check);
  const cents = exceptionLedgerEffect(
    completes ? "amount_mismatch" : "unknown",
    exception.paidAmountCents,
    completes ? check!.amountCents : null,
  );
  if (cents === 0) return null;
  return cents > 0
    ? { kind: "check.paid_exception", from: "available", to: "bank", amountCents: cents }
    : { kind: "check.paid_short", from: "bank", to: "available", amountCents: -cents };
}

export type ResolveRefusal =
  | "exception_not_found"
  | "exception_resolved"
  | "invalid_resolution"
  | "check_not_sent"
  | "insufficient_funds";

export interface ResolveExceptionInput {
  readonly exceptionId: string;
  readonly resolution: string;
  /** Why, in the operator's words: kept in the audit log. */
  readonly note: string | null;
  /** The companies the operator may act on (null: every company); another's is not found. */
  readonly companyIds: readonly string[] | null;
}

export interface ResolvedException {
  readonly exception: CheckExceptionRow;
  readonly ledgerTransactionId: string | null;
  /** The payout the resolution completed, if it completed one. */
  readonly completedPayoutId: string | null;
}

const notFound = (id: string) =>
  refuse("exception_not_found", `no check exception ${JSON.stringify(id)}`, {
    field: "exception",
  });

/** Resolves an open exception in one unit with its audit row; a resolved one is refused. */
export function resolveCheckException(
  deps: PaidImportDeps,
  actor: AuditActor,
  input: ResolveExceptionInput,
  now: number,
): Promise<Result<ResolvedException, ResolveRefusal>> {
  if (!(exceptionResolutions as readonly string[]).includes(input.resolution)) {
    return Promise.resolve(refuse(
      "invalid_resolution",
      `resolution ${JSON.stringify(input.resolution)}: one of ${exceptionResolutions.join(", ")}`,
      { field: "resolution" },
    ));
  }
  if (input.note !== null && input.note.length > RESOLUTION_NOTE_LENGTH_MAX) {
    return Promise.resolve(refuse(
      "invalid_resolution",
      `note: at most ${RESOLUTION_NOTE_LENGTH_MAX} characters, got ${input.note.length}`,
      { field: "note" },
    ));
  }
  const resolution = input.resolution as ExceptionResolution;
  return deps.database.writer.write(
    async (tx): Promise<Result<ResolvedException, ResolveRefusal>> => {
      const [exception] = await tx.db.select().from(checkExceptions)
        .where(eq(checkExceptions.id, input.exceptionId));
      if (!exception || (input.companyIds && !input.companyIds.includes(exception.companyId))) {
        return tx.abort(notFound(input.exceptionId));
      }
      if (exception.status !== "open") {
        return tx.abort(refuse(
          "exception_resolved",
          `check exception ${exception.id} was resolved (${exception.resolution}) already`,
          { field: "exception", details: { resolution: exception.resolution } },
        ));
      }
      const check = exception.checkId ? await loadCheck(tx, exception.checkId) : null;
      let ledgerTransactionId: string | null = null;
      let completedPayoutId: string | null = null;
      if (resolution === "payment_stands") {
        const stands = await paymentStands(tx, deps, exception, check, now);
        if (!stands.ok) return tx.abort(stands);
        ({ ledgerTransactionId, completedPayoutId } = stands.value);
      }
      const resolved: CheckExceptionRow = {
        ...exception,
        status: "resolved",
        resolution,
        ledgerTransactionId,
        resolvedBy: actor.operator?.id ?? null,
        resolvedAt: now,
      };
      await tx.db.update(checkExceptions).set({
        status: "resolved",
        resolution,
        ledgerTransactionId,
        resolvedBy: resolved.resolvedBy,
        resolvedAt: now,
      }).where(and(eq(checkExceptions.id, exception.id), eq(checkExceptions.status, "open")));
      if (resolution === "bank_reversed") {
        const { rows } = await tx.execute({
          sql: "SELECT max(imported_at) AS at FROM check_paid_imports WHERE company_id = ?",
          args: [exception.companyId],
        });
        await confirmVoids(tx, deps.runtime, exception.companyId, Number(rows[0].at), now);
      }
      await appendAudit(tx, deps.environment, actor, {
        at: now,
        action: "checks:resolve-exception",
        objectType: "check_exception",
        objectId: exception.id,
        companyId: exception.companyId,
        before: auditFacts(exception),
        after: {
          ...auditFacts(resolved),
          note: input.note,
          completed_payout_id: completedPayoutId,
        },
      });
      return ok({ exception: resolved, ledgerTransactionId, completedPayoutId });
    },
  );
}

const auditFacts = (row: CheckExceptionRow) => ({
  id: row.id,
  check_number: row.checkNumber,
  kind: row.kind,
  paid_amount_cents: row.paidAmountCents,
  paid_date: row.paidDate,
  status: row.status,
  resolution: row.resolution,
  ledger_transaction_id: row.ledgerTransactionId,
});

/** The status of the rail entry a check's submission queued, or null when there is none. */
async function entryStatusOf(tx: WriteTx, reference: string): Promise<string | null> {
  const [entry] = await tx.db.select({ status: railBatchEntries.status }).from(railBatchEntries)
    .where(eq(railBatchEntries.reference, reference));
  return entry?.status ?? null;
}

async function paymentStands(
  tx: WriteTx,
  deps: PaidImportDeps,
  exception: CheckExceptionRow,
  check: CheckRecord | null,
  now: number,
): Promise<
  Result<
    { ledgerTransactionId: string | null; completedPayoutId: string | null },
    ResolveRefusal
  >
> {
  let completedPayoutId: string | null = null;
  const entryStatus = check ? await entryStatusOf(tx, check.reference) : null;
  const facts = check && { status: check.status, amountCents: check.amountCents, entryStatus };
  if (
    check !== null && check.status !== "paid" && PAYOUT_PAYMENT_KINDS.includes(exception.kind) &&
    (entryStatus === "queued" || entryStatus === "batched")
  ) {
    return refuse(
      "check_not_sent",
      `check ${check.checkNumber}'s positive-pay file is not sent yet; resolve the exception once it is (its payout then completes)`,
      { field: "exception" },
    );
  }
  if (paymentCompletesPayout(exception, facts)) {
    await tx.execute({
      sql: `UPDATE checks SET status = 'paid', paid_date = ?, paid_amount_cents = ?, paid_at = ?
            WHERE id = ? AND status <> 'paid'`,
      args: [exception.paidDate, exception.paidAmountCents, now, check!.id],
    });
    const settled = await settleRailBatchEntry(
      tx,
      deps.runtime,
      check!.reference,
      { kind: "completed" },
      now,
    );
    if (!settled.ok) throw new Error(`paid check ${check!.checkNumber}: ${settled.message}`);
    completedPayoutId = check!.payoutId;
  }
  // The check as it was before this unit: a completed mismatch posts its difference.
  const effect = ledgerEffectOf(exception, facts);
  if (effect === null) return ok({ ledgerTransactionId: null, completedPayoutId });
  const payout = check ? await loadPayout(tx, check.payoutId) : null;
  const lineId = payout?.lineId ?? (await resolveLine(tx, exception.companyId, null))?.id;
  if (!lineId) throw new Error(`company ${exception.companyId} has no business line`);
  const posted = await postTransaction(tx, {
    companyId: exception.companyId,
    lineId,
    kind: effect.kind,
    transfers: [{ from: effect.from, to: effect.to, amountCents: effect.amountCents }],
    ...(payout ? { payoutId: payout.id } : {}),
    postedAt: now,
  });
  if (!posted.ok) {
    return refuse(
      "insufficient_funds",
      `the bank's payment of check ${exception.checkNumber} takes ${effect.amountCents} cents from available, which holds ${
        posted.details?.balance_cents ?? 0
      }: fund the line, then resolve the exception`,
      { field: "exception", details: posted.details },
    );
  }
  return ok({ ledgerTransactionId: posted.value.transactionId, completedPayoutId });
}
