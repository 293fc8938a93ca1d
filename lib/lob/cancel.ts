/**
 * A check we void (an operator's or a user's void, a stale check) after its print file went to Lob
 * is canceled at Lob, which can still stop it before its send date: the void plans `lob.cancel` in
 * its own unit, and the job, outside every write unit, finds the check at Lob by our metadata and
 * cancels it. Lob's answer is committed as a mail event of the check:
 *
 * - canceled (`check.deleted`): no paper existed, so the void is one the bank could never have
 *   paid; its payout fails and is offered again once the void reached the bank (at once when it
 *   already had), without waiting for paid items;
 * - refused, past the send date (`check.cancel_refused`): the check is printed and mailed; the
 *   void stays a normal void that positive pay protects, and its payout waits for the bank's paid
 *   items as every such void does.
 *
 * No answer is asked again (with backoff). Each run first reads the check at Lob, so a cancel whose
 * answer was lost is found canceled, and a replay changes nothing.
 */
import type { Database } from "../../db/client.ts";
import { externalJob, type JobHandler, TransientJobError } from "../../db/scheduler.ts";
import type { SecretBox } from "../platform/crypto.ts";
import type { JobTime } from "../rails/engine.ts";
import type { PayoutRuntime } from "../payouts/jobs.ts";
import {
  CANCELED_BEFORE_MAILING,
  failVoidNeverPaid,
  REFUSED_BY_MAIL_PROVIDER,
  RETURNED_UNDELIVERABLE,
} from "../checks/voids.ts";
import { LobClient } from "./client.ts";
import { LOB_CANCEL_JOB } from "./cancel_plan.ts";
import { lobSettingsStore, recordMailEvent } from "./store.ts";

/** A cancel's claim: two calls to Lob, well within it. */
const LOB_CANCEL_LEASE_MS = 60_000;

/** Voids the mail provider made itself: nothing to cancel. */
const PROVIDER_VOIDS = [RETURNED_UNDELIVERABLE, CANCELED_BEFORE_MAILING];

export interface LobCancelDeps {
  readonly database: Database;
  readonly secretBox: SecretBox;
  readonly runtime: PayoutRuntime;
  readonly jobTime: JobTime;
  /** How long a call to Lob may take before it counts as unanswered (tests shorten it). */
  readonly timeoutMs?: number;
}

interface CancelRequest {
  readonly checkId: string;
  readonly companyId: string;
  /** Whether the print file is known transmitted: then a check Lob does not hold was never made. */
  readonly fileTransmitted: boolean;
}

type CancelOutcome =
  | { readonly kind: "canceled" | "too_late"; readonly lobCheckId: string }
  | { readonly kind: "not_at_lob" };

/** `lob.cancel`: cancels one voided check at Lob and commits Lob's answer. */
export function lobCancelJob(deps: LobCancelDeps): Record<string, JobHandler> {
  return {
    [LOB_CANCEL_JOB]: externalJob<CancelRequest, CancelOutcome>({
      leaseMs: LOB_CANCEL_LEASE_MS,
      async prepare(tx, job) {
        const { rows } = await tx.execute({
          sql: `SELECT c.status, c.void_reason, b.status AS file_status FROM checks c
                JOIN rail_batches b ON b.id = c.print_file_id WHERE c.id = ?`,
          args: [job.subjectId],
        });
        const row = rows[0];
        if (!row || !["voided", "stale"].includes(String(row.status))) return null;
        const reason = String(row.void_reason ?? "");
        if (PROVIDER_VOIDS.includes(reason) || reason.startsWith(REFUSED_BY_MAIL_PROVIDER)) {
          return null;
        }
        return {
          checkId: job.subjectId,
          companyId: job.companyId,
          fileTransmitted: row.file_status === "transmitted",
        };
      },
      async call(request) {
        const settings = await lobSettingsStore.read(
          deps.database.readClient,
          deps.secretBox,
          request.companyId,
        );
        if (settings === null) return { kind: "not_at_lob" };
        const client = new LobClient(settings, deps.timeoutMs);
        let found;
        try {
          found = await client.findCheck(request.checkId);
          if (found !== null && !found.deleted) {
            const answer = await client.cancelCheck(found.id);
            return {
              kind: answer.kind === "canceled" ? "canceled" : "too_late",
              lobCheckId: found.id,
            };
          }
        } catch (error) {
          throw new TransientJobError(
            `Lob did not answer the cancel of check ${request.checkId}: ${
              error instanceof Error ? error.message : String(error)
            }`,
            { cause: error },
          );
        }
        if (found !== null) return { kind: "canceled", lobCheckId: found.id };
        // The file's transmission may still be creating its checks: ask again once it is known.
        if (!request.fileTransmitted) {
          throw new TransientJobError(
            `check ${request.checkId} is not at Lob yet, and its print file is not known sent`,
          );
        }
        return { kind: "not_at_lob" };
      },
      async record(tx, job, answer) {
        if (answer.kind === "not_at_lob") return;
        const now = deps.jobTime(job);
        const { rows } = await tx.execute({
          sql: "SELECT payout_id FROM checks WHERE id = ?",
          args: [job.subjectId],
        });
        const type = answer.kind === "canceled" ? "check.deleted" : "check.cancel_refused";
        await recordMailEvent(tx, {
          // The id polling gives a canceled check: the cancel is kept once, however it was learned.
          id: `${answer.lobCheckId}:${answer.kind === "canceled" ? "deleted" : "cancel_refused"}`,
          companyId: job.companyId,
          checkId: job.subjectId,
          payoutId: String(rows[0].payout_id),
          lobCheckId: answer.lobCheckId,
          type,
          at: now,
        }, now);
        if (answer.kind === "canceled") {
          await failVoidNeverPaid(tx, deps.runtime, job.subjectId, now);
        }
      },
    }),
  };
}
