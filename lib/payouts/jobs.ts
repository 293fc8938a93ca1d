/**
 * What moves payouts and fundings over time: selection, sending through a rail, the rail's
 * outcome, failure handling by the company's retry policy, and ACH funding clearing. Each handler
 * runs inside the write unit of its due job.
 */
import { feesFor, holdFor } from "./fees.ts";
import { modalityOf } from "./states.ts";
import { type Rail, retryAllowed, sandboxScenario, testPayeeMarker } from "../rails/mod.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import type { Environment } from "../platform/config.ts";
import { readFeeSchedule } from "./fee_store.ts";
import { clearAchFunding } from "../funding/store.ts";
import { type NotificationSettings, notifyPayee } from "../notify/store.ts";
import { applyMove, loadPayout, type MoveRefusal, type PayoutRow } from "./store.ts";
import { type DueJob, scheduleJob } from "../../db/scheduler_store.ts";
import type { WriteTx } from "../../db/writer.ts";

export interface PayoutRuntime {
  readonly environment: Environment;
  readonly rail: Rail;
  /** How long a payee has to choose a method before the offer expires and the payout cancels. */
  readonly offerTtlMs: number;
  readonly notifications: NotificationSettings;
}

/** Reminders go out this long before an offer expires (DESIGN 14: reminders before). */
const OFFER_REMINDERS_BEFORE_MS = [7 * 86_400_000, 86_400_000];

/**
 * Every offer (first or renewed) gets its own reminders and expiry, one pending job at a time: each
 * reminder schedules the next step when it runs, so an offer keeps one scheduled row instead of
 * three. A renewed offer makes older ones moot.
 */
export async function scheduleOfferExpiry(
  tx: WriteTx,
  runtime: PayoutRuntime,
  payout: PayoutRow,
  now: number,
): Promise<void> {
  await scheduleNextOfferStep(tx, payout, now, now + runtime.offerTtlMs, now);
}

/** The offer's first reminder or its expiry due after `after`. */
async function scheduleNextOfferStep(
  tx: WriteTx,
  payout: Pick<PayoutRow, "id" | "companyId">,
  offeredAt: number,
  expiresAt: number,
  after: number,
): Promise<void> {
  const reminderAt = OFFER_REMINDERS_BEFORE_MS.map((before) => expiresAt - before)
    .find((dueAt) => dueAt > after);
  await scheduleJob(tx, {
    companyId: payout.companyId,
    kind: reminderAt === undefined ? "payout.expire_offer" : "payout.remind_offer",
    subjectId: payout.id,
    dueAt: reminderAt ?? expiresAt,
    payload: { offered_at: offeredAt, expires_at: expiresAt },
  }, after);
}

/** Whether `offeredAt` is the payout's latest offer (a re-offer since makes older jobs moot). */
async function isLatestOffer(tx: WriteTx, payoutId: string, offeredAt: number): Promise<boolean> {
  const { rows } = await tx.execute({
    sql:
      `SELECT max(at) AS at FROM payout_transitions WHERE payout_id = ? AND to_status = 'modality_offered'`,
    args: [payoutId],
  });
  return Number(rows[0].at) === offeredAt;
}

export interface MethodSelection {
  readonly paymentMethodId: number;
  /** Entered details the rail looks at; of the numbers only the last four digits are kept. */
  readonly details: { accountNumber?: string; cardNumber?: string; zip?: string };
  /** What the payout keeps of the details: non-secret fields and sealed values only. */
  readonly kept?: Readonly<Record<string, string>>;
}

type SelectRefusal = MoveRefusal | "method_not_allowed";

/** The payee chose a method: the hold follows its fees, then the payout is sent at once. */
export async function selectMethod(
  tx: WriteTx,
  runtime: PayoutRuntime,
  payoutId: string,
  selection: MethodSelection,
  now: number,
): Promise<Result<PayoutRow, SelectRefusal>> {
  const payout = await loadPayout(tx, payoutId);
  if (!payout) return refuse("payout_not_found", `no payout ${payoutId}`);
  const modality = modalityOf(selection.paymentMethodId);
  if (!modality || !payout.allowedPaymentMethodIds.includes(selection.paymentMethodId)) {
    return refuse(
      "method_not_allowed",
      `payment method ${selection.paymentMethodId} is not allowed for this payee`,
      {
        field: "payment_method_id",
      },
    );
  }
  const schedule = await readFeeSchedule(tx, payout.companyId);
  const number = selection.details.accountNumber ?? selection.details.cardNumber;
  const marker = testPayeeMarker(payout.payeeId ? payout.payeeUuid : payout.email);
  const selected = await applyMove(
    tx,
    payoutId,
    {
      kind: "select",
      paymentMethodId: selection.paymentMethodId,
      fees: feesFor(schedule, selection.paymentMethodId),
    },
    now,
    {
      detail: modality.code,
      methodDetails: {
        ...selection.kept,
        modality: modality.code,
        scenario: sandboxScenario(modality.code, selection.details, marker),
        ...(number ? { last_four: number.slice(-4) } : {}),
      },
    },
  );
  if (!selected.ok) return selected;
  return await sendPayout(tx, runtime, selected.value, now);
}

