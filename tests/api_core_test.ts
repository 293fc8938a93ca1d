/**
 * The API's core (routes/api_core.ts): what it answers before the API's app has loaded is exactly
 * what that app answers (status, headers, body, access log), over every path of the OpenAPI
 * document; what it does not answer waits for the app; and its route table is the app's.
 */
import assert from "node:assert/strict";
import { Metrics } from "../lib/platform/metrics.ts";
import { RateLimiter } from "../lib/platform/rate_limit.ts";
import { createApiApp } from "../routes/api_app.ts";
import { createApiCore } from "../routes/api_core.ts";
import { API_ROUTES } from "../routes/api_routes.ts";
import { createLazyApp, type FetchHandler } from "../routes/lazy_app.ts";
import { openApiDocument } from "../routes/openapi/v1.ts";
import { type HttpFixture, withHttpFixture } from "./http_fixture.ts";

const info: Deno.ServeHandlerInfo<Deno.NetAddr> = {
  remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 50000 },
  completed: Promise.resolve(),
};

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"];

/** The core and the API's app over the same deps, each with its own access log. */
function coreAndApp(f: HttpFixture, rateLimiter: RateLimiter | null = null) {
  const coreLogs: Record<string, unknown>[] = [];
  const appLogs: Record<string, unknown>[] = [];
  const core = createApiCore({
    config: f.deps.config,
    metrics: new Metrics(),
    log: (entry) => coreLogs.push(entry),
    rateLimiter,
    clock: f.deps.clock,
  });
  const app = createApiApp({
    ...f.deps,
    metrics: new Metrics(),
    log: (entry) => appLogs.push(entry),
    ...(rateLimiter ? { rateLimiter } : {}),
  });
  return { core, app, coreLogs, appLogs };
}

/** An answer as compared: its status, its headers but the request id, its body. */
async function answerOf(response: Response) {
  assert.match(response.headers.get("X-Request-Id") ?? "", /^[0-9a-f-]{36}$/);
  const headers = [...response.headers].filter(([name]) => name !== "x-request-id");
  return { status: response.status, headers, body: await response.text() };
}

/** An access log line without what differs from one answer to the next. */
const logShape = (entry: Record<string, unknown>) => ({
  ...entry,
  time: typeof entry.time,
  request_id: typeof entry.request_id,
  duration_ms: typeof entry.duration_ms,
});

Deno.test("the route table written down is the API's app's own (this prints the table when not)", async () => {
  await withHttpFixture((f) => {
    const app = createApiApp(f.deps);
    const routes = app.routes
      .filter((route) => route.method !== "ALL" && !route.path.includes("*"))
      .map((route) => `${route.method} ${route.path}`);
    assert.deepEqual(
      API_ROUTES,
      routes,
      `routes/api_routes.ts should list:\n${routes.map((route) => `  "${route}",`).join("\n")}`,
    );
    return Promise.resolve();
  });
});

Deno.test("over every path of the OpenAPI document, the core answers as the API's app: no credential, a wrong method, HEAD, a credential of the wrong shape or host, an unknown path", async () => {
  await withHttpFixture(async (f) => {
    const { core, app, coreLogs, appLogs } = coreAndApp(f);
    const document = openApiDocument(f.deps.config) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const requests: { method: string; path: string; headers?: Record<string, string> }[] = [];
    for (const [template, operations] of Object.entries(document.paths)) {
      const path = template.replace(/\{[^}]+\}/g, "x1");
      const documented = Object.keys(operations).map((method) => method.toUpperCase())
        .filter((method) => METHODS.includes(method));
      assert.ok(documented.length > 0, template);
      for (const method of documented) requests.push({ method, path });
      requests.push({ method: METHODS.find((method) => !documented.includes(method))!, path });
      requests.push({ method: "HEAD", path });
      requests.push({ method: documented[0], path, headers: { Authorization: "Basic eDp5" } });
      requests.push({ method: documented[0], path, headers: { Authorization: "Bearer sk_x" } });
      requests.push({
        method: documented[0],
        path,
        // A live key's shape on the test environment's host.
        headers: { Authorization: `Bearer sk_live_${"a".repeat(43)}`, Host: "test.example" },
      });
    }
    for (const path of ["/v1", "/v1/", "/v1/nothing", "/api", "/api/nothing", "/nothing"]) {
      requests.push({ method: "GET", path }, { method: "DELETE", path });
    }
    const unanswered: string[] = [];
    for (const { method, path, headers } of requests) {
      const request = () => new Request(`http://localhost${path}`, { method, headers });
      const early = core(request(), path);
      if (early === null) {
        unanswered.push(`${method} ${path} ${headers?.Authorization ?? "-"}`);
        continue;
      }
      const loaded = await app.fetch(request(), info);
      assert.deepEqual(
        await answerOf(early),
        await answerOf(loaded),
        `${method} ${path} ${JSON.stringify(headers ?? {})}`,
      );
    }
    // Only the sign-in and an /api bearer token (its signature checked) need the app: every
    // other request here is refused by its shape.
    assert.deepEqual(
      unanswered.filter((request) =>
        !/^POST \/api\/authenticate /.test(request) && !/^\S+ \/api\/\S+ Bearer /.test(request)
      ),
      [],
    );
    assert.ok(unanswered.includes("POST /api/authenticate -"));
    assert.equal(coreLogs.length, requests.length - unanswered.length);
    assert.deepEqual(coreLogs.map(logShape), appLogs.map(logShape));
  }, { RATE_LIMIT_RPS: "0", TEST_HOST: "test.example" });
});

