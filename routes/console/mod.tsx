/** The operator console under /console (issue 20): not built yet, so no path answers. */
import { Hono } from "hono";
import type { AppDeps, AppEnv } from "../context.ts";

export function consoleRoutes(_deps: AppDeps): Hono<AppEnv> {
  return new Hono<AppEnv>();
}
