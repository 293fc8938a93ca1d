/**
 * The loopback-only admin endpoint: while the service holds the databases, the operator CLI sends
 * its commands here. Refused unless the peer is a loopback address and the bearer token matches
 * DATA_DIR/admin-token.
 */
import { Hono } from "hono";
import { getConnInfo } from "hono/deno";
import { adminCommands, runAdminCommand } from "../lib/admin/commands.ts";
import { constantTimeEqual } from "../lib/platform/keys.ts";
import { bearerToken } from "./auth.ts";
import type { AppDeps, AppEnv } from "./context.ts";
import { errorResponse } from "./errors.ts";

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;

function peerAddress(c: Parameters<typeof getConnInfo>[0]): string | null {
  try {
    return getConnInfo(c).remote.address ?? null;
  } catch {
    // No connection information (not served by Deno.serve): treat as not loopback.
    return null;
  }
}

export function adminRoutes(deps: AppDeps & { adminToken: string }): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use(async (c, next) => {
    const address = peerAddress(c);
    if (address === null || !LOOPBACK.test(address)) {
      return errorResponse(c, {
        status: 403,
        code: "not_loopback",
        message: "the admin endpoint answers loopback only",
      });
    }
    const token = bearerToken(c);
    if (token === null || !constantTimeEqual(token, deps.adminToken)) {
      return errorResponse(c, {
        status: 401,
        code: "admin_token_invalid",
        message: "the admin token is missing or wrong",
      });
    }
    await next();
  });
  app.post("/commands/:name", async (c) => {
    const name = c.req.param("name");
    const body = await c.req.json().catch(() => null) as { flags?: unknown } | null;
    const flags = body?.flags;
    if (
      typeof flags !== "object" || flags === null ||
      Object.values(flags).some((value) => typeof value !== "string")
    ) {
      return errorResponse(c, {
        status: 400,
        code: "usage",
        message: 'the body must be {"flags": {name: string}}',
      });
    }
    if (!(name in adminCommands)) {
      return errorResponse(c, {
        status: 404,
        code: "usage",
        message: `unknown command ${JSON.stringify(name)}`,
      });
    }
    const result = await runAdminCommand(
      {
        databases: deps.databases,
        now: deps.clock.now(),
        keyGraceSeconds: deps.config.limits.KEY_GRACE_SECONDS,
      },
      name,
      flags as Record<string, string>,
    );
    // A command may have rotated or revoked a key: forget every cached lookup.
    deps.lineKeyCache.clear();
    if (result.ok) return c.json({ result: result.value });
    const status = result.code === "usage" || result.code === "invalid_input"
      ? 400
      : result.code.endsWith("_not_found")
      ? 404
      : 409;
    return errorResponse(c, { status, code: result.code, message: result.message });
  });
  return app;
}
