/**
 * Dual control: an action of an approval kind is recorded as `pending_approval` and takes effect
 * only when a different admin approves it within APPROVAL_TTL_MS. Approving runs the action in the
 * same write unit that marks the approval approved, so two approvals racing each other run it
 * once. Every step (request, approve, reject, expire) writes its audit row in its unit. Approvals
 * and the actions they run are in the live database, as are the operators.
 */
import type { WriteTx } from "../../db/writer.ts";
import { appendAudit, type AuditActor } from "../audit/store.ts";
import type { Environment } from "../platform/config.ts";
import { newId } from "../platform/keys.ts";
import { ok, type Refusal, refuse, type Result } from "../platform/result.ts";
import {
  APPROVAL_KINDS,
  APPROVAL_TTL_MS,
  type ApprovalKind,
  type ApprovalStatus,
  checkDecision,
  NOT_ENROLLED,
} from "./rules.ts";
import {
  type ApprovalRecord,
  decideApproval,
  findApproval,
  findOperatorById,
  findPendingApproval,
  insertApproval,
  lapsedApprovals,
  listApprovalRecords,
  listOperatorRecords,
} from "./store.ts";
import {
  clearCredentialsInUnit,
  insertOperatorAudited,
  type OperatorDeps,
  setRoleInUnit,
} from "./service.ts";
import { issueEnrollment } from "./enrollment.ts";

/** Approvals one listing shows at most. */
export const APPROVALS_LISTED_MAX = 100;

export interface ActionContext {
  readonly deps: OperatorDeps;
  readonly actor: AuditActor;
  readonly now: number;
}

/** Runs an approved action inside the approval's unit; its refusal leaves the approval pending. */
export type ApprovedAction = (
  tx: WriteTx,
  approval: ApprovalRecord,
  context: ActionContext,
) => Promise<Result<Record<string, unknown>>>;

/** The payload of a new admin waiting for approval: who, never any credential. */
interface NewAdminPayload {
  readonly email: string;
  readonly company_scope: string[] | null;
}

/** A new admin, created once a second admin approves: the enrollment code goes to their e-mail. */
const createAdmin: ApprovedAction = async (tx, approval, { deps, actor, now }) => {
  const payload = approval.payload as unknown as NewAdminPayload;
  const created = await insertOperatorAudited(
    tx,
    actor,
    {
      id: newId("op"),
      email: payload.email,
      role: "admin",
      companyScope: payload.company_scope,
      passwordHash: NOT_ENROLLED,
      totpSecretSealed: null,
      createdBy: approval.requestedBy,
    },
    now,
    { approval_id: approval.id },
  );
  if (!created.ok) return created;
  const delivery = await issueEnrollment(tx, deps, created.value, "invite", now);
  return ok({ operator_id: created.value.id, email: created.value.email, ...delivery });
};

/** The operator an operator approval names, still there and active. */
async function namedOperator(tx: WriteTx, approval: ApprovalRecord) {
  const operator = await findOperatorById(tx, String(approval.payload.operator_id));
  return operator && operator.disabledAt === null ? ok(operator) : refuse(
    "operator_not_active",
    `operator ${approval.objectId} is disabled or gone: reject approval ${approval.id}`,
  );
}

/** An admin's credentials cleared once a second admin approves; they enrol again. */
const resetAdmin: ApprovedAction = async (tx, approval, { deps, actor, now }) => {
  const target = await namedOperator(tx, approval);
  if (!target.ok) return target;
  const reset = await clearCredentialsInUnit(tx, deps, actor, target.value.id, now, {
    approval_id: approval.id,
  });
  return ok({ operator_id: reset.operator.id, email: reset.operator.email, ...reset.delivery });
};

/** An operator raised to admin once a second admin approves. */
const promoteAdmin: ApprovedAction = async (tx, approval, { actor, now }) => {
  const target = await namedOperator(tx, approval);
  if (!target.ok) return target;
  const raised = await setRoleInUnit(tx, actor, target.value, "admin", now, {
    approval_id: approval.id,
  });
  return ok({ operator_id: raised.id, email: raised.email, role: raised.role });
};

/** What the operator kinds run once approved; the registry of every kind is assembled by the caller. */
export const operatorApprovedActions: Partial<Record<ApprovalKind, ApprovedAction>> = {
  "operator.create_admin": createAdmin,
  "operator.reset_admin": resetAdmin,
  "operator.promote_admin": promoteAdmin,
};

/** Every approval kind's action, as the composition assembles them. */
export type ApprovedActions = Partial<Record<ApprovalKind, ApprovedAction>>;

