/** POST /api/authenticate: HTTP Basic `TIN:user_api_key` → a one-hour HS256 access token. */
import { Hono } from "hono";
import { authenticateUser, tinAgreesWithCompanyKey } from "../../lib/identity/service.ts";
import { issueAccessToken } from "../../lib/identity/tokens.ts";
import { parseKey } from "../../lib/platform/keys.ts";
import { companyApiKeyHeader, forbidden, hostRefusesEnvironment, resolveCaller } from "../auth.ts";
import type { AppDeps, AppEnv } from "../context.ts";
import { errorResponse } from "../errors.ts";

/** Decodes `Basic base64(user:password)`, or null when malformed. */
function basicCredentials(header: string | undefined): { tin: string; userKey: string } | null {
  const match = header ? /^Basic[ ]+([A-Za-z0-9+/=]+)\s*$/i.exec(header) : null;
  if (!match) return null;
  let decoded: string;
  try {
    decoded = new TextDecoder("utf-8", { fatal: true }).decode(
      Uint8Array.from(atob(match[1]), (ch) => ch.charCodeAt(0)),
    );
  } catch {
    return null;
  }
  const colon = decoded.indexOf(":");
  if (colon < 0) return null;
  return { tin: decoded.slice(0, colon), userKey: decoded.slice(colon + 1) };
}

export function authenticateRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.post("/", async (c) => {
    const refused = (message: string) =>
      errorResponse(c, {
        status: 401,
        code: "authentication_failed",
        message,
        issues: [{ field: "Authorization", location: "header", message }],
        headers: { "WWW-Authenticate": 'Basic realm="disbursements"' },
      });
    const credentials = basicCredentials(c.req.header("Authorization"));
    if (!credentials) {
      return refused(
        "HTTP Basic credentials are required: username is the company TIN, password the user API key",
      );
    }
    const parsed = parseKey(credentials.userKey);
    if (
      !/^\d{9}$/.test(credentials.tin) || parsed?.kind !== "user" || parsed.environment === null
    ) {
      return refused("the TIN or the user API key is not valid");
    }
    const environment = parsed.environment;
    if (hostRefusesEnvironment(deps, c, environment)) {
      return refused(`a ${environment} user key is not accepted on this host`);
    }
    const database = deps.databases[environment];
    const now = deps.clock.now();
    const user = await authenticateUser(database, credentials, now);
    if (!user.ok) return refused(user.message);
    const chosen = companyApiKeyHeader(c) === null
      ? user.value
      : await resolveCaller(deps, c, environment, user.value);
    if (chosen instanceof Response) return chosen;
    const agreed = tinAgreesWithCompanyKey(user.value.companyId, chosen.companyId);
    if (!agreed.ok) return forbidden(c, agreed.message, "CompanyApiKey");
    const ttlSeconds = deps.config.limits.TOKEN_TTL_SECONDS;
    const accessToken = await issueAccessToken(
      deps.jwtSecret,
      { userId: user.value.userId, companyId: chosen.companyId, environment },
      { now, ttlSeconds },
    );
    c.header("Cache-Control", "no-store");
    return c.json({ access_token: accessToken, token_type: "Bearer", expires_in: ttlSeconds }, 200);
  });
  return app;
}
