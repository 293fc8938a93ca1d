/**
 * Authentication for both surfaces. Surface A: a JWT from /api/authenticate, with an optional
 * CompanyApiKey header choosing among the user's companies. Surface B: a line key as bearer.
 */
import type { Context, MiddlewareHandler } from "hono";
import { apiCaller, lineKeyByHash, type LineRef } from "../lib/identity/service.ts";
import type { Environment } from "../lib/platform/config.ts";
import { keyState } from "../lib/identity/credentials.ts";
import { verifyAccessToken } from "../lib/identity/tokens.ts";
import { sha256Hex } from "../lib/platform/keys.ts";
import type { AppDeps, AppEnv } from "./context.ts";
import { errorResponse, type FieldLocation } from "./errors.ts";
import {
  ACCESS_TOKEN_REQUIRED,
  bearerOf,
  hostRefuses,
  lineKeyShape,
  unauthorizedSpec,
} from "./credential_shape.ts";

const unauthorized = (
  c: Context,
  message: string,
  field = "Authorization",
  location: FieldLocation = "header",
) => errorResponse(c, unauthorizedSpec(message, field, location));

/** 403 naming the header at fault: the caller is authenticated but may not act so. */
export const forbidden = (c: Context, message: string, field: string) =>
  errorResponse(c, {
    status: 403,
    code: "not_authorized",
    message,
    issues: [{ field, location: "header", message }],
  });

/** The bearer credential of the Authorization header, or null. */
export function bearerToken(c: Context): string | null {
  return bearerOf(c.req.header("Authorization"));
}

/** Refuses a key of the other environment on a host configured for one environment. */
export function hostRefusesEnvironment(
  deps: AppDeps,
  c: Context,
  environment: Environment,
): boolean {
  return hostRefuses(deps.config, c.req.header("Host"), environment);
}

/** The CompanyApiKey header, trimmed, or null when it is not sent. */
export function companyApiKeyHeader(c: Context): string | null {
  return c.req.header("CompanyApiKey")?.trim() ?? null;
}

/**
 * The company a Surface A request acts for (the CompanyApiKey header's when sent, else the
 * token's) and its first line, or the refusal as the response: 403 naming CompanyApiKey, or 401
 * for a user no longer in the token's company.
 */
export async function resolveCaller(
  deps: AppDeps,
  c: Context,
  environment: Environment,
  caller: { userId: string; companyId: string },
): Promise<{ companyId: string; firstLine: LineRef | null } | Response> {
  const resolved = await apiCaller(
    deps.databases[environment],
    { ...caller, companyApiKey: companyApiKeyHeader(c) },
    deps.clock.now(),
  );
  if (resolved.ok) return resolved.value;
  if (resolved.code === "membership_removed") return unauthorized(c, resolved.message);
  // The header names a company the user may not act for (docs/contract.md §3); the caller is
  // authenticated.
  return forbidden(c, resolved.message, "CompanyApiKey");
}

/** Surface A: requires a valid access token and sets `apiPrincipal`. */
export function requireApiUser(deps: AppDeps): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const token = bearerToken(c);
    if (token === null) return unauthorized(c, ACCESS_TOKEN_REQUIRED);
    const verified = await verifyAccessToken(deps.jwtSecret, token, deps.clock.now());
    if (!verified.ok) return unauthorized(c, verified.message);
    const { userId, environment } = verified.value;
    if (hostRefusesEnvironment(deps, c, environment)) {
      return unauthorized(c, `a ${environment} token is not accepted on this host`);
    }
    const chosen = await resolveCaller(deps, c, environment, verified.value);
    if (chosen instanceof Response) return chosen;
    c.set("apiPrincipal", {
      environment,
      database: deps.databases[environment],
      userId,
      companyId: chosen.companyId,
      firstLine: chosen.firstLine,
    });
    await next();
  };
}

/** Surface B: requires an active line key and sets `linePrincipal`. */
export function requireLineKey(deps: AppDeps): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const shape = lineKeyShape(deps.config, c.req.header("Authorization"), c.req.header("Host"));
    if (!shape.ok) return unauthorized(c, shape.message);
    const { secret, environment } = shape;
    const database = deps.databases[environment];
    const now = deps.clock.now();
    // Only the hash of the key is kept in memory, as in the database.
    const hash = await sha256Hex(secret);
    let found = deps.lineKeyCache.get(hash, now);
    if (!found) {
      const stored = await lineKeyByHash(database, hash);
      if (!stored) return unauthorized(c, "the line key is not valid");
      found = stored;
      deps.lineKeyCache.set(hash, found, now);
    }
    const { key, line } = found;
    const state = keyState(key, now);
    if (state !== "active") {
      return unauthorized(
        c,
        state === "expired"
          ? "the line key was rotated and its grace period has ended"
          : "the line key was revoked",
      );
    }
    c.set("linePrincipal", {
      environment,
      database,
      keyId: key.id,
      companyId: line.companyId,
      lineId: line.id,
      lineCode: line.code,
    });
    await next();
  };
}
