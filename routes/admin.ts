/**
 * The loopback-only admin endpoint: while the service holds the databases, the operator CLI sends
 * its commands here. Refused unless the peer is a loopback address and the bearer token matches
 * DATA_DIR/admin-token. The operator's session travels in the X-Operator-Session header, and what
 * the CLI prompted for (password, TOTP code) in the body's `input`, never in the URL or the log.
 */
import { Hono } from "hono";
import { constantTimeEqual } from "../lib/platform/keys.ts";
import { runtimeSettingsOf } from "../lib/payouts/settings.ts";
import { bearerToken } from "./auth.ts";
import { peerAddressOf } from "./peer.ts";
import type { AppDeps, AppEnv } from "./context.ts";
import { errorResponse } from "./errors.ts";

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;

/** The header that carries the operator's session token. */
export const OPERATOR_SESSION_HEADER = "X-Operator-Session";

/**
 * The command table (operators, audit, every command's service) is loaded at the first admin
 * request, not at every start of the service.
 */
const loadCommands = () => import("../lib/admin/commands.ts");

/** HTTP statuses of the refusals about the operator rather than the action. */
const OPERATOR_REFUSAL_STATUS: Readonly<Record<string, 401 | 403>> = {
  session_required: 401,
  session_invalid: 401,
  session_expired: 401,
  sign_in_failed: 401,
  credentials_wrong: 401,
  enrollment_invalid: 401,
  enrollment_expired: 401,
  totp_required: 403,
  totp_replayed: 401,
  totp_not_enrolled: 403,
  operator_locked: 403,
  operator_disabled: 403,
  role_insufficient: 403,
  operator_scoped: 403,
};

/** Request body fields: each a map of names to strings. */
function stringMap(value: unknown): value is Record<string, string> {
  return typeof value === "object" && value !== null && !Array.isArray(value) &&
    Object.values(value).every((item) => typeof item === "string");
}

export function adminRoutes(deps: AppDeps & { adminToken: string }): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use(async (c, next) => {
    const address = peerAddressOf(c);
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
    const body = await c.req.json().catch(() => null) as
      | { flags?: unknown; input?: unknown }
      | null;
    const flags = body?.flags;
    const input = body?.input ?? {};
    if (!stringMap(flags) || !stringMap(input)) {
      return errorResponse(c, {
        status: 400,
        code: "usage",
        message: 'the body must be {"flags": {name: string}, "input"?: {name: string}}',
      });
    }
    const { adminCommands, isInputRefusal, runAdminCommand } = await loadCommands();
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
        secretBox: deps.secretBox,
        runtimeSettings: runtimeSettingsOf(deps.config),
        dev: deps.config.dev,
        origin: `http ${peerAddressOf(c)}`,
        sessionToken: c.req.header(OPERATOR_SESSION_HEADER) ?? null,
        input,
      },
      name,
      flags,
    );
    // A command may have rotated or revoked a key: forget every cached lookup.
    deps.lineKeyCache.clear();
    if (result.ok) return c.json({ result: result.value });
    const status = isInputRefusal(result.code) ? 400 : OPERATOR_REFUSAL_STATUS[result.code] ??
      (result.code.endsWith("_not_found") ? 404 : 409);
    return errorResponse(c, { status, code: result.code, message: result.message });
  });
  return app;
}
