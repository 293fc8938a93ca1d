/**
 * What moves payouts and fundings over time: selection, submission to a rail, the rail's
 * outcome, failure handling, offers' reminders and expiry, and ACH funding clearing. The
 * decisions are made in lib/payouts/policy.ts; the handlers here apply them, each inside the
 * write unit of its due job, except `payout.submit`, which calls the rail between two units.
 */
import { feesFor, holdFor } from "./fees.ts";
import { modalityOf } from "./states.ts";
import { afterFailure, nextOfferStep, type RetryPolicy } from "./policy.ts";
import {
  type PayoutRail,
  type RailAnswer,
  type RailDirectory,
  type RailRefusal,
  type RailSubmission,
  submissionReference,
  type SubmissionTerms,
} from "../rails/seam.ts";
import {
  sandboxScenario,
  TEST_PAYEE_MAILING_ADDRESS,
  testPayeeCard,
  testPayeeMarker,
  testPayeeWallet,
} from "../rails/sandbox.ts";
import { recordRailException } from "../rails/exceptions.ts";
import { decideEntryOutcome } from "./transition.ts";
import {
  type BatchEntry,
  batchOfEntry,
  type BatchPayoutMoves,
  batchRailJobHandlers,
  type EntryOutcome,
  settleBatchEntry,
} from "../rails/batch.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import type { Environment } from "../platform/config.ts";
import { readFeeSchedule } from "./fee_store.ts";
import {
  clearAchFunding,
  loadFunding,
  recordAchDebitSent,
  returnAchFunding,
} from "../funding/store.ts";
import { screenBeforeSubmission } from "../sanctions/service.ts";
import {
  type NotificationSettings,
  notifyPayee,
  type PayeeNotice,
  payeeWasNotified,
} from "../notify/store.ts";
import {
  applyMove,
  applyMoves,
  countSubmission,
  loadPayout,
  loadPayouts,
  MAILING_ADDRESS_FIELDS,
  type MoveRefusal,
  type MoveRequest,
  payoutHasMailingAddress,
  type PayoutRow,
  SUBMISSION_CALLING,
  SUBMISSION_TERMS,
} from "./store.ts";
import {
  DEADLINE_REMINDERS_BEFORE_MS,
  expiryDecision,
  offerDeadline,
  reminderEscalates,
  utcDate,
} from "../obligations/deadline.ts";
import { readObligationSettings } from "../obligations/store.ts";
import { fallBackAtDeadline } from "../obligations/fallback.ts";
import { ensureSweep } from "../obligations/sweep.ts";
import { type DueJob, type NewJob, scheduleJob, scheduleJobs } from "../../db/scheduler_store.ts";
import {
  batchedUnitJob,
  externalJob,
  type JobHandler,
  type RunningJob,
} from "../../db/scheduler.ts";
import { RUN_ALONE, type RunAlone, type WriteTx } from "../../db/writer.ts";

/** The kinds of the payout and funding jobs. */
export type PayoutJobKind =
  | "payout.offer"
  | "payout.reoffer"
  | "payout.request_endorsement"
  | "payout.expire_offer"
  | "payout.remind_offer"
  | "payout.submit"
  | "payout.complete"
  | "payout.fail"
  | "payout.retry"
  /** Scheduled by ACH fundings before they went through the bank file (kept for those still pending). */
  | "funding.clear";

export interface PayoutRuntime {
  readonly environment: Environment;
  /** A live bank file over this total waits for a second admin before it is released. */
  readonly bankFileApprovalLimitCents: number;
  /** How long a payee has to choose a method before the offer expires and the payout cancels. */
  readonly offerTtlMs: number;
  /** The E-13B font of checks' MICR line, or null: checks then print "not negotiable". */
  readonly micrFont: Uint8Array | null;
  readonly notifications: NotificationSettings;
  /** Whether API requests are being answered now: a large file's send rests between its units. */
  readonly apiBusy: () => boolean;
}

/**
 * A submission's claim: the rail's answer must come well within it, or another run submits the
 * same reference again (which the rail answers with its first answer).
 */
export const RAIL_SUBMIT_LEASE_MS = 60_000;

function schedulePayoutJob(
  tx: WriteTx,
  job: {
    companyId: string;
    kind: PayoutJobKind;
    subjectId: string;
    dueAt: number;
    payload?: Record<string, unknown>;
  },
  now: number,
): Promise<string> {
  return scheduleJob(tx, job, now);
}

