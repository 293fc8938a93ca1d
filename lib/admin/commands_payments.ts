/**
 * The operator commands of payment approval rules: setting, removing and listing a company's
 * rules (a live change waits for a second admin), listing the payouts they hold, and approving or
 * rejecting one (any clerk or admin of its company); and the actions on one payout the console's
 * payout page offers (cancel, resend, re-offer), which the console runs as these same commands.
 */
import type { Environment } from "../platform/config.ts";
import { formatDollars, parseDollars } from "../platform/money.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import { modalityOf } from "../payouts/states.ts";
import {
  deleteRule,
  putRule,
  ruleOfScope,
  type RuleScope,
  rulesOfCompany,
} from "../payouts/approval_rules.ts";
import { decidePayment, payoutsPendingApproval } from "../payouts/payment_approvals.ts";
import { loadPayout } from "../payouts/store.ts";
import { payoutRuntime } from "../payouts/settings.ts";
import {
  cancelPayoutAsOperator,
  reofferAsOperator,
  resendAsOperator,
} from "../console/payout_actions.ts";
import { requestApproval } from "../operators/approvals.ts";
import type { PaymentRuleChange } from "../payouts/approval_actions.ts";
import {
  type Command,
  type CommandContext,
  type CommandRequest,
  environmentFlag,
  environmentReach,
  type Flags,
  objectReach,
  type Reach,
  reads,
  tinReach,
} from "./command_kit.ts";

/** A threshold above the largest payout ($1,000,000.00) would hold nothing. */
const THRESHOLD_MAX_CENTS = 100_000_000;
/** Payouts one listing shows at most. */
const PENDING_LISTED_MAX = 200;

/** The rule's scope from --tin, --line and --method, in the --environment named. */
async function scopeOf(
  ctx: CommandContext,
  f: Flags,
  environment: Environment,
): Promise<Result<RuleScope & { tin: string; line: string | null }>> {
  const database = ctx.databases[environment];
  const { rows } = await database.readClient.execute({
    sql: "SELECT id FROM companies WHERE tin = ?",
    args: [f.tin],
  });
  if (!rows[0]) {
    return refuse("company_not_found", `no company with TIN ${f.tin}`, { field: "tin" });
  }
  const companyId = String(rows[0].id);
  let lineId: string | null = null;
  if (f.line !== undefined) {
    const line = await database.readClient.execute({
      sql: "SELECT id FROM business_lines WHERE company_id = ? AND code = ?",
      args: [companyId, f.line],
    });
    if (!line.rows[0]) {
      return refuse("line_not_found", `no line ${JSON.stringify(f.line)} for TIN ${f.tin}`, {
        field: "line",
      });
    }
    lineId = String(line.rows[0].id);
  }
  let paymentMethodId: number | null = null;
  if (f.method !== undefined) {
    const method = modalityOf(/^\d+$/.test(f.method) ? Number(f.method) : f.method);
    if (!method) {
      return refuse(
        "invalid_input",
        `--method ${JSON.stringify(f.method)}: a method id 1-7 or code`,
        {
          field: "method",
        },
      );
    }
    paymentMethodId = method.id;
  }
  return ok({ companyId, lineId, paymentMethodId, tin: f.tin, line: f.line ?? null });
}

/** A rule as the commands answer it. */
function ruleView(
  rule: { lineId: string | null; paymentMethodId: number | null; thresholdCents: number },
) {
  return {
    line_id: rule.lineId,
    payment_method_id: rule.paymentMethodId,
    threshold_cents: rule.thresholdCents,
    threshold: formatDollars(rule.thresholdCents),
  };
}

