/**
 * POST /v1/sandbox/clock/advance and POST /api/sandbox/clock/advance {seconds}: move the caller's
 * company's sandbox clock and run everything that falls due, in time order. Refused with a live
 * credential: live time is real time.
 */
import { type Context, Hono } from "hono";
import * as v from "valibot";
import type { Database } from "../db/client.ts";
import { advanceCompanyClock } from "../lib/sandbox/service.ts";
import type { AppDeps, AppEnv } from "./context.ts";
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
  app.post("/advance", async (c) => {
    const { database, companyId } = principalOf(c);
    if (database.environment !== "test") {
      return errorResponse(c, {
        status: 403,
        code: "live_mode_forbidden",
        message: "the sandbox clock exists only in the test environment; use a test credential",
      });
    }
    const body = await parseJsonBody(c, advanceBody);
    if (!body.ok) return body.response;
    const advanced = await advanceCompanyClock(database, companyId, body.value.seconds, {
      realNow: deps.clock.now(),
      handlers: deps.jobHandlers.test,
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