/**
 * Every offer (first or renewed) gets its own reminders and expiry, one pending job at a time: each
 * reminder schedules the next step when it runs, so an offer keeps one scheduled row instead of
 * three. A renewed offer makes older ones moot. An offer whose payout has a pay_by still ahead
 * falls due then, with the deadline's escalating reminders; any other after the offer's time.
 */
export async function scheduleOfferExpiry(
  tx: WriteTx,
  runtime: PayoutRuntime,
  payout: PayoutRow,
  now: number,
): Promise<void> {
  await scheduleJob(tx, offerExpiryJob(runtime, payout, now), now);
}

/** The offer's first reminder or its expiry due after `after`. */
async function scheduleNextOfferStep(
  tx: WriteTx,
  payout: Pick<PayoutRow, "id" | "companyId">,
  offeredAt: number,
  expiresAt: number,
  after: number,
  payBy: boolean,
): Promise<void> {
  await schedulePayoutJob(tx, nextOfferStepJob(payout, offeredAt, expiresAt, after, payBy), after);
}

/** The job of the offer's first reminder or its expiry due after `after`. */
function nextOfferStepJob(
  payout: Pick<PayoutRow, "id" | "companyId">,
  offeredAt: number,
  expiresAt: number,
  after: number,
  payBy: boolean,
): NewJob & { kind: PayoutJobKind } {
  const step = payBy
    ? nextOfferStep(expiresAt, after, DEADLINE_REMINDERS_BEFORE_MS)
    : nextOfferStep(expiresAt, after);
  return {
    companyId: payout.companyId,
    kind: step.kind === "remind" ? "payout.remind_offer" : "payout.expire_offer",
    subjectId: payout.id,
    dueAt: step.dueAt,
    payload: { offered_at: offeredAt, expires_at: expiresAt, ...(payBy ? { pay_by: true } : {}) },
  };
}

/** The job of an offer's first reminder or its expiry, as scheduleOfferExpiry schedules it. */
function offerExpiryJob(runtime: PayoutRuntime, payout: PayoutRow, now: number): NewJob {
  const deadline = offerDeadline(payout.payBy, now, runtime.offerTtlMs);
  return nextOfferStepJob(payout, now, deadline.expiresAt, now, deadline.payBy);
}

/**
 * An offer that fell due unchosen, as the company's setting decides: canceled (its hold back to
 * available), kept owed, or fallen back to a mailed check whose submission is scheduled here.
 */
async function expireOffer(
  tx: WriteTx,
  runtime: PayoutRuntime,
  payout: PayoutRow,
  now: number,
): Promise<Result<PayoutRow, MoveRefusal>> {
  const settings = await readObligationSettings(tx, payout.companyId);
  const decided = expiryDecision(settings.offerExpiryAction, {
    fellBackBefore: payout.fellBackAt !== null,
  });
  // Whatever it becomes, the payout is still owed: due diligence follows it from today.
  await ensureSweep(tx, payout.companyId, now, now);
  if (decided === "cancel") {
    return await applyMove(tx, payout.id, { kind: "expire_offer" }, now, {
      detail: "the payee did not choose in time",
    });
  }
  if (decided === "hold") {
    return await applyMove(tx, payout.id, { kind: "hold_owed" }, now, {
      detail: "the payee did not choose in time: kept as still owed (unclaimed property)",
    });
  }
  const fallback = await fallBackAtDeadline(tx, payout, now);
  if (!fallback.ok) return fallback;
  if (fallback.value.kind === "fell_back") {
    await requestSubmission(tx, fallback.value.payout, now);
    await notifyPayee(tx, runtime.notifications, payout.id, "fallback", now);
  }
  return ok(fallback.value.payout);
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
  readonly details: {
    accountNumber?: string;
    cardNumber?: string;
    zip?: string;
  };
  /** What the payout keeps of the details: non-secret fields and sealed values only. */
  readonly kept?: Readonly<Record<string, string>>;
}

type SelectRefusal = MoveRefusal | "method_not_allowed" | "mailing_address_missing";

/**
 * The payee chose a method: the hold follows its fees, and the payout's submission to the rail is
 * scheduled in the same unit (the `payout.submit` job calls the rail outside it).
 */
