/**
 * The console's browser side of operator sessions (issue 20): the session cookie, the CSRF token
 * of every form, the environment shown, the operator's time zone, roles and company scope. The
 * identity itself is lib/operators: a console session is an operator session like the CLI's.
 */
import type { Context, MiddlewareHandler } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { peerAddressOf } from "../peer.ts";
import type { Database } from "../../db/client.ts";
import { scopeCondition as scopeFor } from "../../lib/console/paging.ts";
import type { CommandRequest, Flags } from "../../lib/admin/command_kit.ts";
import { runtimeSettingsOf } from "../../lib/payouts/settings.ts";
import { inScope, type Role, roleAllows, SESSION_IDLE_MS } from "../../lib/operators/rules.ts";
import {
  actorOf,
  type OperatorDeps,
  readSession,
  type SignedInOperator,
  touchSession,
} from "../../lib/operators/service.ts";
import type { Environment } from "../../lib/platform/config.ts";
import { PurposeMac } from "../../lib/platform/crypto.ts";
import { constantTimeEqual } from "../../lib/platform/keys.ts";
import type { Result } from "../../lib/platform/result.ts";
import type { AppDeps } from "../context.ts";

export const SESSION_COOKIE = "console_session";
const ENVIRONMENT_COOKIE = "console_env";
const ZONE_COOKIE = "console_tz";
/** Where the console's cookies are sent: nowhere else on the host. */
export const COOKIE_PATH = "/console";
/** The session's use is written at most once a minute, not at every page. */
const TOUCH_INTERVAL_MS = 60_000;

/** The signed-in operator as pages see it. */
export interface ConsoleOperator {
  readonly id: string;
  readonly email: string;
  readonly role: Role;
  /** Company ids the operator is limited to; null: every company. */
  readonly companyScope: readonly string[] | null;
  readonly totpVerified: boolean;
}

/** The Hono env of every console page: who, which environment, and the form token. */
export interface ConsoleEnv {
  Variables: {
    requestId: string;
    operator: ConsoleOperator;
    /** The environment whose data the page shows and its forms change. */
    environment: Environment;
    /** That environment's database. */
    database: Database;
    /** The token every state-changing form carries (CsrfField renders it). */
    csrfToken: string;
    /** The operator's IANA time zone (UTC until the browser tells it). */
    timeZone: string;
    /** The session cookie's token, for commands run as this operator. */
    sessionToken: string;
  };
}

export type ConsoleContext = Context<ConsoleEnv>;

export function operatorDepsOf(deps: AppDeps): OperatorDeps {
  return { databases: deps.databases, secretBox: deps.secretBox, dev: deps.config.dev };
}

/** The cookie attributes of the console: HttpOnly, SameSite=Strict, Secure behind https. */
export function cookieOptions(deps: AppDeps, maxAgeSeconds?: number) {
  return {
    path: COOKIE_PATH,
    httpOnly: true,
    sameSite: "Strict" as const,
    secure: deps.config.baseUrl.startsWith("https:"),
    ...(maxAgeSeconds === undefined ? {} : { maxAge: maxAgeSeconds }),
  };
}

/** Who made a change from the console, for the audit log: `console <address>`. */
export function consoleOrigin(c: Context): string {
  const address = peerAddressOf(c);
  return address === null ? "console" : `console ${address}`;
}

/** The audit actor of the signed-in operator: who, and `console <address>`. */
export function consoleActor(c: ConsoleContext): ReturnType<typeof actorOf> {
  const { id, email } = c.get("operator");
  return { operator: { id, email }, origin: consoleOrigin(c) };
}

/** The CSRF token of a session: a MAC of its id, so it dies with the session. */
export function csrfTokenFor(deps: AppDeps, sessionId: string): Promise<string> {
  return new PurposeMac(deps.jwtSecret, "console-csrf").sign(`session|${sessionId}`);
}

function isEnvironment(value: unknown): value is Environment {
  return value === "test" || value === "live";
}

/** A time zone Intl knows, or null. */
export function validTimeZone(value: string | undefined): string | null {
  if (!value || value.length > 64) return null;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: value });
    return value;
  } catch {
    return null;
  }
}

const isSafeMethod = (method: string) => method === "GET" || method === "HEAD";

/** The sign-in page's address, coming back to `path` afterwards. */
export function signInUrl(path: string, notice?: "expired" | "signed_out"): string {
  const query = new URLSearchParams();
  if (path !== "/console" && path.startsWith("/console/")) query.set("next", path);
  if (notice) query.set("notice", notice);
  const text = query.toString();
  return `/console/sign-in${text ? `?${text}` : ""}`;
}

/** What a refused request shows: a small page in the console's frame is rendered by mod.tsx. */
export type Refuse = (
  c: ConsoleContext,
  status: 403 | 404,
  message: string,
) => Response | Promise<Response>;

/**
 * Every console page but sign-in: a valid session (else the sign-in page), the environment chosen
 * (`?env=` or the form's `env`, remembered in a cookie; test until chosen), TOTP for live, and the
 * CSRF token on every request that may change something (403, nothing read or written before).
 */
