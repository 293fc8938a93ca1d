/**
 * The API's core: what the service answers before the API's app (its route groups, their schemas,
 * stores and drizzle's schema) has loaded, exactly as that app would. A body-less request that the
 * app refuses before reading any database, signature or body: a known path asked with another
 * method (405, from the route table written down in routes/api_routes.ts), a /v1 request without a
 * line key or with a credential that is not one (401), an /api request without an access token
 * (401), a path no API route begins with (404), and the rate limit those take a token of (429).
 * Anything else is not the core's to answer (null): the request waits for the app. Small on
 * purpose: it loads before the service listens, so its first answer costs little more than the
 * runtime's own start.
 */
import type { Clock } from "../lib/platform/clock.ts";
import type { Config } from "../lib/platform/config.ts";
import type { Metrics } from "../lib/platform/metrics.ts";
import type { RateLimiter } from "../lib/platform/rate_limit.ts";
import { accessLogEntry } from "./access_log.ts";
import { API_ROUTES } from "./api_routes.ts";
import {
  ACCESS_TOKEN_REQUIRED,
  bearerOf,
  lineKeyShape,
  unauthorizedSpec,
} from "./credential_shape.ts";
import { setDocsSecurityHeaders } from "./docs_headers.ts";
import { errorBody, type ErrorSpec, rateLimitedError, surfaceOf } from "./errors.ts";
import { knownPaths, methodsAllowedInstead } from "./known_paths.ts";

export interface ApiCoreOptions {
  readonly config: Pick<Config, "testHost" | "liveHost" | "limits">;
  /** The apps' counters: an answer of the core is counted as theirs are. */
  readonly metrics: Metrics;
  /** Access log sink, as the apps'. */
  readonly log?: (entry: Record<string, unknown>) => void;
  /** The limiter the API's app shares (RATE_LIMIT_RPS), or null when there is none. */
  readonly rateLimiter: RateLimiter | null;
  /** The rate limiter's time, as the app's. */
  readonly clock: Clock;
}

/** The core's answer to a request (its path given, as the service read it), or null: not its own. */
export type ApiCore = (request: Request, path: string) => Response | null;

/** The request id a request brings, when hono's requestId would keep it; else a new one. */
export function requestIdOf(request: Request): string {
  const given = request.headers.get("X-Request-Id");
  return given && given.length <= 255 && !/[^\w\-=]/.test(given) ? given : crypto.randomUUID();
}

/** Counts and logs an answer given outside the apps, as their own middleware does. */
export function recordAnswer(
  options: Pick<ApiCoreOptions, "metrics" | "log">,
  answer: {
    readonly requestId: string;
    readonly method: string;
    readonly path: string;
    readonly status: number;
    readonly startedMs: number;
  },
): void {
  const durationMs = performance.now() - answer.startedMs;
  options.metrics.recordRequest(surfaceOf(answer.path), answer.status, durationMs);
  options.log?.(accessLogEntry({ ...answer, routePath: answer.path, durationMs }));
}

/** A refusal the core can give, and whether the docs' middleware would have set its headers. */
interface CoreRefusal {
  readonly spec: ErrorSpec;
  readonly docsHeaders: boolean;
}

/** The API's core over the route table of routes/api_routes.ts. */
export function createApiCore(options: ApiCoreOptions): ApiCore {
  const routes = API_ROUTES.map((route) => {
    const [method, path] = route.split(" ");
    return { method, path };
  });
  const paths = knownPaths(routes);
  // A path whose first segment no route has is a 404 whatever its credential.
  const firstSegments = new Set(routes.map(({ path }) => path.split("/")[1]));

  const refusalOf = (request: Request, path: string): CoreRefusal | null => {
    const surface = surfaceOf(path);
    const allowed = methodsAllowedInstead(paths, path, request.method);
    if (allowed !== null) {
      return {
        spec: {
          status: 405,
          code: "method_not_allowed",
          message: `${path} does not answer ${request.method}; it answers ${allowed.join(", ")}`,
          headers: { Allow: allowed.join(", ") },
        },
        docsHeaders: false,
      };
    }
    const authorization = request.headers.get("Authorization");
    if (surface === "v1") {
      const shape = lineKeyShape(options.config, authorization, request.headers.get("Host"));
      return shape.ok ? null : { spec: unauthorizedSpec(shape.message), docsHeaders: true };
    }
    if (surface === "api") {
      // The one /api route before the credential's check; a token needs its signature checked.
      if (path === "/api/authenticate" || bearerOf(authorization) !== null) return null;
      return { spec: unauthorizedSpec(ACCESS_TOKEN_REQUIRED), docsHeaders: true };
    }
    if (firstSegments.has(path.split("/")[1])) return null;
    return {
      spec: {
        status: 404,
        code: "not_found",
        message: `no resource at ${request.method} ${path}`,
      },
      docsHeaders: true,
    };
  };

  /** The app's rate limit comes before all of the core's refusals, on /api and /v1. */
  const rateLimited = (request: Request, path: string): CoreRefusal | null => {
    if (options.rateLimiter === null || surfaceOf(path) === "other") return null;
    const credential = request.headers.get("Authorization") ?? "anonymous";
    const decision = options.rateLimiter.take(credential, options.clock.now());
    if (decision.allowed) return null;
    return {
      spec: rateLimitedError(options.config.limits.RATE_LIMIT_RPS, decision.retryAfterSeconds),
      docsHeaders: false,
    };
  };

  return (request, path) => {
    // A body is read, limited and checked by the app first; an encoded path is decoded by it.
    if (request.body !== null || path.includes("%")) return null;
    const startedMs = performance.now();
    const refused = refusalOf(request, path);
    if (refused === null) return null;
    options.metrics.requestStarted();
    const requestId = requestIdOf(request);
    const { spec, docsHeaders } = rateLimited(request, path) ?? refused;
    const { status, contentType, body } = errorBody(surfaceOf(path), spec);
    const headers = new Headers(spec.headers);
    headers.set("Content-Type", contentType);
    headers.set("X-Request-Id", requestId);
    if (docsHeaders) setDocsSecurityHeaders(headers);
    options.metrics.requestFinished();
    recordAnswer(options, { requestId, method: request.method, path, status, startedMs });
    return new Response(request.method === "HEAD" ? null : JSON.stringify(body), {
      status,
      headers,
    });
  };
}