/** Submits a selected or retried payout to the rail and schedules the rail's outcome. */
async function sendPayout(
  tx: WriteTx,
  runtime: PayoutRuntime,
  payout: PayoutRow,
  now: number,
): Promise<Result<PayoutRow, MoveRefusal>> {
  const modality = modalityOf(payout.paymentMethodId!)!;
  const submitted = runtime.rail.submit({
    payoutId: payout.id,
    modality: modality.code,
    attempt: payout.retryCount + (payout.status === "failed" ? 1 : 0),
    scenario: (payout.methodDetails.scenario as never) ?? "settles",
  }, now);
  if (!submitted.ok) {
    if (submitted.code === "rail_not_configured") {
      // Loud on purpose: an operator must configure the rail; the payout fails, it is never pretended paid.
      console.error(
        JSON.stringify({ level: "error", msg: submitted.message, payout_id: payout.id }),
      );
    }
    if (payout.status === "failed") {
      return await handleFailure(tx, runtime, payout.id, submitted.code, now);
    }
    const refused = await applyMove(
      tx,
      payout.id,
      { kind: "rail_refused", reason: submitted.code },
      now,
      {
        detail: submitted.message,
      },
    );
    if (!refused.ok) return refused;
    return await handleFailure(tx, runtime, payout.id, submitted.code, now);
  }
  const step = payout.status === "failed"
    ? { kind: "retry" as const, allowed: true }
    : { kind: "send" as const };
  const sent = await applyMove(tx, payout.id, step, now, {
    detail: submitted.value.reference,
    railReference: submitted.value.reference,
  });
  if (!sent.ok) return sent;
  const outcome = submitted.value.outcome;
  await scheduleJob(tx, {
    companyId: payout.companyId,
    kind: outcome.kind === "complete" ? "payout.complete" : "payout.fail",
    subjectId: payout.id,
    dueAt: outcome.at,
    payload: outcome.kind === "fail" ? { reason: outcome.reason } : {},
  }, now);
  return sent;
}

/**
 * A failed payout is retried when the company's policy allows it for this reason; otherwise the
 * payee is offered the methods again (the hold returns to the highest fees of the allowed methods).
 */
async function handleFailure(
  tx: WriteTx,
  runtime: PayoutRuntime,
  payoutId: string,
  reason: string,
  now: number,
): Promise<Result<PayoutRow, MoveRefusal>> {
  const payout = (await loadPayout(tx, payoutId))!;
  const { rows } = await tx.execute({
    sql: "SELECT retry_max, retry_reasons FROM companies WHERE id = ?",
    args: [payout.companyId],
  });
  const policy = {
    retryMax: Number(rows[0].retry_max),
    retryReasons: JSON.parse(String(rows[0].retry_reasons)) as string[],
  };
  if (retryAllowed(policy, reason, payout.retryCount)) {
    await scheduleJob(tx, {
      companyId: payout.companyId,
      kind: "payout.retry",
      subjectId: payoutId,
      dueAt: now,
    }, now);
    return ok(payout);
  }
  return await reofferFailed(tx, runtime, payout, reason, now);
}

/**
 * Offers a failed payout's methods to its payee again. That may need a larger hold than
 * available covers: the payout then stays failed with its money held, the company (told by the
 * failed event) funds or cancels, and the next credit of the line tries again
 * (`scheduleReoffersAwaitingFunds`).
 */
async function reofferFailed(
  tx: WriteTx,
  runtime: PayoutRuntime,
  payout: PayoutRow,
  reason: string,
  now: number,
): Promise<Result<PayoutRow, MoveRefusal>> {
  const schedule = await readFeeSchedule(tx, payout.companyId);
  const reoffered = await applyMove(
    tx,
    payout.id,
    {
      kind: "reoffer",
      holdCents: holdFor(payout.amountCents, payout.allowedPaymentMethodIds, schedule),
    },
    now,
    { detail: `re-offered after ${reason}` },
  );
  if (!reoffered.ok && reoffered.code === "insufficient_funds") return ok(payout);
  if (reoffered.ok) {
    await scheduleOfferExpiry(tx, runtime, reoffered.value, now);
    await notifyPayee(tx, runtime.notifications, payout.id, "reoffer", now);
  }
  return reoffered;
}

