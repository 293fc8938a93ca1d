/**
 * The app the service serves while it starts (issue 21, issue 33), loaded in two steps in the
 * background while this answers /healthz at once, and the API's core (routes/api_core.ts) answers
 * what the API's app would refuse without loading (no credential, a wrong method). First the API's
 * app (routes/api_app.ts: /v1, /api, health, docs): /readyz says 503 `starting` until it can
 * answer, so a load balancer that trusts /readyz never sends a request to a process that would
 * still have to load the API's routes. Then the whole app (the payee's pages, the console, the
 * admin endpoint, the sandbox pages, the rails' webhooks), which answers every request from then
 * on, exactly as in tests. A request that comes before its app has loaded waits for it: an API
 * request the core cannot answer, or a console or portal page asked early, is late, never a 404.
 * /readyz does not wait for the whole app: what it says is that the API can be served, which is
 * what a load balancer sends there.
 */
import type { Database } from "../db/client.ts";
import type { Environment } from "../lib/platform/config.ts";
import type { Metrics } from "../lib/platform/metrics.ts";
import { elapsed } from "../lib/platform/clock.ts";
import { type ApiCore, recordAnswer, requestIdOf } from "./api_core.ts";
import { errorBody, surfaceOf } from "./errors.ts";

/** What answers a request, as Deno.serve calls it: an app's `fetch`. */
export type FetchHandler = (
  request: Request,
  info: Deno.ServeHandlerInfo,
) => Response | Promise<Response>;

/**
 * Where the whole app's own surfaces are (routes/app.ts mounts them): a request under one waits
 * for the whole app; any other is the API app's to answer.
 */
export const LATER_SURFACES: readonly string[] = [
  "/console",
  "/admin",
  "/sandbox",
  "/rails",
  "/portal",
  "/pay",
  "/documents",
  "/checks",
];

function isLaterSurface(path: string): boolean {
  return LATER_SURFACES.some((prefix) => path === prefix || path.startsWith(prefix + "/"));
}

export interface LazyAppOptions {
  /** The databases, or their opening: /readyz waits for them. */
  readonly databases:
    | Readonly<Record<Environment, Database>>
    | Promise<Readonly<Record<Environment, Database>>>;
  /** The apps' counters too: health answers given before they load are counted alike. */
  readonly metrics: Metrics;
  /** Access log sink, as the apps'. */
  readonly log?: (entry: Record<string, unknown>) => void;
  /** WORKER_STALL_MS: a sweep running longer makes /readyz say worker_stalled. */
  readonly workerStallMs: number;
  /** Imports and builds the API's app: called at once, and again after a load that failed. */
  readonly loadApi: () => Promise<FetchHandler>;
  /**
   * Imports and builds the whole app (after the API's, which it should wait for): called by the
   * first request under a later surface, and again after a load that failed. The service also
   * calls it itself, in the background, shortly after the API's app has loaded.
   */
  readonly load: () => Promise<FetchHandler>;
  /**
   * Called once, after the first answer of the API's app: the service starts what that answer
   * need not wait for (the audit key, with Node's crypto).
   */
  readonly afterFirstApiAnswer?: () => void;
  /**
   * What answers, before the API's app has loaded, the requests it refuses without it
   * (routes/api_core.ts); any other request waits for the app.
   */
  readonly core?: ApiCore;
  /**
   * With a core, the API's app starts loading after the core's first answer, at the first request
   * that needs the app (readiness included), or this long after the start, whichever comes first:
   * loading holds the event loop (the databases' opening, compiling and evaluating the API's
   * modules), and a request that came meanwhile would wait for all of it. Without a core it
   * starts at once.
   */
  readonly apiLoadDelayMs?: number;
}

/** An answer of the health routes while the API's app loads (routes/ops.ts answers them after). */
type HealthAnswer = (
  options: LazyAppOptions,
) => Promise<{ status: number; body: Record<string, unknown> }>;

const healthAnswers: Readonly<Record<string, HealthAnswer>> = {
  "/healthz": () => Promise.resolve({ status: 200, body: { status: "ok" } }),
  // Not ready while the API's app loads, whatever the databases say; they are reported too.
  "/readyz": async (options) => {
    // Imported here, not with the service's start: it brings the database layer.
    const { serviceReadiness } = await import("../lib/admin/service.ts");
    const { body } = await serviceReadiness(await options.databases, {
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

/** Loads an app once at a time, logs a failed load, and tries again at the next call. */
function loader(load: () => Promise<FetchHandler>, name: string) {
  let loaded: FetchHandler | null = null;
  let loading: Promise<FetchHandler> | null = null;
  return {
    loaded: () => loaded,
    load: () =>
      loading ??= load().then(
        (fetch) => (loaded = fetch),
        (error) => {
          console.error(JSON.stringify({
            time: new Date().toISOString(),
            level: "error",
            msg: `the ${name} failed to load`,
            error: error instanceof Error ? error.stack ?? error.message : String(error),
          }));
          loading = null;
          throw error;
        },
      ),
  };
}

/** The service's request handler: health at once, the API by its app, the rest by the whole. */
export function createLazyApp(options: LazyAppOptions): FetchHandler {
  const api = loader(options.loadApi, "API's app");
  const whole = loader(options.load, "app");
  // Readiness waits for the API's app, and a failure is logged and tried again.
  const loadApi = () => void api.load().catch(() => {});
  if (options.core) elapsed(options.apiLoadDelayMs ?? 0).then(loadApi);
  else loadApi();

  const answerHealth = async (request: Request, path: string, answer: HealthAnswer) => {
    const startedMs = performance.now();
    const requestId = requestIdOf(request);
    options.metrics.requestStarted();
    let answered;
    try {
      answered = await answer(options);
    } finally {
      options.metrics.requestFinished();
    }
    recordAnswer(options, {
      requestId,
      method: request.method,
      path,
      status: answered.status,
      startedMs,
    });
    return new Response(request.method === "HEAD" ? null : JSON.stringify(answered.body), {
      status: answered.status,
      headers: { "Content-Type": "application/json", "X-Request-Id": requestId },
    });
  };

  let firstApiAnswered = false;
  return async (request, info) => {
    const loaded = whole.loaded();
    if (loaded) return await loaded(request, info);
    const path = new URL(request.url).pathname;
    const later = isLaterSurface(path);
    const apiApp = api.loaded();
    if (apiApp && !later) {
      const response = await apiApp(request, info);
      // Once: the whole app is loaded by the service's start, not by a request, so API requests
      // keep coming here, and a timer each cost the reads about a fifth of their rate.
      if (!firstApiAnswered) {
        firstApiAnswered = true;
        options.afterFirstApiAnswer?.();
      }
      return response;
    }
    const health = healthAnswers[path];
    if (!apiApp && health && (request.method === "GET" || request.method === "HEAD")) {
      // Readiness asks about the API's app, so its load starts; liveness is answered first.
      if (path === "/readyz") loadApi();
      const answered = await answerHealth(request, path, health);
      elapsed(0).then(loadApi);
      return answered;
    }
    if (!apiApp && !later) {
      const answered = options.core?.(request, path);
      if (answered) {
        // After this answer has gone.
        elapsed(0).then(loadApi);
        return answered;
      }
    }
    let fetch;
    try {
      fetch = await (later ? whole : api).load();
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
