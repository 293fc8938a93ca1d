/**
 * The HTTP application's edges (request id, access log, body limits, 405, 404 and 500 in each
 * surface's format) and the API's surfaces: /v1, /api, health and docs. Importing this loads no
 * console, admin command, sandbox page, payee page or rail: the service answers the API with it
 * while those load (routes/app.ts builds the whole app).
 */
import { type Context, Hono, type Next } from "hono";
import { requestId } from "hono/request-id";
import { Metrics } from "../lib/platform/metrics.ts";
import { rateLimiterOf } from "../lib/platform/rate_limit.ts";
import { accessLogEntry } from "./access_log.ts";
import { achFileRoutes } from "./api/ach.ts";
import { checkRoutes } from "./api/checks.ts";
import { authenticateRoutes } from "./api/authenticate.ts";
import { bodySizeLimit } from "./body_limit.ts";
import { bodyArrival } from "./body_timeout.ts";
import { jsonBodiesOnly, utf8Bodies } from "./body_content.ts";
import { apiDisbursementRoutes } from "./api/disbursements.ts";
import { apiDocumentRoutes } from "./api/documents.ts";
import { apiPayeeRoutes } from "./api/payees.ts";
import { apiSimplePaymentRoutes } from "./api/simple_payments.ts";
import { DocumentLinkSigner } from "../lib/documents/links.ts";
import { fundRoutes } from "./api/funds.ts";
import { requireApiUser, requireLineKey } from "./auth.ts";
import type { AppDeps, AppEnv } from "./context.ts";
import { docsRoutes } from "./docs.tsx";
import { errorResponse, rateLimitedError, surfaceOf } from "./errors.ts";
import { opsRoutes } from "./ops.ts";
import { sandboxClockRoutes } from "./sandbox_clock.ts";
import { disbursementRoutes } from "./v1/disbursements.ts";
import { eventRoutes } from "./v1/events.ts";
import { keyRoutes } from "./v1/keys.ts";
import { ledgerRoutes } from "./v1/ledgers.ts";
import { payeeRoutes } from "./v1/payees.ts";
import { apiEventNames, v1EventTypes, webhookRoutes } from "./v1/webhooks.ts";
import { type KnownPaths, knownPaths, methodsAllowedInstead } from "./known_paths.ts";
import { untilDurable } from "../lib/platform/durability.ts";

/**
 * The app of the API's surfaces, and of the surfaces `mountLater` mounts (the whole app mounts
 * the payee's pages, the console, the admin endpoint, the sandbox pages and the rails' webhooks
 * there, with the document links' signer the API's app shares).
 */
