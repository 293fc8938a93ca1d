/** POST /v1/keys/rotate: a new key for the caller's line; the old one works 24 more hours. */
import { Hono } from "hono";
import { rotateStoredKey } from "../../lib/identity/service.ts";
import type { AppDeps, AppEnv } from "../context.ts";
import { refusalOutcome, respondIdempotently } from "../idempotency.ts";
import { refusalError } from "../errors.ts";

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
    const now = deps.clock.now();
    const response = await respondIdempotently(
      c,
      deps,
      target,
      (tx) =>
        rotateStoredKey(tx, principal.keyId, {
          now,
          graceSeconds: deps.config.limits.KEY_GRACE_SECONDS,
          environment: principal.environment,
        }),
      // Another request rotated this key first: the caller still holds a key in its grace period.
      (rotated) =>
        rotated.ok
          ? {
            status: 201,
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
          }
          : refusalOutcome(c, refusalError(rotated)),
    );
    // After the commit, so no lookup in between caches the key as it was.
    deps.lineKeyCache.clear();
    return response;
  });
  return app;
}
