/**
 * Liveness, readiness (contract §13) and Prometheus metrics (contract §12). With METRICS_TOKEN set,
 * /metrics answers only `Authorization: Bearer <token>` (compared in constant time), else 401.
 * The gauges of what needs action and of reconciliation (the console's and reconciliation's
 * queries, about a tenth of the API's modules) are imported at the first scrape, not with the API.
 */
import { Hono } from "hono";
import { moneyInFlightGauges, NOT_READY_REASONS, serviceReadiness } from "../lib/admin/service.ts";
import { constantTimeEqual } from "../lib/platform/keys.ts";
import type { Metrics } from "../lib/platform/metrics.ts";
import { bearerToken } from "./auth.ts";
import type { AppDeps, AppEnv } from "./context.ts";
import { errorResponse } from "./errors.ts";

export function opsRoutes(deps: AppDeps, metrics: Metrics): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const readinessOptions = {
    stalledWorkers: () => metrics.stalledWorkers(deps.config.limits.WORKER_STALL_MS),
  };
  // Liveness: the process answers. Whether it should get traffic is /readyz's question.
  app.get("/healthz", (c) => c.json({ status: "ok" }));
  app.get("/readyz", async (c) => {
    const { status, body } = await serviceReadiness(deps.databases, readinessOptions);
    return c.json(body, status);
  });
  app.get("/metrics", async (c) => {
    const required = deps.config.metricsToken;
    if (required !== null) {
      const token = bearerToken(c);
      if (token === null || !constantTimeEqual(token, required)) {
        return errorResponse(c, {
          status: 401,
          code: "authentication_failed",
          message: "/metrics needs Authorization: Bearer with the METRICS_TOKEN",
          headers: { "WWW-Authenticate": 'Bearer realm="metrics"' },
        });
      }
    }
    const writers = Object.values(deps.databases);
    const perWriter = (pick: (stats: typeof writers[number]["writer"]["stats"]) => number) =>
      writers.map((db) =>
        [`environment="${db.environment}"`, pick(db.writer.stats)] as [string, number]
      );
    const readiness = await serviceReadiness(deps.databases, readinessOptions);
    const failing = new Set(readiness.body.reasons ?? []);
    const inFlight = await moneyInFlightGauges(deps.databases);
    const [{ needsActionGauges }, { reconGauges }] = await Promise.all([
      import("../lib/console/needs_action.ts"),
      import("../lib/reconciliation/views.ts"),
    ]);
    const needsAction = await needsActionGauges(deps.databases, deps.clock.now());
    const recon = await reconGauges(deps.databases, deps.clock.now());
    const text = metrics.render({
      readiness_not_ready: {
        help: "1 while /readyz answers 503 for this reason, else 0.",
        samples: NOT_READY_REASONS.map((reason) => [
          `reason="${reason}"`,
          failing.has(reason) ? 1 : 0,
        ]),
      },
      db_storage_failures: {
        help: "Write units and groups that failed on storage since start, by reason.",
        samples: writers.flatMap((db) =>
          (["disk_full", "writes_failing"] as const).map((reason) =>
            [
              `environment="${db.environment}",reason="${reason}"`,
              db.writer.stats.storageFailures[reason],
            ] as [string, number]
          )
        ),
      },
      rail_exceptions_open: {
        help: "Rail outcomes a payout could not take, waiting for an operator.",
        samples: inFlight.map((g) => [`environment="${g.environment}"`, g.railExceptionsOpen]),
      },
      funding_shortfall_cents: {
        help: "What lines owe of cleared ACH fundings the bank took back (their new payouts wait).",
        samples: inFlight.map((g) => [`environment="${g.environment}"`, g.fundingShortfallCents]),
      },
      recon_exceptions_open: {
        help:
          "Reconciliation exceptions open: bank lines nothing expected (side bank), expected moves the bank did not report (side service).",
        samples: recon.map((g) => [`environment="${g.environment}",side="${g.side}"`, g.open]),
      },
      recon_exception_oldest_age_seconds: {
        help: "How long the oldest open reconciliation exception of each side has waited.",
        samples: recon.map((g) => [
          `environment="${g.environment}",side="${g.side}"`,
          g.oldestAgeSeconds,
        ]),
      },
      needs_action: {
        help:
          "Items of the console's Needs action queue, by kind (failed payouts, failing endpoints, files in doubt ...).",
        samples: needsAction.map((g) => [
          `environment="${g.environment}",kind="${g.kind}"`,
          g.count,
        ]),
      },
      db_write_groups_committed: {
        help: "Group commits of the writer.",
        samples: perWriter((s) => s.groups),
      },
      db_write_units_committed: {
        help: "Write units committed.",
        samples: perWriter((s) => s.units),
      },
      db_write_group_largest: {
        help: "Most units committed in one group.",
        samples: perWriter((s) => s.largestGroup),
      },
      process_resident_memory_bytes: {
        help: "Resident set size.",
        samples: [["", Deno.memoryUsage().rss]],
      },
    });
    return c.text(text, 200, { "Content-Type": "text/plain; version=0.0.4" });
  });
  return app;
}
