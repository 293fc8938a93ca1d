/**
 * What the `bank_file.release` and `bank_file.resolve` approvals run once a second admin approves,
 * in the approval's unit of the live database: a released file is transmitted at once (its
 * transmit job runs after the commit); an in-doubt file is marked transmitted or voided.
 */
import type { ApprovalKind } from "../operators/rules.ts";
import type { ApprovedAction } from "../operators/approvals.ts";
import { appendAudit } from "../audit/store.ts";
import { configDefaults } from "../platform/config.ts";
import { ok, refuse } from "../platform/result.ts";
import { payoutRuntime } from "../payouts/runtime.ts";
import { loadBatch } from "../rails/batch.ts";
import { loadAchFile, setFileApproval } from "./files_store.ts";
import { resolveInDoubtFile } from "./files_service.ts";
import { scheduleTransmit } from "./jobs.ts";
import { releaseApprovedCheckFile, resolveInDoubtCheckFile } from "../checks/files_service.ts";

/**
 * The payout moves of a resolution (sent, or queued again) need no notification settings; the
 * runtime is the live one with the defaults.
 */
const liveRuntime = () =>
  payoutRuntime("live", { offerTtlDays: configDefaults.OFFER_TTL_DAYS, baseUrl: "" });

const release: ApprovedAction = async (tx, approval, { actor, now }) => {
  const batch = await loadBatch(tx, approval.objectId);
  // Check files share the release (lib/checks/files_service.ts).
  if (batch && batch.rail !== "ach") {
    return await releaseApprovedCheckFile(tx, actor, approval.objectId, now);
  }
  const file = await loadAchFile(tx, approval.objectId);
  if (!batch || !file) {
    return refuse("ach_file_not_found", `no ACH file ${approval.objectId}`);
  }
  if (batch.status !== "built") {
    return refuse(
      "ach_file_not_built",
      `ACH file ${file.batchId} is ${batch.status}; only a built file is released`,
    );
  }
  await setFileApproval(tx, file.batchId, approval.id);
  await scheduleTransmit(tx, file.companyId, file.batchId, now, 1);
  await appendAudit(tx, "live", actor, {
    at: now,
    action: "ach:release",
    objectType: "ach_file",
    objectId: file.batchId,
    companyId: file.companyId,
    before: { status: "built", approval_id: null },
    after: { status: "built", approval_id: approval.id, released: true },
  });
  return ok({ file_id: file.batchId, status: "built", released: true });
};

const resolve: ApprovedAction = async (tx, approval, { deps, actor, now }) => {
  const batch = await loadBatch(tx, approval.objectId);
  // Check files share the resolution (lib/checks/files_service.ts).
  if (batch && batch.rail !== "ach") {
    return await resolveInDoubtCheckFile(
      tx,
      { environment: "live", secretBox: deps.secretBox, runtime: liveRuntime() },
      actor,
      approval.objectId,
      approval.payload.as === "transmitted" ? "transmitted" : "not_received",
      now,
    );
  }
  const as = approval.payload.as === "voided" ? "voided" : "transmitted";
  const resolved = await resolveInDoubtFile(
    tx,
    {
      environment: "live",
      secretBox: deps.secretBox,
      runtime: liveRuntime(),
    },
    actor,
    approval.objectId,
    as,
    now,
  );
  return resolved.ok
    ? ok({ file_id: resolved.value.fileId, status: resolved.value.status })
    : resolved;
};

export const bankFileApprovedActions: Partial<Record<ApprovalKind, ApprovedAction>> = {
  "bank_file.release": release,
  "bank_file.resolve": resolve,
};