/** Sets (threshold given) or removes (null) a rule: at once in test, once approved in live. */
async function changeRule(
  ctx: CommandContext,
  f: Flags,
  thresholdCents: number | null,
): Promise<Result<Record<string, unknown>>> {
  const environment = environmentFlag(f, "live");
  if (!environment.ok) return environment;
  const scope = await scopeOf(ctx, f, environment.value);
  if (!scope.ok) return scope;
  const current = await ruleOfScope(ctx.databases[environment.value].readClient, scope.value);
  if (thresholdCents === null && current === null) {
    return refuse("payment_rule_not_found", "no rule of this company, line and method to remove");
  }
  const described = `${scope.value.line ?? "every line"}, ${
    scope.value.paymentMethodId === null ? "every method" : `method ${scope.value.paymentMethodId}`
  }`;
  if (environment.value === "live") {
    const change: PaymentRuleChange = {
      line_id: scope.value.lineId,
      payment_method_id: scope.value.paymentMethodId,
      threshold_cents: thresholdCents,
    };
    const requested = await requestApproval(ctx.operatorDeps, {
      operator: ctx.actor.operator!,
      origin: ctx.actor.origin,
    }, {
      kind: "payment_rule.change",
      environment: "live",
      companyId: scope.value.companyId,
      objectId: `${scope.value.companyId} ${scope.value.lineId ?? ""} ${
        scope.value.paymentMethodId ?? 0
      }`,
      summary: thresholdCents === null
        ? `remove the payment approval rule of TIN ${scope.value.tin} (${described})`
        : `payments of TIN ${scope.value.tin} (${described}) over ${
          formatDollars(thresholdCents)
        } wait for approval${current ? ` (was ${formatDollars(current.thresholdCents)})` : ""}`,
      payload: { ...change },
    }, ctx.now);
    return requested.ok
      ? ok({
        environment: "live",
        approval_id: requested.value.id,
        status: requested.value.status,
        kind: "payment_rule.change",
        summary: requested.value.summary,
        expires_at: requested.value.expires_at,
      })
      : requested;
  }
  const rule = await ctx.databases.test.writer.write(async (tx) =>
    thresholdCents === null
      ? (await deleteRule(tx, scope.value), null)
      : await putRule(tx, scope.value, thresholdCents, ctx.operator?.id ?? null, ctx.now)
  );
  return ok({ environment: "test", rule: rule && ruleView(rule), removed: rule === null });
}

/** The company of --tin, changing the --environment named. */
const ruleReach = async (request: CommandRequest, f: Flags): Promise<Result<Reach>> => {
  const environment = environmentReach(f, true);
  if (!environment.ok) return environment;
  return await tinReach(environment.value.writes)(request, f);
};

const ruleAudit =
  (action: string) => (f: Flags, reach: { companies: readonly string[] | "installation" }) => ({
    action,
    objectType: "payment_approval_rule",
    objectId: `${f.tin} ${f.line ?? "every line"} ${f.method ?? "every method"}`,
    companyId: reach.companies === "installation" ? null : reach.companies[0] ?? null,
  });

const decisionReach = objectReach(
  (request, environment, f) => loadPayout(request.databases[environment].readClient, f.payout),
  (f, environment) =>
    refuse("payout_not_found", `no payout ${f.payout} in ${environment}`, { field: "payout" }),
  (f) => f.payout,
);

async function decide(ctx: CommandContext, f: Flags, approve: boolean) {
  const environment = environmentFlag(f, "live");
  if (!environment.ok) return environment;
  const decided = await decidePayment(ctx.databases[environment.value], ctx.actor, {
    payoutId: f.payout,
    approve,
    reason: f.reason,
  }, ctx.realNow);
  return decided.ok
    ? ok({
      environment: environment.value,
      payout_id: decided.value.id,
      status: decided.value.status,
    })
    : decided;
}

/** A payout action the console offers on a payout's page, as a command of the same name. */
function payoutActionCommand(
  summary: string,
  role: Command["role"],
  action: (ctx: CommandContext, environment: Environment, payoutId: string) => Promise<
    Result<Record<string, unknown>>
  >,
): Command {
  return {
    summary,
    flags: { payout: "the payout id (po_…)", environment: "live (default) or test" },
    role,
    reach: decisionReach,
    run: async (ctx, f) => {
      const environment = environmentFlag(f, "live");
      if (!environment.ok) return environment;
      const done = await action(ctx, environment.value, f.payout);
      return done.ok
        ? ok({ environment: environment.value, payout_id: f.payout, ...done.value })
        : done;
    },
  };
}

