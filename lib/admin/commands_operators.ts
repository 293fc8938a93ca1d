/**
 * The operator commands of operators themselves: signing in and out, the first admin, creating,
 * resetting, disabling and changing the role of operators, enrolling, one's own password, and
 * deciding approvals (the registry of what each kind runs is lib/admin/approved_actions.ts).
 */
import { ok, refuse, type Result } from "../platform/result.ts";
import type { AuditActor } from "../audit/store.ts";
import {
  changesOperators,
  type Command,
  type CommandContext,
  type CommandRequest,
  type Flags,
  type Reach,
  reads,
  readsEverything,
} from "./command_kit.ts";
import { type ApprovalKind } from "../operators/rules.ts";
import { approvedActions } from "./approved_actions.ts";
import { changeOwnCredentials, enroll } from "../operators/enrollment.ts";
import { findOperatorByEmail } from "../operators/store.ts";
import {
  changeRole,
  checkNewOperator,
  createFirstAdmin,
  createOperator,
  disableOperator,
  listOperators,
  operatorView,
  resetOperator,
  signIn,
  signOut,
} from "../operators/service.ts";
import {
  approvalCompany,
  approveApproval,
  listApprovals,
  rejectApproval,
  requestApproval,
} from "../operators/approvals.ts";

/** What deciding an approval reaches: live data, and its company. */
function approvalReach(request: CommandRequest, flags: Flags): Promise<Result<Reach>> {
  return approvalCompany(
    { databases: request.databases, secretBox: request.secretBox, dev: request.dev },
    flags.id,
  ).then((approval) =>
    ok({
      writes: ["live"],
      // Operators are installation-wide: only an operator of every company decides on one.
      // Operators and hand imports are installation-wide: only an operator of every company
      // decides on them.
      companies: approval?.kind.startsWith("operator.") || approval?.companyId === null
        ? "installation"
        : approval?.companyId
        ? [approval.companyId]
        : [],
      hidden: refuse("approval_not_found", `no approval ${flags.id}`, { field: "id" }),
      objectId: flags.id,
    })
  );
}

/** The signed-in operator of a command that needs one (checked before it runs). */
function signedIn(ctx: CommandContext): AuditActor & { operator: { id: string; email: string } } {
  if (!ctx.actor.operator) throw new Error("this command runs with a signed-in operator only");
  return { operator: ctx.actor.operator, origin: ctx.actor.origin };
}

const APPROVAL_STATUSES = ["pending_approval", "approved", "rejected", "expired"] as const;

/** An operator change that waits for a second admin: the approval as the command answers it. */
async function operatorApproval(
  ctx: CommandContext,
  request: {
    kind: ApprovalKind;
    objectId: string;
    summary: string;
    payload: Record<string, unknown>;
  },
): Promise<Result<Record<string, unknown>>> {
  const requested = await requestApproval(ctx.operatorDeps, signedIn(ctx), {
    ...request,
    environment: "live",
    companyId: null,
  }, ctx.now);
  return requested.ok
    ? ok({
      approval_id: requested.value.id,
      status: requested.value.status,
      kind: request.kind,
      email: request.objectId,
      summary: requested.value.summary,
      expires_at: requested.value.expires_at,
    })
    : requested;
}

