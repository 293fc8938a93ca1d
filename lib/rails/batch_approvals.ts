/**
 * What the `bank_file.release` and `bank_file.resolve` approvals run once a second admin approves,
 * in the approval's unit of the live database, for a batch of any rail: a released batch is
 * transmitted at once (its transmit job runs after the commit); an in-doubt batch is resolved
 * with the answer the first admin gave.
 */
import type { ApprovalKind } from "../operators/rules.ts";
import type { ApprovedAction } from "../operators/approvals.ts";
import { configDefaults } from "../platform/config.ts";
import { composeRails } from "../payouts/runtime.ts";
import type { OperatorDeps } from "../operators/service.ts";
import { type ApprovedBatchAction, runApprovedBatchAction } from "./batches_service.ts";

/**
 * The live rails an approved action runs on, from the composition root with the settings the
 * approval runs with. The payout moves of a resolution (sent, or queued again) need no
 * notification settings: without them, the defaults.
 */
function liveRails(deps: OperatorDeps) {
  const settings = deps.runtimeSettings ?? {
    offerTtlDays: configDefaults.OFFER_TTL_DAYS,
    baseUrl: "",
  };
  return composeRails("live", settings, deps.databases.live, deps.secretBox).batch;
}

const approvedBatchAction =
  (kind: ApprovedBatchAction["kind"]): ApprovedAction => (tx, approval, { deps, actor, now }) =>
    runApprovedBatchAction(tx, liveRails(deps), actor, {
      kind,
      approvalId: approval.id,
      batchId: approval.objectId,
      // `voided` is what ach:resolve asked before the rails shared one resolution.
      as: approval.payload.as === "transmitted" ? "transmitted" : "not_received",
    }, now);

export const bankFileApprovedActions: Partial<Record<ApprovalKind, ApprovedAction>> = {
  "bank_file.release": approvedBatchAction("bank_file.release"),
  "bank_file.resolve": approvedBatchAction("bank_file.resolve"),
};
