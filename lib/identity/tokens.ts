/**
 * Surface A access tokens: JWT signed with HS256 only (the algorithm is pinned on verify, so an
 * `alg: none` or RS/ES token is refused), carrying user, company, environment and expiry.
 */
import type { Environment } from "../platform/config.ts";
import { ok, refuse, type Result } from "../platform/result.ts";

export interface AccessClaims {
  readonly userId: string;
  readonly companyId: string;
  readonly environment: Environment;
}

const ISSUER = "disbursement-service";

/** jose is loaded at the first token signed or read, not at every start of the service. */
let jose: Promise<typeof import("jose")> | null = null;
const loadJose = () => jose ??= import("jose");

/** Signs an access token valid for `ttlSeconds` from `now` (ms). */
export async function issueAccessToken(
  secret: Uint8Array,
  claims: AccessClaims,
  options: { now: number; ttlSeconds: number },
): Promise<string> {
  const { SignJWT } = await loadJose();
  const issuedAt = Math.floor(options.now / 1000);
  return await new SignJWT({ cid: claims.companyId, env: claims.environment })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuer(ISSUER)
    .setSubject(claims.userId)
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + options.ttlSeconds)
    .sign(secret);
}

/** Verifies signature, algorithm, issuer and expiry at `now` (ms). */
export async function verifyAccessToken(
  secret: Uint8Array,
  token: string,
  now: number,
): Promise<Result<AccessClaims, "token_expired" | "token_invalid">> {
  const { errors, jwtVerify } = await loadJose();
  try {
    const { payload } = await jwtVerify(token, secret, {
      algorithms: ["HS256"],
      issuer: ISSUER,
      currentDate: new Date(now),
      requiredClaims: ["exp", "sub"],
    });
    const environment = payload.env;
    if (
      typeof payload.sub !== "string" || typeof payload.cid !== "string" ||
      (environment !== "test" && environment !== "live")
    ) {
      return refuse(
        "token_invalid",
        "the access token does not carry user, company and environment",
      );
    }
    return ok({ userId: payload.sub, companyId: payload.cid, environment });
  } catch (error) {
    if (error instanceof errors.JWTExpired) {
      return refuse("token_expired", "the access token has expired; authenticate again");
    }
    return refuse("token_invalid", "the access token is not valid");
  }
}
