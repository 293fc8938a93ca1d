/**
 * The operator commands of money in flight: the rail exceptions queue (`rails:exceptions`,
 * `rails:resolve-exception`: live posting needs a second admin) and recall requests of a
 * transmitted payout (`payouts:recall`). Each takes --environment (live by default) and names the
 * environment it acted on.
 */
import { formatDollars } from "../platform/money.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import { requestApproval } from "../operators/approvals.ts";
import {
  checkResolution,
  findRailException,
  listRailExceptions,
  RAIL_EXCEPTIONS_LISTED_MAX,
  railExceptionView,
  resolutionPostsMoney,
  resolveRailException,
} from "../rails/exceptions.ts";
import { recordRecallRequest } from "../rails/recalls.ts";
import { loadPayout } from "../payouts/store.ts";
import {
  approvalAnswer,
  type Command,
  environmentFlag,
  exceptionNotFound as sharedExceptionNotFound,
  exceptionReach,
  exceptionStatusFlag,
  listedCompanies,
  objectReach,
  optionalTinReach,
} from "./command_kit.ts";

const ENVIRONMENT_FLAG = "live (default) or test";

const exceptionNotFound = sharedExceptionNotFound("rail_exception_not_found", "rail exception");

export const railCommands: Readonly<Record<string, Command>> = {
  "rails:exceptions": {
    summary:
      "list rail outcomes a payout could not take (a paid entry of a canceled payout, say), oldest first (--status open by default)",
    flags: {
      tin: "only this company's exceptions",
      status: "open (default), resolved or all",
      environment: ENVIRONMENT_FLAG,
    },
    optional: ["tin"],
    role: "viewer",
    reach: optionalTinReach,
    run: async (ctx, f) => {
      const environment = environmentFlag(f, "live");
      if (!environment.ok) return environment;
      const asked = exceptionStatusFlag(f);
      if (!asked.ok) return asked;
      const status = asked.value;
      const companyIds = await listedCompanies(ctx, f);
      if (!companyIds.ok) return companyIds;
      const exceptions = await listRailExceptions(
        ctx.databases[environment.value].readClient,
        { status: status === "all" ? null : status, companyIds: companyIds.value },
        RAIL_EXCEPTIONS_LISTED_MAX,
      );
      return ok({
        environment: environment.value,
        exceptions: exceptions.map((x) => ({
          environment: environment.value,
          ...railExceptionView(x),
        })),
      });
    },
  },
  "rails:resolve-exception": {
    summary:
      "resolve a rail exception: --resolution payment_stands (a paid entry: the payment posts from available to the bank; live: once a second admin approves) or no_ledger_effect (nothing posted); audited",
    flags: {
      exception: "the exception id (rex_…)",
      resolution: "payment_stands or no_ledger_effect",
      note: "why (kept in the audit log)",
      environment: ENVIRONMENT_FLAG,
    },
    optional: ["note"],
    role: "admin",
    reach: exceptionReach(findRailException, exceptionNotFound),
    run: async (ctx, f) => {
      const environment = environmentFlag(f, "live");
      if (!environment.ok) return environment;
      const database = ctx.databases[environment.value];
      const found = await findRailException(database.readClient, f.exception);
      const scope = ctx.operator?.companyScope ?? null;
      if (!found || (scope && !scope.includes(found.companyId))) {
        return exceptionNotFound(f, environment.value);
      }
      const input = {
        exceptionId: found.id,
        resolution: f.resolution,
        note: f.note ?? null,
        companyIds: scope,
      };
      const checked = checkResolution(found, input);
      if (!checked.ok) return refuse("invalid_input", checked.message, { field: checked.field });
      if (environment.value === "live" && resolutionPostsMoney(checked.value)) {
        const requested = await requestApproval(ctx.operatorDeps, {
          operator: ctx.actor.operator!,
          origin: ctx.actor.origin,
        }, {
          kind: "rail_exception.resolve",
          environment: "live",
          companyId: found.companyId,
          objectId: found.id,
          summary: `rails:resolve-exception ${found.id} ${checked.value}: ${
            formatDollars(found.amountCents)
          } from available to the bank`,
          payload: { resolution: checked.value, note: input.note },
        }, ctx.now);
        return approvalAnswer(requested, {
          kind: "rail_exception.resolve",
          exception_id: found.id,
        });
      }
      const now = ctx.now;
      const resolved = await database.writer.write(
        async (tx): ReturnType<typeof resolveRailException> => {
          const done = await resolveRailException(tx, environment.value, ctx.actor, input, now);
          return done.ok ? done : tx.abort(done);
        },
      );
      if (!resolved.ok) {
        return refuse(resolved.code, `${resolved.message} (in ${environment.value})`, {
          field: resolved.field,
        });
      }
      return ok({ environment: environment.value, ...railExceptionView(resolved.value) });
    },
  },
  "payouts:recall": {
    summary:
      "record that the bank was asked to recall a payout's transmitted entry (its money is in flight and can no longer be canceled); the bank's answer arrives as a return, or not at all",
    flags: {
      payout: "the payout id (po_…)",
      reason: "why the payment must not be made (kept with the request and in the audit log)",
      environment: ENVIRONMENT_FLAG,
    },
    role: "admin",
    reach: objectReach(
      (request, environment, f) => loadPayout(request.databases[environment].readClient, f.payout),
      (f, environment) => refuse("payout_not_found", `no payout ${f.payout} in ${environment}`),
      (f) => f.payout,
    ),
    run: async (ctx, f) => {
      const environment = environmentFlag(f, "live");
      if (!environment.ok) return environment;
      const database = ctx.databases[environment.value];
      const payout = await loadPayout(database.readClient, f.payout);
      if (!payout) {
        return refuse("payout_not_found", `no payout ${f.payout} in ${environment.value}`);
      }
      const now = ctx.now;
      const recorded: Result<Record<string, unknown>> = await database.writer.write(async (tx) => {
        const done = await recordRecallRequest(tx, environment.value, ctx.actor, {
          payoutId: payout.id,
          reason: f.reason,
        }, now);
        return done.ok ? done : tx.abort(done);
      });
      return recorded.ok ? ok({ environment: environment.value, ...recorded.value }) : recorded;
    },
  },
};
