/** Liveness and readiness for orchestrators and the sandbox bootstrap contract (DESIGN 13). */
import { Hono } from "hono";
import { migrationsPending } from "../db/client.ts";
import type { AppDeps, AppEnv } from "./context.ts";

export function opsRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get("/healthz", (c) => c.json({ status: "ok" }));
  app.get("/readyz", async (c) => {
    const checks: Record<string, string> = {};
    let ready = true;
    for (const [environment, database] of Object.entries(deps.databases)) {
      try {
        await database.readClient.execute("SELECT 1");
        const pending = await migrationsPending(database);
        checks[environment] = pending === 0 ? "ok" : `${pending} migrations not applied`;
        ready &&= pending === 0;
      } catch (error) {
        checks[environment] = `database unreachable: ${
          error instanceof Error ? error.message : error
        }`;
        ready = false;
      }
    }
    return c.json({ status: ready ? "ready" : "not_ready", databases: checks }, ready ? 200 : 503);
  });
  return app;
}
