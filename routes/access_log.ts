/**
 * The access log line of one answered request, the same for every answer the service gives:
 * createApp's middleware and the health answers of the lazily loaded app (routes/lazy_app.ts).
 */

/** Paths whose segments carry secrets (portal links) are logged by their route pattern only. */
const SECRET_PATH = /^\/portal\//;

/** One JSON object per request, as LOG_FORMAT=json prints it. */
export function accessLogEntry(request: {
  readonly requestId: string;
  readonly method: string;
  readonly path: string;
  /** The matched route's pattern, logged instead of a path that carries a secret. */
  readonly routePath: string;
  readonly status: number;
  readonly durationMs: number;
}): Record<string, unknown> {
  return {
    time: new Date().toISOString(),
    level: request.status >= 500 ? "error" : "info",
    msg: "request",
    request_id: request.requestId,
    method: request.method,
    path: SECRET_PATH.test(request.path) ? request.routePath : request.path,
    status: request.status,
    duration_ms: Math.round(request.durationMs * 100) / 100,
  };
}
