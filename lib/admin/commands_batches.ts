/**
 * The operator commands of every rail's batches (ACH files, check files, PayPal batches), run by
 * the one rail engine: `rails:batches` lists them with why they wait and every transmission
 * attempt with its answer, `rails:batch` shows one, and `rails:resolve` resolves an in-doubt
 * batch of any rail with what the bank or provider said (live: once a second admin approves).
 * Each takes --environment (live by default) and names the environment it acted on.
 */
import type { Environment } from "../platform/config.ts";
import { ok, refuse } from "../platform/result.ts";
import { requestBatchRelease, resolveBatch } from "../rails/batches_service.ts";
import {
  type AttemptView,
  findRailBatch,
  listRailBatches,
  RAIL_BATCHES_LISTED_MAX,
  type RailBatchView,
  transmissionsOf,
} from "../rails/batch_views.ts";
import type { SqlReader } from "../../db/writer.ts";
import {
  batchDepsOf,
  type Command,
  environmentFlag,
  type Flags,
  listedCompanies,
  objectReach,
  optionalTinReach,
} from "./command_kit.ts";

const ENVIRONMENT_FLAG = "live (default) or test";
const STATUSES = ["built", "transmitting", "transmitted", "in_doubt", "voided"];

const batchNotFound = (f: Flags, environment: Environment) =>
  refuse("batch_not_found", `no batch ${f.file} in ${environment}`, { field: "file" });

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

const attemptView = (attempt: AttemptView) => ({
  attempt: attempt.attempt,
  started_at: iso(attempt.startedAt),
  answered_at: iso(attempt.answeredAt),
  outcome: attempt.outcome,
  detail: attempt.detail,
});

/**
 * What a rail's file listing (ach:files, checks:files) adds to each file: why it waits and each
 * transmission attempt's answer.
 */
export async function withTransmissions<T extends { readonly id: string }>(
  reader: SqlReader,
  views: readonly T[],
) {
  const transmissions = await transmissionsOf(reader, views.map((view) => view.id));
  return views.map((view) => {
    const found = transmissions.get(view.id);
    return {
      ...view,
      error: found?.error ?? null,
      attempts: (found?.attempts ?? []).map(attemptView),
    };
  });
}

/** A batch as the commands print it: its state, why it waits, and each attempt's answer. */
export function railBatchView(batch: RailBatchView, environment: Environment) {
  return {
    id: batch.id,
    environment,
    company_id: batch.companyId,
    company_tin: batch.companyTin,
    rail: batch.rail,
    status: batch.status,
    entry_count: batch.entryCount,
    total_cents: batch.totalCents,
    created_at: iso(batch.createdAt),
    rail_reference: batch.railReference,
    transmitted_at: iso(batch.transmittedAt),
    downloaded_at: iso(batch.downloadedAt),
    error: batch.error,
    attempts: batch.attempts.map(attemptView),
  };
}

const batchReach = objectReach(
  (request, environment, f) => findRailBatch(request.databases[environment].readClient, f.file),
  batchNotFound,
  (f) => f.file,
);

export const batchCommands: Readonly<Record<string, Command>> = {
  "rails:batches": {
    summary:
      "list the batches of every rail (ACH files, check files, PayPal batches) newest first, with why they wait and each transmission attempt's answer; --status in_doubt lists what rails:resolve takes",
    flags: {
      tin: "only this company's batches",
      status: STATUSES.join(", "),
      environment: ENVIRONMENT_FLAG,
    },
    optional: ["tin", "status"],
    role: "viewer",
    reach: optionalTinReach,
    run: async (ctx, f) => {
      const environment = environmentFlag(f, "live");
      if (!environment.ok) return environment;
      const status = f.status ?? null;
      if (status !== null && !STATUSES.includes(status)) {
        return refuse(
          "invalid_input",
          `--status ${JSON.stringify(status)}: one of ${STATUSES.join(", ")}`,
          {
            field: "status",
          },
        );
      }
      const companyIds = await listedCompanies(ctx, f);
      if (!companyIds.ok) return companyIds;
      const batches = await listRailBatches(
        ctx.databases[environment.value].readClient,
        { status, companyIds: companyIds.value },
        RAIL_BATCHES_LISTED_MAX,
      );
      return ok({
        environment: environment.value,
        batches: batches.map((batch) => railBatchView(batch, environment.value)),
      });
    },
  },
  "rails:batch": {
    summary: "one batch of any rail with why it waits and every transmission attempt's answer",
    flags: { file: "the batch id (rbt_…, rb_…)", environment: ENVIRONMENT_FLAG },
    role: "viewer",
    reach: batchReach,
    run: async (ctx, f) => {
      const environment = environmentFlag(f, "live");
      if (!environment.ok) return environment;
      const batch = await findRailBatch(ctx.databases[environment.value].readClient, f.file);
      const scope = ctx.operator?.companyScope ?? null;
      if (!batch || (scope && !scope.includes(batch.companyId))) {
        return batchNotFound(f, environment.value);
      }
      return ok(railBatchView(batch, environment.value));
    },
  },
  "rails:release": {
    summary:
      "ask a second admin to release a built live batch of any rail (ACH file, positive-pay file, PayPal batch) over BANK_FILE_APPROVAL_LIMIT_CENTS (approvals:approve sends it)",
    flags: { file: "the batch id (rbt_…, rb_…)" },
    role: "admin",
    reach: batchReach,
    run: async (ctx, f) => {
      const batch = await findRailBatch(ctx.databases.live.readClient, f.file);
      if (!batch) return batchNotFound(f, "live");
      const released = await requestBatchRelease(
        batchDepsOf(ctx, "live"),
        ctx.actor,
        batch.id,
        ctx.now,
      );
      if (!released.ok) return released;
      return ok({
        environment: "live",
        file_id: batch.id,
        rail: batch.rail,
        status: released.value.status,
        approval_id: released.value.approvalId,
      });
    },
  },
  "rails:resolve": {
    summary:
      "resolve an in-doubt batch of any rail (ACH file, check file, PayPal batch) after asking the bank or provider: --as transmitted or not_received (live: a second admin approves)",
    flags: {
      file: "the batch id (rbt_…, rb_…)",
      as: "transmitted or not_received: what the bank or provider says it received",
      environment: ENVIRONMENT_FLAG,
    },
    role: "admin",
    reach: batchReach,
    run: async (ctx, f) => {
      const environment = environmentFlag(f, "live");
      if (!environment.ok) return environment;
      if (f.as !== "transmitted" && f.as !== "not_received") {
        return refuse(
          "invalid_input",
          `--as ${JSON.stringify(f.as)}: transmitted or not_received`,
          { field: "as" },
        );
      }
      const database = ctx.databases[environment.value];
      const batch = await findRailBatch(database.readClient, f.file);
      if (!batch) return batchNotFound(f, environment.value);
      const resolved = await resolveBatch(
        batchDepsOf(ctx, environment.value),
        ctx.actor,
        batch.id,
        f.as,
        ctx.now,
      );
      if (!resolved.ok) {
        return resolved.code === "batch_not_found"
          ? batchNotFound(f, environment.value)
          : refuse(resolved.code, `${resolved.message} (in ${environment.value})`, {
            field: resolved.field ?? "file",
          });
      }
      return ok({
        environment: environment.value,
        file_id: batch.id,
        rail: batch.rail,
        status: resolved.value.status,
        approval_id: resolved.value.approvalId,
      });
    },
  },
};