export async function selectMethod(
  tx: WriteTx,
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
  // A postal check is never printed without an address: the payee enters one, or the record has it.
  if (
    modality.code === "check" &&
    !MAILING_ADDRESS_FIELDS.every((field) => (selection.kept?.[field] ?? "").trim() !== "") &&
    !await payoutHasMailingAddress(tx, payoutId)
  ) {
    return refuse(
      "mailing_address_missing",
      `a postal check needs the payee's mailing address (${
        MAILING_ADDRESS_FIELDS.join(", ")
      }); payout ${payoutId} has none`,
      { field: "address_one" },
    );
  }
  const schedule = await readFeeSchedule(tx, payout.companyId);
  const number = selection.details.accountNumber ?? selection.details.cardNumber;
  const marker = testPayeeMarker(payout.payeeId ? payout.payeeUuid : payout.email);
  const scenario = sandboxScenario(modality.code, selection.details, marker);
  // A payee who chooses after the deadline's fallback, before its check left, replaces it.
  const overFallback = payout.status === "modality_selected" &&
    payout.methodDetails.fallback === true;
  const selected = await applyMove(
    tx,
    payoutId,
    {
      kind: overFallback ? "rechoose" : "select",
      paymentMethodId: selection.paymentMethodId,
      fees: feesFor(schedule, selection.paymentMethodId),
    },
    now,
    {
      detail: modality.code,
      methodDetails: {
        ...selection.kept,
        modality: modality.code,
        ...(scenario === null ? {} : { scenario }),
        ...(number ? { last_four: number.slice(-4) } : {}),
      },
    },
  );
  if (!selected.ok) return selected;
  await requestSubmission(tx, selected.value, now);
  return selected;
}

/** Numbers the payout's next submission and schedules its `payout.submit` job, due now. */
export async function requestSubmission(
  tx: WriteTx,
  payout: PayoutRow,
  now: number,
): Promise<void> {
  const submission = await countSubmission(tx, payout.id);
  await schedulePayoutJob(tx, {
    companyId: payout.companyId,
    kind: "payout.submit",
    subjectId: payout.id,
    dueAt: now,
    payload: { submission },
  }, now);
}

/**
 * Whether the payout still waits for its `submission`-th submission: chosen (the first attempt on
 * the method) or failed (an automatic retry), and not submitted again since.
 */
function awaitsSubmission(payout: PayoutRow | null, submission: number): payout is PayoutRow {
  return payout !== null && payout.submissionCount === submission &&
    (payout.status === "modality_selected" || payout.status === "failed");
}

function submissionOf(job: DueJob): number {
  const submission = job.payload.submission;
  if (typeof submission !== "number") {
    throw new Error(`payout.submit ${job.id} carries no submission number`);
  }
  return submission;
}

/** What the rail is given of a payout waiting for its submission. */
function railSubmission(payout: PayoutRow, submission: number, at: number): RailSubmission {
  const modality = modalityOf(payout.paymentMethodId!)!;
  return {
    reference: submissionReference(payout.id, submission),
    companyId: payout.companyId,
    payoutId: payout.id,
    modality: modality.code,
    // What reaches the payee; the fees stay on the ledger.
    amountCents: payout.amountCents - payout.payeeFeeCents,
    attempt: payout.retryCount + (payout.status === "failed" ? 1 : 0),
    submittedAt: at,
    details: Object.fromEntries(
      Object.entries(payout.methodDetails).filter(([, value]) => typeof value === "string"),
    ) as Record<string, string>,
  };
}

/**
 * The rail took the payout: the money is sent (`send`, or `retry` from failed) with the rail's
 * reference, through the state machine.
 */
async function recordSent(
  tx: WriteTx,
  payout: PayoutRow,
  railReference: string,
  now: number,
): Promise<Result<PayoutRow, MoveRefusal>> {
  const { payoutId, step, options } = sentMove(payout, railReference);
  return await applyMove(tx, payoutId, step, now, options);
}

/** The move of a payout the rail took under `railReference`. */
function sentMove(payout: PayoutRow, railReference: string): MoveRequest {
  return {
    payoutId: payout.id,
    step: payout.status === "failed" ? { kind: "retry", allowed: true } : { kind: "send" },
    options: { detail: railReference, railReference },
  };
}

/** The rail refused the payout before sending it: it fails, and its failure is handled. */
async function recordRefused(
  tx: WriteTx,
  runtime: PayoutRuntime,
  payout: PayoutRow,
  answer: { readonly reason: string; readonly message: string },
  now: number,
): Promise<Result<PayoutRow, MoveRefusal>> {
  if (answer.reason === "rail_not_configured" || answer.reason === "sanctions_list_missing") {
    // Loud on purpose: an operator must configure the rail or load the list; the payout is never pretended paid.
    console.error(JSON.stringify({ level: "error", msg: answer.message, payout_id: payout.id }));
  }
  if (payout.status !== "failed") {
    const refused = await applyMove(
      tx,
      payout.id,
      { kind: "rail_refused", reason: answer.reason },
      now,
      { detail: answer.message },
    );
    if (!refused.ok) return refused;
  }
  return await handleFailure(tx, runtime, payout.id, answer.reason, now);
}