export const paymentCommands: Readonly<Record<string, Command>> = {
  "payouts:cancel": payoutActionCommand(
    "cancel a payout (before a method is chosen, or after a failure): its hold goes back to available",
    "clerk",
    async (ctx, environment, id) => {
      const canceled = await cancelPayoutAsOperator(
        ctx.databases[environment],
        ctx.actor,
        id,
        ctx.realNow,
      );
      return canceled.ok ? ok({ status: canceled.value.status }) : canceled;
    },
  ),
  "payouts:resend": payoutActionCommand(
    "send the payee's notification again (within the hourly allowance per payee)",
    "clerk",
    async (ctx, environment, id) => {
      const resent = await resendAsOperator(
        ctx.databases[environment],
        payoutRuntime(environment, ctx.runtimeSettings),
        ctx.actor,
        id,
        ctx.realNow,
      );
      return resent.ok ? ok({ channels: resent.value.channels }) : resent;
    },
  ),
  "payouts:reoffer": payoutActionCommand(
    "offer a failed payout's methods to its payee again, where the rules allow it",
    "admin",
    async (ctx, environment, id) => {
      const reoffered = await reofferAsOperator(
        ctx.databases[environment],
        ctx.actor,
        id,
        ctx.realNow,
      );
      return reoffered.ok ? ok({ job_id: reoffered.value.jobId }) : reoffered;
    },
  ),
  "payment-rule:set": {
    summary:
      "hold a company's payouts over a threshold for approval (optionally one line, one method); live: once a second admin approves",
    flags: {
      tin: "the company's TIN",
      threshold: "dollars, e.g. 10000.00: a payout over it waits",
      line: "only this line's payouts (its code)",
      method: "only payouts that may be paid by this method (id 1-7 or code)",
      environment: "live (default) or test",
    },
    optional: ["line", "method"],
    role: "admin",
    reach: ruleReach,
    audit: ruleAudit("payment-rule:set"),
    run: async (ctx, f) => {
      const cents = parseDollars(f.threshold, { minCents: 0, maxCents: THRESHOLD_MAX_CENTS });
      if (!cents.ok) {
        return refuse(
          "invalid_input",
          `--threshold ${JSON.stringify(f.threshold)}: dollars with at most two decimals, up to ${
            formatDollars(THRESHOLD_MAX_CENTS)
          }`,
          { field: "threshold" },
        );
      }
      return await changeRule(ctx, f, cents.value);
    },
  },
  "payment-rule:remove": {
    summary: "remove a company's payment approval rule (live: once a second admin approves)",
    flags: {
      tin: "the company's TIN",
      line: "the rule's line (its code), if it has one",
      method: "the rule's method, if it has one",
      environment: "live (default) or test",
    },
    optional: ["line", "method"],
    role: "admin",
    reach: ruleReach,
    audit: ruleAudit("payment-rule:remove"),
    run: (ctx, f) => changeRule(ctx, f, null),
  },
  "payment-rule:list": {
    summary: "a company's payment approval rules",
    flags: { tin: "the company's TIN", environment: "live (default) or test" },
    role: "viewer",
    reach: tinReach([]),
    run: async (ctx, f) => {
      const environment = environmentFlag(f, "live");
      if (!environment.ok) return environment;
      const database = ctx.databases[environment.value];
      const { rows } = await database.readClient.execute({
        sql: "SELECT id FROM companies WHERE tin = ?",
        args: [f.tin],
      });
      if (!rows[0]) {
        return refuse("company_not_found", `no company with TIN ${f.tin}`, { field: "tin" });
      }
      const rules = await rulesOfCompany(database.readClient, String(rows[0].id));
      return ok({ environment: environment.value, rules: rules.map(ruleView) });
    },
  },
  "payouts:pending-approval": {
    summary: "payouts a payment approval rule holds, oldest first",
    flags: { environment: "live (default) or test" },
    role: "viewer",
    reach: reads,
    run: async (ctx, f) => {
      const environment = environmentReach(f, false);
      if (!environment.ok) return environment;
      const payouts = await payoutsPendingApproval(
        ctx.databases[environment.value.environment],
        ctx.operator?.companyScope ?? null,
        PENDING_LISTED_MAX,
      );
      return ok({ environment: environment.value.environment, payouts });
    },
  },
  "payouts:approve": {
    summary: "approve a payout a payment approval rule holds: its payee is offered it now",
    flags: { payout: "the payout id (po_…)", environment: "live (default) or test" },
    role: "clerk",
    reach: decisionReach,
    run: (ctx, f) => decide(ctx, f, true),
  },
  "payouts:reject": {
    summary: "reject a payout a payment approval rule holds: it is canceled, its hold released",
    flags: {
      payout: "the payout id (po_…)",
      reason: "why, for the audit log",
      environment: "live (default) or test",
    },
    role: "clerk",
    reach: decisionReach,
    run: (ctx, f) => decide(ctx, f, false),
  },
};