export function consoleSession(deps: AppDeps, refuse: Refuse): MiddlewareHandler<ConsoleEnv> {
  const operatorDeps = operatorDepsOf(deps);
  return async (c, next) => {
    const token = getCookie(c, SESSION_COOKIE) ?? "";
    const now = deps.clock.now();
    const session = await readSession(operatorDeps, token, now);
    if (!session.ok) {
      if (token !== "") deleteCookie(c, SESSION_COOKIE, { path: COOKIE_PATH });
      const back = isSafeMethod(c.req.method) ? c.req.path : "/console";
      return c.redirect(
        signInUrl(back, session.code === "session_expired" ? "expired" : undefined),
        303,
      );
    }
    const operator = session.value;
    const csrfToken = await csrfTokenFor(deps, operator.sessionId);
    let chosen: unknown = c.req.query("env");
    let csrfSent: unknown = null;
    if (!isSafeMethod(c.req.method)) {
      const form = await c.req.parseBody().catch(() => ({} as Record<string, unknown>));
      csrfSent = form.csrf;
      chosen = form.env;
    }
    const remembered = getCookie(c, ENVIRONMENT_COOKIE);
    const environment: Environment = isEnvironment(chosen)
      ? chosen
      : isEnvironment(remembered)
      ? remembered
      : "test";
    c.set("operator", operatorOf(operator));
    c.set("environment", environment);
    c.set("database", deps.databases[environment]);
    c.set("csrfToken", csrfToken);
    c.set("sessionToken", token);
    const zoneParam = validTimeZone(c.req.query("tz"));
    // Not HttpOnly: the console's script sets it from the browser's zone.
    if (zoneParam) {
      setCookie(c, ZONE_COOKIE, zoneParam, {
        ...cookieOptions(deps, 365 * 86_400),
        httpOnly: false,
      });
    }
    c.set("timeZone", zoneParam ?? validTimeZone(getCookie(c, ZONE_COOKIE)) ?? "UTC");
    if (
      !isSafeMethod(c.req.method) &&
      (typeof csrfSent !== "string" || !constantTimeEqual(csrfSent, csrfToken))
    ) {
      return refuse(
        c,
        403,
        "This form was refused: its security token is missing or stale. Reload the page and try again.",
      );
    }
    if (environment === "live" && !operator.totpVerified) {
      return refuse(
        c,
        403,
        "Live data needs a session signed in with a TOTP code. Sign out and sign in again with the code of your authenticator app, or switch to test.",
      );
    }
    // Remembered only once allowed: a refused live view leaves the console on test.
    if (environment !== remembered) {
      setCookie(c, ENVIRONMENT_COOKIE, environment, cookieOptions(deps));
    }
    if (operator.sessionExpiresAt - now < SESSION_IDLE_MS - TOUCH_INTERVAL_MS) {
      await touchSession(operatorDeps, operator, now);
    }
    await next();
  };
}

function operatorOf(operator: SignedInOperator): ConsoleOperator {
  return {
    id: operator.id,
    email: operator.email,
    role: operator.role,
    companyScope: operator.companyScope,
    totpVerified: operator.totpVerified,
  };
}

/** Whether the signed-in operator's role includes `role`. */
export function hasRole(c: ConsoleContext, role: Role): boolean {
  return roleAllows(c.get("operator").role, role);
}

/**
 * Refuses (403, before anything is read or written) an operator whose role is below `role`;
 * pages use kit.tsx's requireRole, which renders the refusal in the console's frame.
 */
export function roleGate(role: Role, refuse: Refuse): MiddlewareHandler<ConsoleEnv> {
  return async (c, next) => {
    const operator = c.get("operator");
    if (!roleAllows(operator.role, role)) {
      return refuse(
        c,
        403,
        `${operator.email} is ${
          operator.role === "admin" ? "an" : "a"
        } ${operator.role}: this needs the ${role} role.`,
      );
    }
    await next();
  };
}

/** The company ids the operator may see; null: every company. Queries filter by it. */
export function companiesInScope(c: ConsoleContext): readonly string[] | null {
  return c.get("operator").companyScope;
}

/**
 * Whether the operator may see a company's object. A page answers false with 404, as for a
 * missing object, so an id in the URL tells nothing about another company.
 */
export function assertCompanyInScope(c: ConsoleContext, companyId: string | null): boolean {
  return companyId !== null && inScope(companiesInScope(c), companyId);
}

/** An SQL condition limiting `column` to the operator's companies, with its arguments. */
export function scopeCondition(
  c: ConsoleContext,
  column: string,
): ReturnType<typeof scopeFor> {
  return scopeFor(column, companiesInScope(c));
}

/**
 * Runs an operator command (lib/admin) as the signed-in operator: the same role, TOTP, scope,
 * dual-control and audit checks as the CLI, with `console <address>` as the audit origin.
 */
export async function runConsoleCommand(
  deps: AppDeps,
  c: ConsoleContext,
  name: string,
  flags: Flags,
): Promise<Result<Record<string, unknown>>> {
  const { runAdminCommand } = await import("../../lib/admin/commands.ts");
  const request: CommandRequest = {
    databases: deps.databases,
    now: deps.clock.now(),
    keyGraceSeconds: deps.config.limits.KEY_GRACE_SECONDS,
    secretBox: deps.secretBox,
    runtimeSettings: runtimeSettingsOf(deps.config),
    dev: deps.config.dev,
    origin: consoleOrigin(c),
    sessionToken: c.get("sessionToken"),
    input: {},
  };
  const result = await runAdminCommand(request, name, flags);
  // A command may have rotated or revoked a key: forget every cached lookup.
  deps.lineKeyCache.clear();
  return result;
}
