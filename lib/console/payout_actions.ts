/**
 * What an operator may do to one payout (issue 20): cancel it, send the payee's notification again,
 * and offer a failed payout's methods to the payee again; the CLI's payouts:cancel, payouts:resend
 * and payouts:reoffer, which the console's payout page runs as commands. Each is one write
 * unit that moves the payout through the one state machine (lib/payouts) exactly as the company's
 * own cancel and resend do, and appends its audit row in the same unit; a refusal writes nothing.
 */
import type { Database } from "../../db/client.ts";
import { scheduleJob } from "../../db/scheduler_store.ts";
import { appendAudit, type AuditActor } from "../audit/store.ts";
import { claimResend, notifyPayee } from "../notify/store.ts";
import { type PayoutRuntime, sendFirstNotice } from "../payouts/jobs.ts";
import { mayTryAgainAfter } from "../payouts/policy.ts";
import { resendableStatuses, surfaceBStatus } from "../payouts/states.ts";
import { applyMove, loadPayout, payoutMoneyInFlight, type PayoutRow } from "../payouts/store.ts";
import { describeInFlight, transitionTable } from "../payouts/transition.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import { domainNow } from "../sandbox/clock_store.ts";

/** The payout's fields an audit row of these actions records (never the method's details). */
function auditView(payout: PayoutRow) {
  return {
    id: payout.id,
    status: payout.status,
    amount_cents: payout.amountCents,
    held_cents: payout.heldCents,
  };
}

/** Whether the rules allow each action on a payout now: the page offers only these. */
export function payoutActions(
  payout: { status: PayoutRow["status"]; failureReason: string | null },
): { cancel: boolean; resend: boolean; reoffer: boolean } {
  return {
    cancel: transitionTable.cancel.from.includes(payout.status),
    resend: resendableStatuses.has(payout.status) || payout.status === "created",
    reoffer: payout.status === "failed" && mayTryAgainAfter(payout.failureReason),
  };
}

const notFound = (payoutId: string) => refuse("payout_not_found", `no payout ${payoutId}`);

/** Cancels a payout (before a method is selected, or after a failure): its hold goes back. */
export async function cancelPayoutAsOperator(
  database: Database,
  actor: AuditActor,
  payoutId: string,
  realNow: number,
): Promise<Result<PayoutRow, "payout_not_found" | "not_cancelable" | "payout_in_flight">> {
  const found = await loadPayout(database.readClient, payoutId);
  if (!found) return notFound(payoutId);
  const now = await domainNow(database, found.companyId, realNow);
  return await database.writer.write(async (tx) => {
    const before = (await loadPayout(tx, payoutId))!;
    const canceled = await applyMove(tx, payoutId, { kind: "cancel" }, now, {
      detail: `canceled by operator ${actor.operator?.email ?? "unknown"}`,
    });
    if (!canceled.ok && canceled.code === "payout_in_flight") {
      return tx.abort(refuse("payout_in_flight", `payout ${payoutId}: ${canceled.message}`));
    }
    if (!canceled.ok) {
      return tx.abort(refuse(
        "not_cancelable",
        `payout ${payoutId} is ${
          surfaceBStatus[before.status]
        }: a payout can be canceled only before a method is selected, or after a failure`,
      ));
    }
    await appendAudit(tx, database.environment, actor, {
      at: realNow,
      action: "payout:cancel",
      objectType: "payout",
      objectId: payoutId,
      companyId: before.companyId,
      before: auditView(before),
      after: auditView(canceled.value),
    });
    return ok(canceled.value);
  });
}

/**
 * Sends the payee's notification again, within the hourly allowance per payee; a payee not told
 * yet gets the first notice (as the company's resend does).
 */
export async function resendAsOperator(
  database: Database,
  runtime: PayoutRuntime,
  actor: AuditActor,
  payoutId: string,
  realNow: number,
): Promise<
  Result<{ channels: string[] }, "payout_not_found" | "not_resendable" | "rate_limited">
> {
  const found = await loadPayout(database.readClient, payoutId);
  if (!found) return notFound(payoutId);
  const now = await domainNow(database, found.companyId, realNow);
  return await database.writer.write(async (tx) => {
    const payout = (await loadPayout(tx, payoutId))!;
    if (!payoutActions(payout).resend) {
      return tx.abort(refuse(
        "not_resendable",
        `payout ${payoutId} is ${
          surfaceBStatus[payout.status]
        }: there is no notification to resend`,
      ));
    }
    const { resendsPerHourMax } = runtime.notifications;
    const allowance = await claimResend(tx, payoutId, { realNow, resendsPerHourMax });
    if (!allowance.ok) {
      return tx.abort(refuse(
        "rate_limited",
        `at most ${resendsPerHourMax} notifications per payee per hour; try again in ${allowance.retryAfterSeconds} s`,
      ));
    }
    const notice = await sendFirstNotice(tx, runtime, payoutId, now) ??
      await notifyPayee(tx, runtime.notifications, payoutId, "resend", now);
    await appendAudit(tx, database.environment, actor, {
      at: realNow,
      action: "payout:resend_notification",
      objectType: "payout",
      objectId: payoutId,
      companyId: payout.companyId,
      before: auditView(payout),
      after: { ...auditView(payout), channels: notice.channels },
    });
    return ok({ channels: notice.channels });
  });
}

/**
 * Offers a failed payout's methods to its payee again, where the rules allow it (not after a
 * final failure such as a sanctions rejection). It runs as the scheduler's own re-offer job, due
 * now: the same path an automatic re-offer takes, waiting for funds when the hold is short.
 */
export async function reofferAsOperator(
  database: Database,
  actor: AuditActor,
  payoutId: string,
  realNow: number,
): Promise<
  Result<{ jobId: string }, "payout_not_found" | "not_reofferable" | "payout_in_flight">
> {
  const found = await loadPayout(database.readClient, payoutId);
  if (!found) return notFound(payoutId);
  const now = await domainNow(database, found.companyId, realNow);
  return await database.writer.write(async (tx) => {
    const payout = (await loadPayout(tx, payoutId))!;
    if (!payoutActions(payout).reoffer) {
      return tx.abort(refuse(
        "not_reofferable",
        payout.status === "failed"
          ? `payout ${payoutId} failed for ${payout.failureReason}: it is never offered again`
          : `payout ${payoutId} is ${
            surfaceBStatus[payout.status]
          }: only a failed payout is offered again`,
      ));
    }
    const inFlight = await payoutMoneyInFlight(tx, payout);
    if (inFlight !== null && inFlight.stage !== "queued") {
      return tx.abort(refuse(
        "payout_in_flight",
        `payout ${payoutId} is not offered again: ${describeInFlight(inFlight)}`,
      ));
    }
    // A second job for the same payout finds it offered already and does nothing.
    const jobId = await scheduleJob(tx, {
      companyId: payout.companyId,
      kind: "payout.reoffer",
      subjectId: payoutId,
      dueAt: now,
    }, now);
    await appendAudit(tx, database.environment, actor, {
      at: realNow,
      action: "payout:reoffer",
      objectType: "payout",
      objectId: payoutId,
      companyId: payout.companyId,
      before: auditView(payout),
      after: { ...auditView(payout), reoffer_job: jobId },
    });
    return ok({ jobId });
  });
}