export interface ApprovalRequest {
  readonly kind: ApprovalKind;
  readonly environment: Environment;
  readonly companyId: string | null;
  readonly objectId: string;
  readonly summary: string;
  readonly payload: Record<string, unknown>;
}

/** An approval as operators see it (the payload stays inside). */
export function approvalView(
  approval: ApprovalRecord,
  emails: ReadonlyMap<string, string>,
  now: number,
) {
  const lapsed = approval.status === "pending_approval" && now >= approval.expiresAt;
  return {
    id: approval.id,
    kind: approval.kind,
    environment: approval.environment,
    company_id: approval.companyId,
    object: approval.objectId,
    summary: approval.summary,
    status: (lapsed ? "expired" : approval.status) as ApprovalStatus,
    requested_by: emails.get(approval.requestedBy) ?? approval.requestedBy,
    requested_at: new Date(approval.requestedAt).toISOString(),
    expires_at: new Date(approval.expiresAt).toISOString(),
    decided_by: approval.decidedBy === null
      ? null
      : emails.get(approval.decidedBy) ?? approval.decidedBy,
    decided_at: approval.decidedAt === null ? null : new Date(approval.decidedAt).toISOString(),
  };
}

async function operatorEmails(deps: OperatorDeps): Promise<Map<string, string>> {
  const operators = await listOperatorRecords(deps.databases.live.readClient);
  return new Map(operators.map((operator) => [operator.id, operator.email]));
}

/** Records an action that waits for a second admin; one already waiting is not asked twice. */
export async function requestApproval(
  deps: OperatorDeps,
  actor: AuditActor & { operator: { id: string; email: string } },
  request: ApprovalRequest,
  now: number,
): Promise<Result<ReturnType<typeof approvalView>, "approval_pending">> {
  await expireLapsedApprovals(deps, actor.origin, now);
  const id = newId("apr");
  const requested = await deps.databases.live.writer.write(
    async (tx): Promise<Result<ApprovalRecord, "approval_pending">> => {
      const waiting = await findPendingApproval(tx, request.kind, request.objectId);
      if (waiting) {
        return tx.abort(refuse(
          "approval_pending",
          `${
            APPROVAL_KINDS[request.kind]
          } (${request.objectId}) already waits for approval ${waiting.id}`,
        ));
      }
      await insertApproval(tx, {
        id,
        ...request,
        requestedBy: actor.operator.id,
        requestedAt: now,
        expiresAt: now + APPROVAL_TTL_MS,
      });
      const approval = (await findApproval(tx, id))!;
      await appendAudit(tx, "live", actor, {
        at: now,
        action: "approval:request",
        objectType: "approval",
        objectId: id,
        companyId: request.companyId,
        before: null,
        after: {
          kind: request.kind,
          object: request.objectId,
          summary: request.summary,
          status: approval.status,
          expires_at: new Date(approval.expiresAt).toISOString(),
        },
      });
      return ok(approval);
    },
  );
  if (!requested.ok) return requested;
  return ok(approvalView(requested.value, await operatorEmails(deps), now));
}

async function expireInUnit(
  tx: WriteTx,
  approval: ApprovalRecord,
  actor: AuditActor,
  now: number,
): Promise<void> {
  if (
    !await decideApproval(
      tx,
      approval.id,
      { status: "expired", decidedBy: null, outcome: null },
      now,
    )
  ) {
    return;
  }
  await appendAudit(tx, "live", { operator: null, origin: actor.origin }, {
    at: now,
    action: "approval:expire",
    objectType: "approval",
    objectId: approval.id,
    companyId: approval.companyId,
    before: { kind: approval.kind, object: approval.objectId, status: approval.status },
    after: { status: "expired", expired_at: new Date(approval.expiresAt).toISOString() },
  });
}

/** Marks every lapsed pending approval expired (each audited); returns how many. */
export async function expireLapsedApprovals(
  deps: OperatorDeps,
  origin: string,
  now: number,
): Promise<number> {
  const live = deps.databases.live;
  if ((await lapsedApprovals(live.readClient, now)).length === 0) return 0;
  return await live.writer.write(async (tx) => {
    const lapsed = await lapsedApprovals(tx, now);
    for (const approval of lapsed) {
      await expireInUnit(tx, approval, { operator: null, origin }, now);
    }
    return lapsed.length;
  });
}

type DecideRefusal =
  | "approval_not_found"
  | "approval_not_pending"
  | "approval_expired"
  | "approval_own_request"
  | "approval_kind_not_built";

/** The company and kind of an approval, when there is one: for a command's scope check. */
export async function approvalCompany(
  deps: OperatorDeps,
  id: string,
): Promise<{ companyId: string | null; kind: string } | null> {
  const approval = await findApproval(deps.databases.live.readClient, id);
  return approval ? { companyId: approval.companyId, kind: approval.kind } : null;
}