export function buildApp(
  deps: AppDeps,
  mountLater?: (app: Hono<AppEnv>, documentLinks: DocumentLinkSigner) => void,
): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const { limits } = deps.config;
  const metrics = deps.metrics ?? new Metrics();

  app.use(requestId());
  app.use(async (c, next) => {
    const started = performance.now();
    metrics.requestStarted();
    try {
      await next();
    } finally {
      metrics.requestFinished();
    }
    const durationMs = performance.now() - started;
    metrics.recordRequest(surfaceOf(c.req.path), c.res.status, durationMs);
    deps.log?.(accessLogEntry({
      requestId: c.get("requestId"),
      method: c.req.method,
      path: c.req.path,
      routePath: c.req.routePath,
      status: c.res.status,
      durationMs,
    }));
  });

  // Nothing an answer says leaves before it is durable: a read may have seen a commit whose WAL
  // sync is still running (db/wal_sync.ts), such as an idempotent replay of a create not yet
  // answered. Without writes in flight this waits for nothing.
  app.use(async (_c, next) => {
    await next();
    await untilDurable();
  });

  const tooLarge = (maxBytes: number) =>
    bodySizeLimit(maxBytes, (c) =>
      errorResponse(c, {
        status: 413,
        code: "payload_too_large",
        message: `the request body exceeds ${maxBytes} bytes`,
        issues: [{ field: "body", location: "body", message: `at most ${maxBytes} bytes` }],
      }));
  const documentLimit = tooLarge(limits.DOCUMENT_BODY_LIMIT_BYTES);
  const jsonLimit = tooLarge(limits.BODY_LIMIT_BYTES);
  app.use(bodyArrival({
    timeoutMs: limits.BODY_TIMEOUT_MS,
    limit: (c) => (c.req.path === "/api/documents" ? documentLimit : jsonLimit),
  }));
  app.use(utf8Bodies());

  const limiter = deps.rateLimiter ?? rateLimiterOf(limits);
  if (limiter) {
    // Keyed by the credential as sent, before it is checked, so guessing is limited too.
    const perCredential = async (c: Context<AppEnv>, next: Next) => {
      const credential = c.req.header("Authorization") ?? "anonymous";
      const decision = limiter.take(credential, deps.clock.now());
      if (!decision.allowed) {
        return errorResponse(
          c,
          rateLimitedError(limits.RATE_LIMIT_RPS, decision.retryAfterSeconds),
        );
      }
      await next();
    };
    app.use("/api/*", perCredential);
    app.use("/v1/*", perCredential);
  }

  // A known path asked with another method is a 405 naming the methods it answers, before any
  // credential is read: the paths and their methods are public in /openapi.json.
  let paths: KnownPaths = new Map();
  app.use(async (c, next) => {
    const allowed = methodsAllowedInstead(paths, c.req.path, c.req.method);
    if (allowed === null) return await next();
    return errorResponse(c, {
      status: 405,
      code: "method_not_allowed",
      message: `${c.req.path} does not answer ${c.req.method}; it answers ${allowed.join(", ")}`,
      headers: { Allow: allowed.join(", ") },
    });
  });

  app.route("/", opsRoutes(deps, metrics));
  app.route("/", docsRoutes(deps));
  // Built on first request: the document's generation is not paid at start.
  let openApi: Promise<string> | undefined;
  app.get("/openapi.json", async (c) => {
    openApi ??= import("./openapi/v1.ts").then((m) =>
      JSON.stringify(m.openApiDocument(deps.config))
    );
    c.header("Content-Type", "application/json");
    return c.body(await openApi);
  });
  const documentLinks = new DocumentLinkSigner(deps.jwtSecret);
  mountLater?.(app, documentLinks);

  app.route("/api/authenticate", authenticateRoutes(deps));
  app.use("/api/*", requireApiUser(deps));
  // After the credential: a caller without one learns nothing but 401.
  app.use("/api/*", jsonBodiesOnly());
  app.route("/api/sandbox/clock", sandboxClockRoutes(deps, (c) => c.get("apiPrincipal")));
  app.route("/api", fundRoutes(deps));
  app.route("/api/disbursements", apiDisbursementRoutes(deps));
  app.route("/api/disbursements", apiPayeeRoutes(deps, documentLinks));
  app.route("/api/documents", apiDocumentRoutes(deps));
  app.route("/api/simple-payments", apiSimplePaymentRoutes(deps));
  app.route("/api/ach", achFileRoutes(deps));
  app.route("/api", checkRoutes(deps));
  app.route(
    "/api/webhooks",
    webhookRoutes(deps, {
      surface: "api",
      eventNames: apiEventNames,
      owner: (c) => ({ ...c.get("apiPrincipal"), lineId: null, lineCode: null }),
    }),
  );

  app.use("/v1/*", requireLineKey(deps));
  app.use("/v1/*", jsonBodiesOnly());
  app.route("/v1/keys", keyRoutes(deps));
  app.route("/v1/ledgers", ledgerRoutes(deps));
  app.route("/v1/disbursements", disbursementRoutes(deps));
  app.route("/v1/payees", payeeRoutes(deps));
  app.route("/v1/events", eventRoutes(deps));
  app.route(
    "/v1/webhooks",
    webhookRoutes(deps, {
      surface: "v1",
      eventNames: v1EventTypes,
      owner: (c) => c.get("linePrincipal"),
    }),
  );
  app.route("/v1/sandbox/clock", sandboxClockRoutes(deps, (c) => c.get("linePrincipal")));

  paths = knownPaths(app.routes);

  app.notFound((c) =>
    errorResponse(c, {
      status: 404,
      code: "not_found",
      message: `no resource at ${c.req.method} ${c.req.path}`,
    })
  );

  app.onError((error, c) => {
    const id = c.get("requestId");
    console.error(JSON.stringify({
      time: new Date().toISOString(),
      level: "error",
      msg: "unhandled error",
      request_id: id,
      surface: surfaceOf(c.req.path),
      error: error instanceof Error ? error.stack ?? error.message : String(error),
    }));
    return errorResponse(c, {
      status: 500,
      code: "internal_error",
      message: `an internal error occurred; quote request id ${id} when reporting it`,
    });
  });

  return app;
}

/** The app of the API's surfaces alone: what the service answers with while the rest loads. */
export function createApiApp(deps: AppDeps): Hono<AppEnv> {
  return buildApp(deps);
}
