/**
 * What a request's credential says by its shape alone, before any database or signature is read:
 * none, not a line key, or a key of the environment its host refuses. The API's app
 * (routes/auth.ts) and the API's core (routes/api_core.ts) refuse those alike, with these messages.
 */
import type { Environment } from "../lib/platform/config.ts";
import { parseKey } from "../lib/platform/keys.ts";
import type { ErrorSpec, FieldLocation } from "./errors.ts";

/** The hosts that take one environment's credentials only (TEST_HOST, LIVE_HOST). */
export interface EnvironmentHosts {
  readonly testHost: string | null;
  readonly liveHost: string | null;
}

/** The bearer credential of an Authorization header, or null. */
export function bearerOf(authorization: string | undefined | null): string | null {
  if (!authorization) return null;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization);
  return match ? match[1] : null;
}

/** True when a credential of `environment` is refused on `hostHeader` (its Host header). */
export function hostRefuses(
  hosts: EnvironmentHosts,
  hostHeader: string | undefined | null,
  environment: Environment,
): boolean {
  const host = (hostHeader ?? "").split(":")[0].toLowerCase();
  if (environment === "live" && hosts.testHost && host === hosts.testHost) return true;
  if (environment === "test" && hosts.liveHost && host === hosts.liveHost) return true;
  return false;
}

/** A /v1 credential refused by its shape (the 401's message), or the line key to look up. */
export type LineKeyShape =
  | { readonly ok: false; readonly message: string }
  | { readonly ok: true; readonly secret: string; readonly environment: Environment };

/** What the Authorization and Host headers of a /v1 request say before the key is looked up. */
export function lineKeyShape(
  hosts: EnvironmentHosts,
  authorization: string | undefined | null,
  hostHeader: string | undefined | null,
): LineKeyShape {
  const secret = bearerOf(authorization);
  if (secret === null) {
    return { ok: false, message: "a line key is required: Authorization: Bearer sk_…" };
  }
  const parsed = parseKey(secret);
  if (parsed?.kind !== "line" || parsed.environment === null) {
    return {
      ok: false,
      message: "the bearer credential is not a line key (sk_test_… or sk_live_…)",
    };
  }
  if (hostRefuses(hosts, hostHeader, parsed.environment)) {
    return { ok: false, message: `a ${parsed.environment} key is not accepted on this host` };
  }
  return { ok: true, secret, environment: parsed.environment };
}

/** The 401's message of an /api request without an access token. */
export const ACCESS_TOKEN_REQUIRED = "an access token is required: Authorization: Bearer <token>";

/** The 401 of a credential refused, naming the field at fault (the Authorization header). */
export function unauthorizedSpec(
  message: string,
  field = "Authorization",
  location: FieldLocation = "header",
): ErrorSpec {
  return {
    status: 401,
    code: "authentication_failed",
    message,
    issues: [{ field, location, message }],
    headers: { "WWW-Authenticate": 'Bearer realm="disbursements"' },
  };
}
