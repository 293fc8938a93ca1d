/** POST /v1/keys/rotate: a new key for the caller's line; the old one works 24 more hours. */
import { Hono } from "hono";
import { rotateKeyInUnit } from "../../lib/identity/store.ts";
import type { AppDeps, AppEnv } from "../context.ts";
import { refusalOutcome, respondIdempotently } from "../idempotency.ts";

export function keyRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.post("/rotate", async (c) => {
    const principal = c.get("linePrincipal");
    const target = {
      database: principal.database,
      companyId: principal.companyId,
      scopeLine: principal.lineId,
    };
    c.header("Cache-Control", "no-store");
    return await respondIdempotently(c, deps, target, async (tx) => {
      const now = deps.clock.now();
      const rotated = await rotateKeyInUnit(tx, principal.keyId, {
        now,
        graceSeconds: deps.config.limits.KEY_GRACE_SECONDS,
        environment: principal.environment,
      });
      deps.lineKeyCache.clear();
      // Another request rotated this key first: the caller still holds a key in its grace period.
      if (!rotated.ok) {
        return refusalOutcome(c, { status: 409, code: rotated.code, message: rotated.message });
      }
      return {
        status: 201,
        commit: true,
        // The new key is shown again only to a replay of this request, from a sealed copy.
        sensitive: true,
        body: {
          object: "api_key",
          id: rotated.value.id,
          secret: rotated.value.secret,
          line: principal.lineCode,
          livemode: principal.environment === "live",
          created: new Date(now).toISOString(),
          previous_key: {
            id: rotated.value.previousKeyId,
            expires_at: new Date(rotated.value.previousExpiresAt).toISOString(),
          },
        },
      };
    });
  });
  return app;
}
