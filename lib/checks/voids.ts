/**
 * Voiding a check on purpose (issue 19): an operator (`checks:void`, clerk or admin) or a user of
 * the company (`POST /api/checks/{number}/void`) voids an issued check with a reason, audited in
 * the same unit. The register (lib/checks/register.ts) queues the void for the next positive-pay
 * file; the payout fails `check_voided` and is re-offered only once that file was sent. A paid
 * check is refused and nothing is written; a check voided or stale already is answered as it is.
 */
import type { WriteTx } from "../../db/writer.ts";
import { appendAudit, type AuditActor } from "../audit/store.ts";
import type { Environment } from "../platform/config.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import {
  type CheckRecord,
  findCheckByNumber,
  VOID_REASON_LENGTH_MAX,
  voidCheck,
  type VoidRefusal,
} from "./register.ts";

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