/**
 * A rail accepted a submission the payout no longer waits for: it was canceled (a failed payout
 * may be, while its retry is being submitted) or submitted again since. The answer moves nothing:
 * the money stays where the ledger has it, and an operator must recall the payment from the rail.
 */
function logUnwantedAcceptance(
  payout: PayoutRow | null,
  reference: string,
  railReference: string,
): void {
  console.error(JSON.stringify({
    level: "error",
    msg: "a rail accepted a payout that no longer waits for it: recall the payment from the rail",
    payout_id: payout?.id ?? null,
    status: payout?.status ?? null,
    reference,
    rail_reference: railReference,
  }));
}

/**
 * Marks the claimed job as handing its payout to a per-payout rail, in the claiming unit: until
 * the answer is recorded (or, after a failed call, until a retry records one) the submission is
 * money in flight, and cancel and re-offer are refused (`payoutMoneyInFlight`). The rail's terms
 * are decided at the first attempt and kept in the job, so every attempt sends the same request.
 */
async function handOver(
  tx: WriteTx,
  job: DueJob,
  rail: PayoutRail,
  submission: RailSubmission,
): Promise<{ rail: PayoutRail; submission: RailSubmission }> {
  const kept = job.payload[SUBMISSION_TERMS];
  const terms = typeof kept === "object" && kept !== null
    ? kept as SubmissionTerms
    : await rail.terms?.(tx, submission) ?? {};
  await tx.execute({
    sql: `UPDATE scheduled_jobs SET payload = json_set(payload, '$.${SUBMISSION_CALLING}', 1,
            '$.${SUBMISSION_TERMS}', json(?)) WHERE id = ?`,
    args: [JSON.stringify(terms), job.id],
  });
  return { rail, submission: { ...submission, terms } };
}

/**
 * Submits a payout to its environment's rail: the claiming unit builds the submission (or queues
 * it for a batch rail's cutoff), the rail is called outside every unit, and the answer is
 * recorded through the state machine. Its reference (payout id + submission number) makes a
 * second call after a crash return the rail's first answer instead of paying twice.
 */
function submitJob(runtime: PayoutRuntime, rails: RailDirectory): JobHandler {
  type Submitted = { rail: PayoutRail; submission: RailSubmission };
  return externalJob<Submitted, Submitted & { answer: RailAnswer }>({
    leaseMs: RAIL_SUBMIT_LEASE_MS,
    async prepare(tx, job) {
      const payout = await loadPayout(tx, job.subjectId);
      const number = submissionOf(job);
      // Canceled from failed before its retry went out, or superseded: nothing to submit.
      if (!awaitsSubmission(payout, number)) return null;
      const refuseSubmission = async (reason: RailRefusal, message: string) => {
        const answer = { kind: "refused", reason, message } as const;
        await moveOrThrow(recordRefused(tx, runtime, payout, answer, job.dueAt), job);
        return null;
      };
      const screening = await screenBeforeSubmission(tx, runtime.environment, payout, job.dueAt);
      // Held for an operator's review: the review's decision submits it or fails it.
      if (screening === "held") return null;
      if (screening === "no_list") {
        return await refuseSubmission(
          "sanctions_list_missing",
          `no sanctions list is loaded in ${runtime.environment}: payout ${payout.id} was not screened and not sent (deno task admin ofac:load)`,
        );
      }
      const submission = railSubmission(payout, number, job.dueAt);
      const rail = rails.forModality(submission.modality);
      // The sandbox binds every rail to its simulator, so only live finds one unconfigured.
      if (rail.configured && !await rail.configured(tx, payout.companyId)) {
        return await refuseSubmission(
          "rail_not_configured",
          `no ${submission.modality} rail is configured for company ${payout.companyId} in ${runtime.environment}; payout ${payout.id} was not sent`,
        );
      }
      if (rail.shape === "per_payout") return await handOver(tx, job, rail, submission);
      await rail.queue(tx, {
        companyId: payout.companyId,
        payoutId: payout.id,
        fundingId: null,
        direction: "credit",
        reference: submission.reference,
        amountCents: submission.amountCents,
      }, job.dueAt);
      return null;
    },
    call: async ({ rail, submission }) => ({
      rail,
      submission,
      answer: await rail.submit(submission),
    }),
    async record(tx, job, { rail, submission, answer }) {
      const payout = await loadPayout(tx, job.subjectId);
      const number = submissionOf(job);
      if (!awaitsSubmission(payout, number)) {
        if (answer.kind === "accepted") {
          logUnwantedAcceptance(
            payout,
            submissionReference(job.subjectId, number),
            answer.railReference,
          );
        }
        return;
      }
      if (answer.kind === "refused") {
        await moveOrThrow(recordRefused(tx, runtime, payout, answer, job.dueAt), job);
        return;
      }
      await moveOrThrow(recordSent(tx, payout, answer.railReference, job.dueAt), job);
      await rail.accepted?.(tx, submission, answer, job.dueAt);
      // A rail that knew the outcome when it answered: it arrives as a job at the outcome's time.
      if (answer.outcome !== null) {
        await schedulePayoutJob(tx, {
          companyId: payout.companyId,
          kind: answer.outcome.kind === "complete" ? "payout.complete" : "payout.fail",
          subjectId: payout.id,
          dueAt: answer.outcome.at,
          payload: answer.outcome.kind === "fail" ? { reason: answer.outcome.reason } : {},
        }, job.dueAt);
      }
    },
  });
}

