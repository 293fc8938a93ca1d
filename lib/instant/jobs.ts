/**
 * The instant deposit rail's job: `instant.check` reads a push from Increase (polling with
 * backoff, and at once when a verified webhook names it) and acts on its status, never on a
 * webhook's body (lib/instant/rules.ts): complete completes the payout, declined or canceled fails
 * it `card_declined` and offers it again, anything else waits. Increase is called outside every
 * write unit. In the sandbox, `increase_simulator.settle` is the Increase simulator's side: a
 * transfer's time comes on the sandbox clock, it completes, and the simulator sends its signed
 * event to the webhook receiver as Increase would.
 */
import { externalJob, type JobHandler, TransientJobError } from "../../db/scheduler.ts";
import { scheduleJob } from "../../db/scheduler_store.ts";
import { settleSubmission } from "../payouts/jobs.ts";
import {
  type IncreasePush,
  type IncreaseRtpTransfer,
  increaseSignature,
  IncreaseUnanswered,
} from "./client.ts";
import type { InstantRailDeps } from "./rail.ts";
import { networkOf, pushAction, pushRecheckMs } from "./rules.ts";
import { type IncreaseAccount, increaseClientOf } from "./account.ts";
import { receiveIncreaseWebhook } from "./service.ts";
import {
  INCREASE_SIMULATOR_JOBS,
  settleSimulatedTransfer,
  SIMULATOR_SETTINGS,
} from "./simulator.ts";
import {
  findInstantTransfer,
  INSTANT_JOBS,
  type InstantTransferRow,
  recordTransferStatus,
} from "./store.ts";

const PUSH_CHECK_LEASE_MS = 60_000;

/** A push or a Real-Time Payments transfer, as the check reads either. */
type TransferState = IncreasePush | IncreaseRtpTransfer;

/** Increase's reason for a failed transfer, kept as its return code. */
function failureCode(transfer: TransferState): string {
  if ("decline" in transfer && transfer.decline) return transfer.decline.reason;
  if ("rejection" in transfer && transfer.rejection) return transfer.rejection.reject_reason_code;
  return transfer.status;
}

interface PushCheck {
  readonly transfer: InstantTransferRow;
  readonly account: IncreaseAccount;
  /** The domain time of the check. */
  readonly at: number;
}

/** The simulator's event about a transfer, and when it is sent on the sandbox clock. */
interface SimulatedEvent {
  readonly companyId: string;
  readonly body: string;
  readonly at: number;
}

/** The handlers of the instant deposit rail's jobs. */
export function instantJobHandlers(deps: InstantRailDeps): Readonly<Record<string, JobHandler>> {
  return {
    [INSTANT_JOBS.check]: externalJob<PushCheck, { check: PushCheck; push: TransferState }>({
      leaseMs: PUSH_CHECK_LEASE_MS,
      async prepare(tx, job) {
        const transfer = await findInstantTransfer(tx, job.subjectId);
        if (!transfer) throw new Error(`${INSTANT_JOBS.check}: no push ${job.subjectId}`);
        // Settled before (a webhook and a poll both asked): nothing is left to read.
        if (pushAction(transfer.status, networkOf(transfer.route)).kind !== "wait") return null;
        const account = await deps.increase.read(tx, transfer.companyId);
        if (!account) {
          throw new Error(`company ${transfer.companyId} has pushes but no Increase settings`);
        }
        return { transfer, account, at: deps.policy.jobTime(job) };
      },
      async call(check) {
        let read;
        try {
          const increase = increaseClientOf(
            deps.database,
            check.transfer.companyId,
            check.account,
            {
              at: check.at,
              timeoutMs: deps.increaseTimeoutMs,
            },
          );
          read = networkOf(check.transfer.route) === "rtp"
            ? await increase.rtp(check.transfer.transferId)
            : await increase.push(check.transfer.transferId);
        } catch (error) {
          if (!(error instanceof IncreaseUnanswered)) throw error;
          throw new TransientJobError(error.message, { cause: error });
        }
        if (read.kind !== "ok") {
          throw new Error(`push ${check.transfer.transferId}: ${read.status} ${read.detail}`);
        }
        return { check, push: read.value };
      },
      async record(tx, job, { check, push }) {
        const now = deps.policy.jobTime(job);
        const { transfer } = check;
        await recordTransferStatus(tx, transfer.transferId, push.status, now);
        const action = pushAction(push.status, networkOf(transfer.route));
        if (action.kind === "wait") {
          await scheduleJob(tx, {
            companyId: transfer.companyId,
            kind: INSTANT_JOBS.check,
            subjectId: transfer.transferId,
            dueAt: now + pushRecheckMs(transfer.checks + 1),
          }, now);
          return;
        }
        await settleSubmission(
          tx,
          deps.runtime,
          transfer.reference,
          action.kind === "complete" ? { kind: "completed" } : {
            kind: "failed",
            reason: action.reason,
            returnCode: failureCode(push),
          },
          now,
        );
      },
    }),
    [INCREASE_SIMULATOR_JOBS.settle]: externalJob<SimulatedEvent, void>({
      leaseMs: PUSH_CHECK_LEASE_MS,
      async prepare(tx, job) {
        const at = deps.policy.jobTime(job);
        const event = await settleSimulatedTransfer(tx, job.subjectId, at);
        return event && { ...event, at };
      },
      async call(event, job) {
        // Sent the way Increase sends it: signed, to the receiver every webhook goes through.
        const received = await receiveIncreaseWebhook(deps, {
          companyId: event.companyId,
          signature: await increaseSignature(
            SIMULATOR_SETTINGS.webhookSecret,
            event.body,
            new Date(job.realNow),
          ),
          body: event.body,
          arrivedAt: event.at,
        }, job.realNow);
        if (!received.ok) {
          // The company stored its own Increase settings since: the simulator's event is not theirs.
          console.warn(JSON.stringify({
            level: "warn",
            msg: "the Increase simulator's event was refused",
            company_id: event.companyId,
            code: received.code,
          }));
        }
      },
      record: () => Promise.resolve(),
    }),
  };
}
