/**
 * GET /v1/sandbox/clock and GET /api/sandbox/clock read the caller's company's sandbox time;
 * POST …/clock/advance {seconds} moves it and runs everything that falls due, in time order. Both
 * are refused with a live credential: live time is real time. There is no reset: the clock only
 * moves forward, under jobs scheduled on it.
 */
import { type Context, Hono } from "hono";
import * as v from "valibot";
import type { Database } from "../db/client.ts";
import { advanceCompanyClock, readCompanyClock } from "../lib/sandbox/service.ts";
import { type AppDeps, type AppEnv, railJobsOf } from "./context.ts";
import { errorResponse } from "./errors.ts";
import { jsonInteger, parseJsonBody } from "./validation.ts";

/** One year: a bound on how far one call may move a clock. */
const ADVANCE_SECONDS_MAX = 31_536_000;

const advanceBody = v.object({ seconds: jsonInteger("seconds", 1, ADVANCE_SECONDS_MAX) });

export function sandboxClockRoutes(
  deps: AppDeps,
  principalOf: (c: Context<AppEnv>) => { database: Database; companyId: string },
): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const liveForbidden = (c: Context<AppEnv>) =>
    errorResponse(c, {
      status: 403,
      code: "live_mode_forbidden",
      message: "the sandbox clock exists only in the test environment; use a test credential",
    });
  app.get("/", async (c) => {
    const { database, companyId } = principalOf(c);
    if (database.environment !== "test") return liveForbidden(c);
    const clock = await readCompanyClock(database, companyId, deps.clock.now());
    return c.json({
      object: "sandbox_clock",
      now: new Date(clock.now).toISOString(),
      ahead_seconds: Math.floor(clock.aheadMs / 1000),
    });
  });
  app.post("/advance", async (c) => {
    const { database, companyId } = principalOf(c);
    if (database.environment !== "test") return liveForbidden(c);
    const body = await parseJsonBody(c, advanceBody);
    if (!body.ok) return body.response;
    const advanced = await advanceCompanyClock(database, companyId, body.value.seconds, {
      realNow: deps.clock.now(),
      handlers: (await railJobsOf(deps)).test,
    });
    return c.json({
      object: "sandbox_clock",
      now: new Date(advanced.now).toISOString(),
      advanced_seconds: body.value.seconds,
      jobs_run: advanced.jobsRun,
    });
  });
  return app;
}