/** Test payees act by themselves in the sandbox: `success+x` and `fail+x` select x at once. */
async function actAsTestPayee(
  tx: WriteTx,
  runtime: PayoutRuntime,
  payout: PayoutRow,
  now: number,
): Promise<void> {
  if (runtime.environment !== "test") return;
  const marker = testPayeeMarker(payout.payeeId ? payout.payeeUuid : payout.email);
  if (!marker || marker.kind === "noaction") return;
  const method = modalityOf(marker.modality)!;
  if (!payout.allowedPaymentMethodIds.includes(method.id)) return;
  // A refused selection (say, fees changed since the offer) leaves the payout offered, as a person would.
  await selectMethod(tx, runtime, payout.id, { paymentMethodId: method.id, details: {} }, now);
}

/** Handlers of the payout and funding job kinds. */
export function payoutJobHandlers(
  runtime: PayoutRuntime,
): Record<string, (tx: WriteTx, job: DueJob) => Promise<void>> {
  const moveOrThrow = async (result: Promise<Result<unknown>>, job: DueJob) => {
    const moved = await result;
    if (!moved.ok) throw new Error(`${job.kind} ${job.subjectId}: ${moved.message}`);
  };
  return {
    "payout.offer": async (tx, job) => {
      const payout = await loadPayout(tx, job.subjectId);
      // A payout canceled before its offer simply stays canceled.
      if (payout?.status !== "created") return;
      const offered = await applyMove(tx, job.subjectId, { kind: "offer" }, job.dueAt);
      if (!offered.ok) throw new Error(`payout.offer: ${offered.message}`);
      await scheduleOfferExpiry(tx, runtime, offered.value, job.dueAt);
      await notifyPayee(tx, runtime.notifications, job.subjectId, "offer", job.dueAt);
      await actAsTestPayee(tx, runtime, offered.value, job.dueAt);
    },
    "payout.reoffer": async (tx, job) => {
      const payout = await loadPayout(tx, job.subjectId);
      // Canceled, or re-offered by another path, since the credit that scheduled this.
      if (payout?.status !== "failed") return;
      await moveOrThrow(
        reofferFailed(tx, runtime, payout, payout.failureReason ?? "a failure", job.dueAt),
        job,
      );
    },
    "payout.request_endorsement": async (tx, job) => {
      const payout = await loadPayout(tx, job.subjectId);
      if (payout?.status !== "awaiting_endorsement") return;
      await notifyPayee(tx, runtime.notifications, job.subjectId, "endorsement", job.dueAt);
    },
    "payout.expire_offer": async (tx, job) => {
      const payout = await loadPayout(tx, job.subjectId);
      if (payout?.status !== "modality_offered") return;
      // Only the latest offer's expiry counts: a re-offer after this one was made renewed it.
      if (!await isLatestOffer(tx, job.subjectId, Number(job.payload.offered_at))) return;
      await moveOrThrow(
        applyMove(tx, job.subjectId, { kind: "expire_offer" }, job.dueAt, {
          detail: "the payee did not choose in time",
        }),
        job,
      );
    },
    "payout.remind_offer": async (tx, job) => {
      const payout = await loadPayout(tx, job.subjectId);
      if (payout?.status !== "modality_offered") return;
      const offeredAt = Number(job.payload.offered_at);
      if (!await isLatestOffer(tx, job.subjectId, offeredAt)) return;
      await notifyPayee(tx, runtime.notifications, job.subjectId, "resend", job.dueAt);
      // Reminders scheduled before offers were chained carry no expiry: theirs is already pending.
      if (typeof job.payload.expires_at !== "number") return;
      await scheduleNextOfferStep(tx, payout, offeredAt, job.payload.expires_at, job.dueAt);
    },
    "payout.complete": (tx, job) =>
      moveOrThrow(applyMove(tx, job.subjectId, { kind: "complete" }, job.dueAt), job),
    "payout.fail": async (tx, job) => {
      const reason = String(job.payload.reason);
      await moveOrThrow(
        applyMove(tx, job.subjectId, { kind: "fail", reason }, job.dueAt, { detail: reason }),
        job,
      );
      await moveOrThrow(handleFailure(tx, runtime, job.subjectId, reason, job.dueAt), job);
    },
    "payout.retry": async (tx, job) => {
      const payout = await loadPayout(tx, job.subjectId);
      // The company may have canceled it since.
      if (payout?.status !== "failed") return;
      await moveOrThrow(sendPayout(tx, runtime, payout, job.dueAt), job);
    },
    "funding.clear": async (tx, job) => {
      const cleared = await clearAchFunding(tx, job.subjectId, job.dueAt);
      // A funding returned before its clearing day has nothing left to clear.
      if (!cleared.ok && cleared.code !== "funding_not_pending") {
        throw new Error(`funding.clear: ${cleared.message}`);
      }
    },
  };
}