async function retryPolicyOf(tx: WriteTx, companyId: string): Promise<RetryPolicy> {
  const { rows } = await tx.execute({
    sql: "SELECT retry_max, retry_reasons FROM companies WHERE id = ?",
    args: [companyId],
  });
  return {
    retryMax: Number(rows[0].retry_max),
    retryReasons: JSON.parse(String(rows[0].retry_reasons)) as string[],
  };
}

/**
 * A failed payout is retried or offered to the payee again, as the policy decides (the hold
 * returns to the highest fees of the allowed methods on a re-offer).
 */
async function handleFailure(
  tx: WriteTx,
  runtime: PayoutRuntime,
  payoutId: string,
  reason: string,
  now: number,
): Promise<Result<PayoutRow, MoveRefusal>> {
  const payout = (await loadPayout(tx, payoutId))!;
  const policy = await retryPolicyOf(tx, payout.companyId);
  if (afterFailure(policy, reason, payout.retryCount) === "retry") {
    await schedulePayoutJob(tx, {
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
  // Its retry is in a built batch or later: the rail's outcome decides what follows, not this offer.
  if (!reoffered.ok && reoffered.code === "payout_in_flight") return ok(payout);
  if (reoffered.ok) {
    await scheduleOfferExpiry(tx, runtime, reoffered.value, now);
    await notifyPayee(tx, runtime.notifications, payout.id, "reoffer", now);
  }
  return reoffered;
}

/**
 * Test payees act by themselves in the sandbox: `success+x` and `fail+x` select x at once, with
 * the test details of their marker where the method needs some (an address, a wallet).
 */
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
  const kept = method.code === "check" && !await payoutHasMailingAddress(tx, payout.id)
    ? TEST_PAYEE_MAILING_ADDRESS
    : method.code === "instant_deposit"
    ? testPayeeCard(marker.kind)
    : testPayeeWallet(marker, payout.email);
  // A refused selection (say, fees changed since the offer) leaves the payout offered, as a person would.
  await selectMethod(tx, payout.id, { paymentMethodId: method.id, details: {}, kept }, now);
}

/**
 * The payee's first notice, sent once: a created payout is offered (its expiry scheduled, the payee
 * told, a sandbox test payee acting at once); a payout awaiting endorsements tells its payee to
 * gather them, unless a notice went out already. The create schedules this as a job to keep its
 * unit short; a resend that comes first runs it in its own unit, and the job then finds nothing
 * to do. Null when there is no first notice to send.
 */
export async function sendFirstNotice(
  tx: WriteTx,
  runtime: PayoutRuntime,
  payoutId: string,
  now: number,
): Promise<PayeeNotice | null> {
  // Almost every first notice offers a created payout, the only state an offer moves from: the move
  // reads the payout itself, so it is read again only when the move refuses.
  const offered = await applyMove(tx, payoutId, { kind: "offer" }, now);
  if (offered.ok) {
    await scheduleOfferExpiry(tx, runtime, offered.value, now);
    const notice = await notifyPayee(tx, runtime.notifications, payoutId, "offer", now);
    await actAsTestPayee(tx, runtime, offered.value, now);
    return notice;
  }
  const payout = await loadPayout(tx, payoutId);
  if (payout?.status === "created") {
    throw new Error(`offer refused for a created payout: ${offered.message}`);
  }
  if (payout?.status === "awaiting_endorsement") {
    if (await payeeWasNotified(tx, payoutId)) return null;
    return await notifyPayee(tx, runtime.notifications, payoutId, "endorsement", now);
  }
  // Any other state is past the first notice, or (pending funds, canceled) never reached it.
  return null;
}

/**
 * The first notices of payouts still created, as sendFirstNotice sends each, with the moves of
 * those due at the same time set-based (applyMoves) and their offers' next steps scheduled in one
 * statement; the payee of each is told, and a sandbox test payee acts, one by one. A job whose
 * payout is no longer created (or named twice) is left RUN_ALONE. A refused move throws, and each
 * job runs alone.
 */
async function offerCreated(
  tx: WriteTx,
  runtime: PayoutRuntime,
  jobs: readonly RunningJob[],
): Promise<(void | RunAlone)[]> {
  const payouts = await loadPayouts(tx, jobs.map((job) => job.subjectId));
  const named = new Set<string>();
  const offering = jobs.filter((job) => {
    const created = payouts.get(job.subjectId)?.status === "created" && !named.has(job.subjectId);
    named.add(job.subjectId);
    return created;
  });
  const offered = new Set<RunningJob>();
  for (const [now, due] of Map.groupBy(offering, (job) => job.dueAt)) {
    const moved = await applyMoves(
      tx,
      due.map((job) => ({ payoutId: job.subjectId, step: { kind: "offer" } })),
      now,
    );
    if (!moved.ok) throw new Error(`offer refused for a created payout: ${moved.message}`);
    scheduleJobs(tx, moved.value.map((payout) => offerExpiryJob(runtime, payout, now)), now);
    for (const [i, payout] of moved.value.entries()) {
      await notifyPayee(tx, runtime.notifications, payout.id, "offer", now);
      await actAsTestPayee(tx, runtime, payout, now);
      offered.add(due[i]);
    }
  }
  return jobs.map((job) => offered.has(job) ? undefined : RUN_ALONE);
}

async function moveOrThrow(result: Promise<Result<unknown>>, job: DueJob): Promise<void> {
  const moved = await result;
  if (!moved.ok) throw new Error(`${job.kind} ${job.subjectId}: ${moved.message}`);
}

/** Whether the payout still waits for the submission of this reference (not canceled, not superseded). */
function awaitsReference(payout: PayoutRow | null, reference: string): payout is PayoutRow {
  return payout !== null && awaitsSubmission(payout, payout.submissionCount) &&
    submissionReference(payout.id, payout.submissionCount) === reference;
}

/** How many debits a funding was queued under so far. */
async function debitAttempts(tx: WriteTx, fundingId: string): Promise<number> {
  const { rows } = await tx.execute({
    sql: "SELECT count(*) AS n FROM rail_batch_entries WHERE funding_id = ?",
    args: [fundingId],
  });
  return Number(rows[0].n);
}

/** The outcome of a funding's debit: the funding clears or goes back to the bank. */
async function settleFundingDebit(
  tx: WriteTx,
  entry: BatchEntry,
  outcome: EntryOutcome,
  now: number,
): Promise<void> {
  const moved = outcome.kind === "completed"
    ? await clearAchFunding(tx, entry.fundingId!, now)
    : await returnAchFunding(tx, entry.fundingId!, now);
  // An operator recorded its return by hand before the bank's answer: nothing is left to move.
  if (!moved.ok && moved.code !== "funding_not_pending") {
    throw new Error(`batch entry ${entry.reference}: ${moved.message}`);
  }
}

/** How the batch pipeline moves the payouts and fundings of its entries. */
export function batchPayoutMoves(runtime: PayoutRuntime): BatchPayoutMoves {
  return {
    async sent(tx, entries, now) {
      // A funding's debit reached the bank: its amount is funded and pending until it settles.
      for (const entry of entries) {
        if (entry.payoutId === null) await recordAchDebitSent(tx, entry.fundingId!, now);
      }
      const credits = entries.filter((entry) => entry.payoutId !== null);
      const payouts = await loadPayouts(tx, credits.map((entry) => entry.payoutId!));
      const sending: MoveRequest[] = [];
      for (const entry of credits) {
        const payout = payouts.get(entry.payoutId!) ?? null;
        if (!awaitsReference(payout, entry.reference)) {
          logUnwantedAcceptance(payout, entry.reference, entry.reference);
          continue;
        }
        sending.push(sentMove(payout, entry.reference));
      }
      if (sending.length === 0) return;
      const sent = await applyMoves(tx, sending, now);
      if (!sent.ok) throw new Error(`batch entries ${credits[0].reference}…: ${sent.message}`);
    },
    async settled(tx, entry, outcome, now) {
      if (entry.payoutId === null) return await settleFundingDebit(tx, entry, outcome, now);
      const payout = await loadPayout(tx, entry.payoutId);
      if (!payout) throw new Error(`batch entry ${entry.reference}: no payout ${entry.payoutId}`);
      const decided = decideEntryOutcome(payout.status, outcome.kind);
      if (decided.kind === "applied_before") return;
      if (decided.kind === "exception") {
        await recordRailException(tx, {
          entry,
          outcome,
          batchId: await batchOfEntry(tx, entry.id),
          payoutStatus: payout.status,
          reason: decided.reason,
        }, now);
        return;
      }
      const moved = outcome.kind === "completed"
        ? await applyMove(tx, entry.payoutId, { kind: "complete" }, now)
        : await applyMove(tx, entry.payoutId, { kind: "fail", reason: outcome.reason }, now, {
          detail: outcome.reason,
        });
      if (!moved.ok) throw new Error(`batch entry ${entry.reference}: ${moved.message}`);
      if (outcome.kind === "failed") {
        const handled = await handleFailure(tx, runtime, entry.payoutId, outcome.reason, now);
        if (!handled.ok) throw new Error(`batch entry ${entry.reference}: ${handled.message}`);
      }
    },
    async completed(tx, entries, now) {
      const completedOutcome: EntryOutcome = { kind: "completed" };
      for (const entry of entries) {
        if (entry.payoutId === null) await settleFundingDebit(tx, entry, completedOutcome, now);
      }
      const credits = entries.filter((entry) => entry.payoutId !== null);
      const payouts = await loadPayouts(tx, credits.map((entry) => entry.payoutId!));
      const completing = new Map<string, MoveRequest>();
      for (const entry of credits) {
        const payout = payouts.get(entry.payoutId!);
        if (!payout) throw new Error(`batch entry ${entry.reference}: no payout ${entry.payoutId}`);
        const decided = decideEntryOutcome(payout.status, "completed");
        if (decided.kind === "applied_before" || completing.has(payout.id)) continue;
        if (decided.kind === "exception") {
          await recordRailException(tx, {
            entry,
            outcome: completedOutcome,
            batchId: await batchOfEntry(tx, entry.id),
            payoutStatus: payout.status,
            reason: decided.reason,
          }, now);
          continue;
        }
        completing.set(payout.id, { payoutId: payout.id, step: { kind: "complete" } });
      }
      if (completing.size === 0) return;
      const moved = await applyMoves(tx, [...completing.values()], now);
      if (!moved.ok) throw new Error(`batch entries ${credits[0].reference}…: ${moved.message}`);
    },
    async stopped(tx, entry, reason, now) {
      const payout = await loadPayout(tx, entry.payoutId!);
      if (!awaitsReference(payout, entry.reference)) return;
      const failed = await recordRefused(tx, runtime, payout!, {
        reason,
        message: `the rail stopped ${entry.reference} before its batch was sent: ${reason}`,
      }, now);
      if (!failed.ok) throw new Error(`batch entry ${entry.reference}: ${failed.message}`);
    },
    async nextReference(tx, entry) {
      if (entry.payoutId === null) {
        const funding = await loadFunding(tx, entry.fundingId!);
        if (funding?.status !== "Pending") return null;
        return submissionReference(funding.id, await debitAttempts(tx, funding.id) + 1);
      }
      const payout = await loadPayout(tx, entry.payoutId);
      if (!awaitsReference(payout, entry.reference)) return null;
      return submissionReference(payout.id, await countSubmission(tx, payout.id));
    },
  };
}

/**
 * A per-payout provider's report of a submission it accepted (a push's final status): the payout
 * completes, or fails and is retried or re-offered, through the same decision as a batch entry's.
 * A report its payout can no longer take (canceled, submitted again) moves nothing and is logged
 * for an operator to recall the payment.
 */
export async function settleSubmission(
  tx: WriteTx,
  runtime: PayoutRuntime,
  reference: string,
  outcome: EntryOutcome,
  now: number,
): Promise<void> {
  const payoutId = reference.slice(0, reference.lastIndexOf("-"));
  const payout = await loadPayout(tx, payoutId);
  if (!payout) throw new Error(`submission ${reference}: no payout ${payoutId}`);
  const current = submissionReference(payout.id, payout.submissionCount) === reference;
  const decided = current
    ? decideEntryOutcome(payout.status, outcome.kind)
    : { kind: "exception" as const, reason: "the payout was submitted again since" };
  if (decided.kind === "applied_before") return;
  if (decided.kind === "exception") {
    logUnwantedAcceptance(payout, reference, `${outcome.kind}: ${decided.reason}`);
    return;
  }
  const moved = outcome.kind === "completed"
    ? await applyMove(tx, payoutId, { kind: "complete" }, now)
    : await applyMove(tx, payoutId, { kind: "fail", reason: outcome.reason }, now, {
      detail: outcome.reason,
    });
  if (!moved.ok) throw new Error(`submission ${reference}: ${moved.message}`);
  if (outcome.kind === "failed") {
    const handled = await handleFailure(tx, runtime, payoutId, outcome.reason, now);
    if (!handled.ok) throw new Error(`submission ${reference}: ${handled.message}`);
  }
}

/**
 * A batch rail's report of one entry (a return file's line, a provider's item status): the
 * payout completes, or fails and is retried or re-offered.
 */
export function settleRailBatchEntry(
  tx: WriteTx,
  runtime: PayoutRuntime,
  reference: string,
  outcome: EntryOutcome,
  now: number,
): ReturnType<typeof settleBatchEntry> {
  return settleBatchEntry(tx, batchPayoutMoves(runtime), reference, outcome, now);
}

/** Handlers of the payout and funding job kinds, and of the batch rails' jobs, on `rails`. */
export function payoutJobHandlers(
  runtime: PayoutRuntime,
  rails: RailDirectory,
): Readonly<Record<string, JobHandler>> {
  const moves = batchPayoutMoves(runtime);
  return {
    ...batchRailJobHandlers(rails.batchRails(), moves),
    // A payout canceled before its offer simply stays canceled; one a resend offered stays so.
    // Offers due together (those of creates written together) are made set-based.
    "payout.offer": batchedUnitJob({
      one: async (tx, job) => {
        await sendFirstNotice(tx, runtime, job.subjectId, job.dueAt);
      },
      many: (tx, jobs) => offerCreated(tx, runtime, jobs),
    }),
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
      await sendFirstNotice(tx, runtime, job.subjectId, job.dueAt);
    },
    "payout.expire_offer": async (tx, job) => {
      const payout = await loadPayout(tx, job.subjectId);
      if (payout?.status !== "modality_offered") return;
      // Only the latest offer's expiry counts: a re-offer after this one was made renewed it.
      if (!await isLatestOffer(tx, job.subjectId, Number(job.payload.offered_at))) return;
      await moveOrThrow(expireOffer(tx, runtime, payout, job.dueAt), job);
    },
    "payout.remind_offer": async (tx, job) => {
      const payout = await loadPayout(tx, job.subjectId);
      if (payout?.status !== "modality_offered") return;
      const offeredAt = Number(job.payload.offered_at);
      if (!await isLatestOffer(tx, job.subjectId, offeredAt)) return;
      const expiresAt = job.payload.expires_at;
      if (job.payload.pay_by === true && typeof expiresAt === "number") {
        // A pay_by deadline's reminder names the date; near it, it goes on every channel.
        const settings = await readObligationSettings(tx, payout.companyId);
        const falls = expiryDecision(settings.offerExpiryAction, {
          fellBackBefore: payout.fellBackAt !== null,
        }) === "fallback";
        await notifyPayee(
          tx,
          runtime.notifications,
          job.subjectId,
          falls ? "deadline_fallback" : "deadline",
          job.dueAt,
          {
            everyChannel: reminderEscalates(expiresAt, job.dueAt),
            payBy: utcDate(expiresAt),
          },
        );
      } else {
        await notifyPayee(tx, runtime.notifications, job.subjectId, "resend", job.dueAt);
      }
      // Reminders scheduled before offers were chained carry no expiry: theirs is already pending.
      if (typeof expiresAt !== "number") return;
      await scheduleNextOfferStep(
        tx,
        payout,
        offeredAt,
        expiresAt,
        job.dueAt,
        job.payload.pay_by === true,
      );
    },
    "payout.submit": submitJob(runtime, rails),
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
      await requestSubmission(tx, payout, job.dueAt);
    },
    // ACH fundings now clear when their debit settles; databases may still hold these jobs.
    "funding.clear": async (tx, job) => {
      const cleared = await clearAchFunding(tx, job.subjectId, job.dueAt);
      // A funding returned before its clearing day has nothing left to clear.
      if (!cleared.ok && cleared.code !== "funding_not_pending") {
        throw new Error(`funding.clear: ${cleared.message}`);
      }
    },
  };
}
