/**
 * The app the service serves while it starts (issue 21, issue 33). The whole app (createApp's:
 * hono, the routes, their services and stores) is imported and built at once, in the background,
 * while this answers: /healthz at once, and /readyz 503 `starting` until the whole app can answer
 * the API, so a load balancer that trusts /readyz never sends a request to a process that would
 * still have to load its routes. A request that comes before then waits for the same load. From
 * then on the whole app answers every request, health and readiness included, exactly as in tests.
 */
import type { Database } from "../db/client.ts";
import { serviceReadiness } from "../lib/admin/service.ts";
import type { Environment } from "../lib/platform/config.ts";
import type { Metrics } from "../lib/platform/metrics.ts";
import { accessLogEntry } from "./access_log.ts";
import { errorBody, surfaceOf } from "./errors.ts";

/** What answers a request, as Deno.serve calls it: the whole app's `fetch`. */
export type FetchHandler = (
  request: Request,
  info: Deno.ServeHandlerInfo,
) => Response | Promise<Response>;

export interface LazyAppOptions {
  readonly databases: Readonly<Record<Environment, Database>>;
  /** The whole app's counters too: health answers given before it loads are counted alike. */
  readonly metrics: Metrics;
  /** Access log sink, as the whole app's. */
  readonly log?: (entry: Record<string, unknown>) => void;
  /** WORKER_STALL_MS: a sweep running longer makes /readyz say worker_stalled. */
  readonly workerStallMs: number;
  /** Imports and builds the whole app: called at once, and again after a load that failed. */
  readonly load: () => Promise<FetchHandler>;
}

/** An answer of the health routes while the whole app loads (routes/ops.ts answers them after). */
type HealthAnswer = (
  options: LazyAppOptions,
) => Promise<{ status: number; body: Record<string, unknown> }>;

const healthAnswers: Readonly<Record<string, HealthAnswer>> = {
  "/healthz": () => Promise.resolve({ status: 200, body: { status: "ok" } }),
  // Not ready while the whole app loads, whatever the databases say; they are reported too.
  "/readyz": async (options) => {
    const { body } = await serviceReadiness(options.databases, {
      stalledWorkers: () => options.metrics.stalledWorkers(options.workerStallMs),
    });
    return {
      status: 503,
      body: {
        status: "not_ready",
        reason: "starting",
        reasons: ["starting", ...(body.reasons ?? [])],
        databases: body.databases,
        ...(body.stalled_workers ? { stalled_workers: body.stalled_workers } : {}),
      },
    };
  },
};

/** The request id a request brings, when hono's requestId would keep it; else a new one. */
function requestIdOf(request: Request): string {
  const given = request.headers.get("X-Request-Id");
  return given && given.length <= 255 && !/[^\w\-=]/.test(given) ? given : crypto.randomUUID();
}

/** The service's request handler: health at once, everything else by the whole app. */
export function createLazyApp(options: LazyAppOptions): FetchHandler {
  let whole: FetchHandler | null = null;
  let loading: Promise<FetchHandler> | null = null;
  const load = () =>
    loading ??= options.load().then(
      (fetch) => (whole = fetch),
      (error) => {
        console.error(JSON.stringify({
          time: new Date().toISOString(),
          level: "error",
          msg: "the app failed to load",
          error: error instanceof Error ? error.stack ?? error.message : String(error),
        }));
        // The next request, or the next /readyz, tries again.
        loading = null;
        throw error;
      },
    );
  // Loaded at once: readiness waits for it, and a failure here is logged and tried again.
  load().catch(() => {});

  const answerHealth = async (request: Request, path: string, answer: HealthAnswer) => {
    const started = performance.now();
    const requestId = requestIdOf(request);
    options.metrics.requestStarted();
    let answered;
    try {
      answered = await answer(options);
    } finally {
      options.metrics.requestFinished();
    }
    const durationMs = performance.now() - started;
    options.metrics.recordRequest(surfaceOf(path), answered.status, durationMs);
    options.log?.(accessLogEntry({
      requestId,
      method: request.method,
      path,
      routePath: path,
      status: answered.status,
      durationMs,
    }));
    return new Response(request.method === "HEAD" ? null : JSON.stringify(answered.body), {
      status: answered.status,
      headers: { "Content-Type": "application/json", "X-Request-Id": requestId },
    });
  };

  return async (request, info) => {
    if (whole) return await whole(request, info);
    const path = new URL(request.url).pathname;
    const health = healthAnswers[path];
    if (health && (request.method === "GET" || request.method === "HEAD")) {
      load().catch(() => {});
      return await answerHealth(request, path, health);
    }
    let fetch;
    try {
      fetch = await load();
    } catch {
      const failed = errorBody(surfaceOf(path), {
        status: 500,
        code: "internal_error",
        message: "the service failed to load its routes; it tries again at the next request",
      });
      return new Response(JSON.stringify(failed.body), {
        status: failed.status,
        headers: { "Content-Type": failed.contentType },
      });
    }
    return await fetch(request, info);
  };
}
