/** Surface A checks and check files (issue 19): not built yet, so no path answers. */
import { Hono } from "hono";
import type { AppDeps, AppEnv } from "../context.ts";

export function checkRoutes(_deps: AppDeps): Hono<AppEnv> {
  return new Hono<AppEnv>();
}