/** The commands of operators, their enrollment and approvals. */
export const operatorCommands: Readonly<Record<string, Command>> = {
  "login": {
    summary: "sign in as an operator (e-mail, password and TOTP code are prompted)",
    flags: {},
    role: "viewer",
    public: () => true,
    prompts: [
      { name: "email", label: "E-mail", secret: false },
      { name: "password", label: "Password", secret: true },
      { name: "code", label: "TOTP code (empty in dev mode)", secret: false, optional: true },
    ],
    reach: changesOperators,
    run: async (ctx) => {
      const signedIn = await signIn(ctx.operatorDeps, ctx.origin, {
        email: ctx.input.email ?? "",
        password: ctx.input.password ?? "",
        code: ctx.input.code ?? "",
      }, ctx.now);
      if (!signedIn.ok) return signedIn;
      return ok({
        session_token: signedIn.value.token,
        email: signedIn.value.operator.email,
        role: signedIn.value.operator.role,
        totp_verified: signedIn.value.totpVerified,
        expires_at: new Date(signedIn.value.expiresAt).toISOString(),
      });
    },
  },
  "logout": {
    summary: "end the operator session",
    flags: {},
    role: "viewer",
    public: () => true,
    reach: changesOperators,
    run: async (ctx) => {
      if (ctx.sessionToken === null) return ok({ ended: false });
      return ok(await signOut(ctx.operatorDeps, ctx.origin, ctx.sessionToken, ctx.now));
    },
  },
  "operator:create": {
    summary:
      "create an operator, who enrols with a code sent to their e-mail (a new admin waits for a second admin, except the second of a new installation); --first: the first admin",
    flags: {
      email: "the operator's e-mail",
      role: "viewer, clerk or admin",
      companies: "limit to these companies: ids or TINs, comma-separated",
      first: "the first admin, while no operator exists (needs no session)",
    },
    role: "admin",
    public: (f) => f.first !== undefined,
    prompts: [{
      name: "password",
      label: "Your password (empty: generate one)",
      secret: true,
      optional: true,
      when: (f) => f.first !== undefined,
    }],
    reach: changesOperators,
    run: async (ctx, f) => {
      if (f.first !== undefined) {
        if (f.role !== undefined && f.role !== "admin") {
          return refuse("invalid_input", "--first creates an admin: leave --role out", {
            field: "role",
          });
        }
        if (f.companies !== undefined) {
          return refuse("invalid_input", "--first creates an admin of every company", {
            field: "companies",
          });
        }
        const first = await createFirstAdmin(ctx.operatorDeps, ctx.origin, {
          email: f.email,
          password: ctx.input.password,
        }, ctx.now);
        return first.ok
          ? ok({ ...operatorView(first.value.operator, ctx.now), ...first.value.shown })
          : first;
      }
      if (f.role === undefined) {
        return refuse("usage", "operator:create needs --role (viewer, clerk or admin)");
      }
      const created = await createOperator(ctx.operatorDeps, ctx.actor, {
        email: f.email,
        role: f.role,
        companies: f.companies,
      }, ctx.now);
      if (created.ok) {
        return ok({ ...operatorView(created.value.operator, ctx.now), ...created.value.delivery });
      }
      if (created.code !== "approval_required") return created;
      // Any other new admin is dual-controlled: created, and sent their code, once approved.
      const checked = await checkNewOperator(ctx.operatorDeps, {
        email: f.email,
        role: f.role,
        companies: f.companies,
      });
      if (!checked.ok) return checked;
      return await operatorApproval(ctx, {
        kind: "operator.create_admin",
        objectId: checked.value.email,
        summary: `create admin ${checked.value.email}${
          checked.value.companyScope === null ? "" : ` of ${checked.value.companyScope.join(", ")}`
        }`,
        payload: { email: checked.value.email, company_scope: checked.value.companyScope },
      });
    },
  },
  "operator:disable": {
    summary: "disable an operator and end their sessions",
    flags: { email: "the operator's e-mail" },
    role: "admin",
    reach: changesOperators,
    run: async (ctx, f) => {
      const disabled = await disableOperator(ctx.operatorDeps, ctx.actor, f.email, ctx.now);
      return disabled.ok ? ok(operatorView(disabled.value, ctx.now)) : disabled;
    },
  },
  "operator:reset": {
    summary:
      "clear an operator's password and TOTP and send them a new enrollment code; unlocks the account (an admin: once a second admin approves)",
    flags: { email: "the operator's e-mail" },
    role: "admin",
    reach: changesOperators,
    run: async (ctx, f) => {
      const reset = await resetOperator(ctx.operatorDeps, ctx.actor, { email: f.email }, ctx.now);
      if (reset.ok) {
        return ok({ ...operatorView(reset.value.operator, ctx.now), ...reset.value.delivery });
      }
      if (reset.code !== "approval_required") return reset;
      const target = await findOperatorByEmail(
        ctx.databases.live.readClient,
        f.email.trim().toLowerCase(),
      );
      return await operatorApproval(ctx, {
        kind: "operator.reset_admin",
        objectId: target!.email,
        summary: `reset admin ${target!.email}: clear their password and TOTP, send a new code`,
        payload: { operator_id: target!.id, email: target!.email },
      });
    },
  },
  "operator:role": {
    summary: "change an operator's role (raising to admin: once a second admin approves)",
    flags: { email: "the operator's e-mail", role: "viewer, clerk or admin" },
    role: "admin",
    reach: changesOperators,
    run: async (ctx, f) => {
      const changed = await changeRole(ctx.operatorDeps, ctx.actor, {
        email: f.email,
        role: f.role,
      }, ctx.now);
      if (changed.ok) return ok(operatorView(changed.value, ctx.now));
      if (changed.code !== "approval_required") return changed;
      const target = await findOperatorByEmail(
        ctx.databases.live.readClient,
        f.email.trim().toLowerCase(),
      );
      return await operatorApproval(ctx, {
        kind: "operator.promote_admin",
        objectId: target!.email,
        summary: `raise ${target!.email} from ${target!.role} to admin`,
        payload: { operator_id: target!.id, email: target!.email, from_role: target!.role },
      });
    },
  },
  "enroll": {
    summary:
      "set your own password and get your TOTP secret with the enrollment code sent to you (prompted)",
    flags: {},
    role: "viewer",
    public: () => true,
    prompts: [
      { name: "code", label: "Enrollment code (enr_…)", secret: true },
      { name: "password", label: "Your new password", secret: true },
    ],
    reach: changesOperators,
    run: async (ctx) => {
      const enrolled = await enroll(ctx.operatorDeps, ctx.origin, {
        code: ctx.input.code ?? "",
        password: ctx.input.password ?? "",
      }, ctx.now);
      return enrolled.ok
        ? ok({
          ...operatorView(enrolled.value.operator, ctx.now),
          totp_uri: enrolled.value.totpUri,
          next: "scan totp_uri in your authenticator app, then sign in with `login`",
        })
        : enrolled;
    },
  },
  "operator:password": {
    summary:
      "change your own password (--totp: and your TOTP secret) with your current password and a TOTP code",
    flags: { totp: "also replace your TOTP secret (the new one is shown once)" },
    switches: ["totp"],
    optional: ["totp"],
    role: "viewer",
    prompts: [
      { name: "current", label: "Current password", secret: true },
      { name: "code", label: "TOTP code (empty in dev mode)", secret: false, optional: true },
      { name: "password", label: "New password", secret: true },
    ],
    reach: changesOperators,
    run: async (ctx, f) => {
      const changed = await changeOwnCredentials(ctx.operatorDeps, ctx.actor, ctx.operator!, {
        currentPassword: ctx.input.current ?? "",
        code: ctx.input.code ?? "",
        newPassword: ctx.input.password ?? "",
        newTotp: f.totp !== undefined,
      }, ctx.now);
      if (!changed.ok) return changed;
      return ok({
        email: ctx.operator!.email,
        changed: changed.value.totpUri === null ? "password" : "password and TOTP secret",
        ...(changed.value.totpUri === null ? {} : { totp_uri: changed.value.totpUri }),
      });
    },
  },
  "operator:list": {
    summary: "list operators with their role, scope and state",
    flags: {},
    role: "admin",
    reach: readsEverything,
    run: async (ctx) => ok({ operators: await listOperators(ctx.operatorDeps, ctx.now) }),
  },
  "approvals:list": {
    summary: "list approvals, newest first (pending by default)",
    flags: { status: "pending_approval (default), approved, rejected, expired or all" },
    role: "viewer",
    reach: reads,
    run: async (ctx, f) => {
      const status = f.status ?? "pending_approval";
      if (status !== "all" && !(APPROVAL_STATUSES as readonly string[]).includes(status)) {
        return refuse(
          "invalid_input",
          `--status ${JSON.stringify(status)}: ${APPROVAL_STATUSES.join(", ")} or all`,
          { field: "status" },
        );
      }
      const listed = await listApprovals(ctx.operatorDeps, {
        status: status === "all" ? null : status as typeof APPROVAL_STATUSES[number],
        companyScope: ctx.operator?.companyScope ?? null,
      }, ctx.now);
      return ok({ approvals: listed.approvals, has_more: listed.hasMore });
    },
  },
  "approvals:approve": {
    summary: "approve another admin's pending action: it takes effect now",
    flags: { id: "the approval id (apr_…)" },
    role: "admin",
    reach: approvalReach,
    run: async (ctx, f) =>
      await approveApproval(ctx.operatorDeps, signedIn(ctx), f.id, ctx.now, approvedActions),
  },
  "approvals:reject": {
    summary: "reject another admin's pending action: nothing of it happens",
    flags: { id: "the approval id (apr_…)", reason: "why, for the audit log" },
    role: "admin",
    reach: approvalReach,
    run: async (ctx, f) =>
      await rejectApproval(
        ctx.operatorDeps,
        signedIn(ctx),
        { id: f.id, reason: f.reason },
        ctx.now,
      ),
  },
};
