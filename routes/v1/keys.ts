/** POST /v1/keys/rotate: a new key for the caller's line; the old one works 24 more hours. */
import { Hono } from "hono";
import { rotateKeyInUnit } from "../../db/identity_store.ts";
import type { AppDeps, AppEnv } from "../context.ts";
import { errorResponse } from "../errors.ts";

export function keyRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.post("/rotate", async (c) => {
    const principal = c.get("linePrincipal");
    const now = deps.clock.now();
    const rotated = await principal.database.writer.write((tx) =>
      rotateKeyInUnit(tx, principal.keyId, {
        now,
        graceSeconds: deps.config.limits.KEY_GRACE_SECONDS,
        environment: principal.environment,
      })
    );
    if (!rotated.ok) {
      // Another request rotated this key first: the caller still holds a key in its grace period.
      return errorResponse(c, { status: 409, code: rotated.code, message: rotated.message });
    }
    c.header("Cache-Control", "no-store");
    return c.json({
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
    }, 201);
  });
  return app;
}
