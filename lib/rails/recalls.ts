/**
 * Recall requests: once a payout's rail entry was transmitted, nothing of ours can stop the bank
 * paying it, so cancel and re-offer are refused (money in flight). What an operator can do is ask
 * the bank to recall the entry and record that they did, here, audited: one request per entry.
 * The bank's answer arrives as the entry's return (the payout fails and is handled as any
 * failure), or not at all (the payout completes).
 */
import { railRecallRequests } from "../../db/schema.ts";
import type { WriteTx } from "../../db/writer.ts";
import { appendAudit, type AuditActor } from "../audit/store.ts";
import type { Environment } from "../platform/config.ts";
import { newId } from "../platform/keys.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import { loadPayout } from "../payouts/store.ts";
import { submissionReference } from "./seam.ts";
import { moneyInFlight } from "./batch.ts";

/** A recall request's reason, kept with it and in the audit log. */
export const RECALL_REASON_LENGTH_MAX = 500;

export type RecallRefusal =
  | "payout_not_found"
  | "invalid_input"
  | "payout_not_transmitted"
  | "recall_requested";

/** Records the recall request of the payout's transmitted entry in the caller's unit, audited. */
export async function recordRecallRequest(
  tx: WriteTx,
  environment: Environment,
  actor: AuditActor,
  request: { readonly payoutId: string; readonly reason: string },
  now: number,
): Promise<Result<Record<string, unknown>, RecallRefusal>> {
  const reason = request.reason.trim();
  if (reason === "" || reason.length > RECALL_REASON_LENGTH_MAX) {
    return refuse(
      "invalid_input",
      `--reason: 1 to ${RECALL_REASON_LENGTH_MAX} characters, got ${reason.length}`,
      { field: "reason" },
    );
  }
  const payout = await loadPayout(tx, request.payoutId);
  if (!payout) return refuse("payout_not_found", `no payout ${request.payoutId}`);
  const reference = submissionReference(payout.id, payout.submissionCount);
  const inFlight = payout.submissionCount > 0 ? await moneyInFlight(tx, reference) : null;
  if (inFlight?.stage !== "transmitted") {
    return refuse(
      "payout_not_transmitted",
      inFlight === null
        ? `payout ${payout.id} (${payout.status}) has no rail entry in flight: there is nothing to recall`
        : `payout ${payout.id}'s ${inFlight.rail} entry is ${inFlight.stage} in batch ${inFlight.batchId}: it was not transmitted, so void the batch instead of asking the bank`,
      { field: "payout" },
    );
  }
  const { rows } = await tx.execute({
    sql: "SELECT id FROM rail_batch_entries WHERE reference = ?",
    args: [reference],
  });
  const entryId = String(rows[0].id);
  const id = newId("rcl");
  const inserted = await tx.db.insert(railRecallRequests).values({
    id,
    companyId: payout.companyId,
    entryId,
    payoutId: payout.id,
    batchId: inFlight.batchId,
    reason,
    requestedBy: actor.operator?.id ?? null,
    createdAt: now,
  }).onConflictDoNothing({ target: railRecallRequests.entryId }).returning({
    id: railRecallRequests.id,
  });
  if (inserted.length === 0) {
    return refuse(
      "recall_requested",
      `a recall of payout ${payout.id}'s entry (${reference}) was recorded already`,
      { field: "payout" },
    );
  }
  const view = {
    recall_id: id,
    payout_id: payout.id,
    rail: inFlight.rail,
    batch_id: inFlight.batchId,
    reference,
    reason,
  };
  await appendAudit(tx, environment, actor, {
    at: now,
    action: "payouts:recall",
    objectType: "payout",
    objectId: payout.id,
    companyId: payout.companyId,
    before: { status: payout.status },
    after: view,
  });
  return ok(view);
}