Deno.test("the core leaves to the app what it cannot answer alike: a credential to look up, a token to verify, a body, an encoded path, a path an API route begins with", async () => {
  await withHttpFixture((f) => {
    const { core, coreLogs } = coreAndApp(f);
    const cases: [string, RequestInit][] = [
      ["/v1/ledgers/auto/balance", {
        headers: { Authorization: `Bearer ${f.cast.acmeAutoKeyTest}` },
      }],
      ["/v1/ledgers/x/balance", { headers: { Authorization: `Bearer sk_test_${"b".repeat(43)}` } }],
      ["/api/balance", { headers: { Authorization: "Bearer eyJhbGciOiJIUzI1NiJ9.e30.x" } }],
      ["/api/authenticate", { method: "POST" }],
      ["/v1/disbursements", { method: "POST", body: "{}" }],
      ["/v1/ledgers/%78/balance", {}],
      ["/docs/nothing", {}],
      ["/openapi.json", {}],
      ["/metrics", {}],
    ];
    for (const [path, init] of cases) {
      assert.equal(core(new Request(`http://localhost${path}`, init), path), null, path);
    }
    assert.equal(coreLogs.length, 0, "nothing answered, nothing logged");
    return Promise.resolve();
  }, { RATE_LIMIT_RPS: "0" });
});

Deno.test("the core and the API's app take from one rate limit: past it both answer the same 429", async () => {
  await withHttpFixture(async (f) => {
    const limiter = new RateLimiter({ ratePerSecond: 2 });
    const { core, app } = coreAndApp(f, limiter);
    const path = "/v1/ledgers/x/balance";
    const request = () => new Request(`http://localhost${path}`);
    const statuses = [
      core(request(), path)!.status,
      (await app.fetch(request(), info)).status,
    ];
    assert.deepEqual(statuses, [401, 401], "two tokens: one taken by each");
    const early = await answerOf(core(request(), path)!);
    const loaded = await answerOf(await app.fetch(request(), info));
    assert.equal(early.status, 429);
    assert.deepEqual(early, loaded);
    assert.ok(early.headers.some(([name]) => name === "retry-after"));
  });
});

Deno.test("with a core, the API's app loads after the core's first answer, not before; an authenticated request sent at once waits for it and gets its answer", async () => {
  await withHttpFixture(async (f) => {
    const metrics = new Metrics();
    const api = createApiApp({ ...f.deps, metrics });
    let loadsAsked = 0;
    let finish: (fetch: FetchHandler) => void = () => {};
    const loaded = new Promise<FetchHandler>((resolve) => finish = resolve);
    const lazy = createLazyApp({
      databases: f.deps.databases,
      metrics,
      workerStallMs: f.deps.config.limits.WORKER_STALL_MS,
      loadApi: () => (loadsAsked++, loaded),
      load: () => new Promise(() => {}),
      core: createApiCore({
        config: f.deps.config,
        metrics,
        rateLimiter: null,
        clock: f.deps.clock,
      }),
      apiLoadDelayMs: 60_000,
    });
    const ask = (path: string, init?: RequestInit) =>
      lazy(new Request(`http://localhost${path}`, init), info);
    const first = await ask("/v1/ledgers/x/balance");
    assert.equal(first.status, 401);
    assert.equal((await first.json()).code, "authentication_failed");
    assert.equal(loadsAsked, 0, "nothing loads before the core's first answer has gone");
    await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal(loadsAsked, 1, "the load starts right after it");

    let answered = false;
    const balance = Promise.resolve(
      ask("/v1/ledgers/auto/balance", {
        headers: { Authorization: `Bearer ${f.cast.acmeAutoKeyTest}` },
      }),
    ).then((response) => (answered = true, response));
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(answered, false, "a request the core cannot answer waits for the app");
    finish(api.fetch);
    const response = await balance;
    assert.equal(response.status, 200);
    const body = await response.json();
    assert.deepEqual([body.object, body.line], ["balance", "auto"]);
  }, { RATE_LIMIT_RPS: "0" });
});

Deno.test("with a core and no request, the API's app starts loading once its delay has passed; a readiness probe starts it at once", async () => {
  await withHttpFixture(async (f) => {
    const start = (apiLoadDelayMs: number) => {
      const asked = { count: 0 };
      const lazy = createLazyApp({
        databases: f.deps.databases,
        metrics: new Metrics(),
        workerStallMs: f.deps.config.limits.WORKER_STALL_MS,
        loadApi: () => (asked.count++, new Promise(() => {})),
        load: () => new Promise(() => {}),
        core: createApiCore({
          config: f.deps.config,
          metrics: new Metrics(),
          rateLimiter: null,
          clock: f.deps.clock,
        }),
        apiLoadDelayMs,
      });
      return { lazy, asked };
    };
    const idle = start(10);
    assert.equal(idle.asked.count, 0);
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(idle.asked.count, 1);

    const probed = start(60_000);
    const ready = await probed.lazy(new Request("http://localhost/readyz"), info);
    assert.equal(ready.status, 503);
    await ready.body?.cancel();
    assert.equal(probed.asked.count, 1);
  }, { RATE_LIMIT_RPS: "0" });
});