function notFound(id: string): Refusal<"approval_not_found"> {
  return refuse("approval_not_found", `no approval ${id}`, { field: "id" });
}

/**
 * Decides an approval in one unit: it must be pending and unexpired, and the decider must not be
 * its requester. Approving runs its action in the same unit; a lapsed one is marked expired.
 */
async function decide(
  deps: OperatorDeps,
  actor: AuditActor & { operator: { id: string; email: string } },
  input: { id: string; approve: boolean; reason?: string; actions: ApprovedActions },
  now: number,
): Promise<Result<ReturnType<typeof approvalView> & { result?: unknown }, string>> {
  const decided = await deps.databases.live.writer.write(
    async (tx): Promise<Result<{ approval: ApprovalRecord; result?: unknown }, string>> => {
      const approval = await findApproval(tx, input.id);
      if (!approval) return tx.abort(notFound(input.id));
      const allowed = checkDecision(approval, actor.operator.id, now);
      if (!allowed.ok) {
        // A lapsed approval is marked expired, and that commits with the refusal.
        if (allowed.code === "approval_expired") await expireInUnit(tx, approval, actor, now);
        return allowed.code === "approval_expired" ? allowed : tx.abort(allowed);
      }
      let result: Record<string, unknown> | undefined;
      if (input.approve) {
        const action = input.actions[approval.kind as ApprovalKind];
        if (!action) {
          return tx.abort(refuse(
            "approval_kind_not_built",
            `approvals of kind ${approval.kind} cannot run yet: their action is not built`,
          ));
        }
        if (approval.environment !== "live") {
          throw new Error(`approval ${approval.id} is for ${approval.environment}, not live`);
        }
        const done = await action(tx, approval, { deps, actor, now });
        if (!done.ok) return tx.abort(done);
        result = done.value;
      }
      const status = input.approve ? "approved" : "rejected";
      const outcome = input.approve
        ? JSON.stringify(result)
        : JSON.stringify({ reason: input.reason ?? null });
      await decideApproval(tx, approval.id, { status, decidedBy: actor.operator.id, outcome }, now);
      await appendAudit(tx, "live", actor, {
        at: now,
        action: input.approve ? "approval:approve" : "approval:reject",
        objectType: "approval",
        objectId: approval.id,
        companyId: approval.companyId,
        before: { kind: approval.kind, object: approval.objectId, status: approval.status },
        after: {
          status,
          requested_by: approval.requestedBy,
          ...(input.approve ? { result } : { reason: input.reason ?? null }),
        },
      });
      return ok({ approval: (await findApproval(tx, approval.id))!, result });
    },
  );
  if (!decided.ok) return decided;
  const view = approvalView(decided.value.approval, await operatorEmails(deps), now);
  return ok(decided.value.result === undefined ? view : { ...view, result: decided.value.result });
}

/** A second admin approves: the action of its kind (from `actions`) runs now, in the approval's unit. */
export function approveApproval(
  deps: OperatorDeps,
  actor: AuditActor & { operator: { id: string; email: string } },
  id: string,
  now: number,
  actions: ApprovedActions,
): Promise<Result<ReturnType<typeof approvalView> & { result?: unknown }, string>> {
  return decide(deps, actor, { id, approve: true, actions }, now);
}

/** A second admin rejects: nothing of the action happens. */
export function rejectApproval(
  deps: OperatorDeps,
  actor: AuditActor & { operator: { id: string; email: string } },
  input: { id: string; reason?: string },
  now: number,
): Promise<Result<ReturnType<typeof approvalView>, string>> {
  return decide(deps, actor, { ...input, approve: false, actions: {} }, now);
}

/** Approvals newest first, of one status or all, within a company scope. */
export async function listApprovals(
  deps: OperatorDeps,
  filter: { status: ApprovalStatus | null; companyScope: readonly string[] | null },
  now: number,
): Promise<{ approvals: ReturnType<typeof approvalView>[]; hasMore: boolean }> {
  const records = await listApprovalRecords(deps.databases.live.readClient, {
    status: filter.status,
    limit: APPROVALS_LISTED_MAX + 1,
  });
  const emails = await operatorEmails(deps);
  const visible = records.filter((approval) =>
    filter.companyScope === null ||
    (approval.companyId !== null && filter.companyScope.includes(approval.companyId))
  );
  return {
    approvals: visible.slice(0, APPROVALS_LISTED_MAX).map((approval) =>
      approvalView(approval, emails, now)
    ),
    hasMore: visible.length > APPROVALS_LISTED_MAX,
  };
}
