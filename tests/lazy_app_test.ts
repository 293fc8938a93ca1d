/**
 * The app as the service serves it while it starts (routes/lazy_app.ts): the API's app and the
 * whole app load at once, in the background; until the API's has, /healthz answers as the whole
 * app does and /readyz says 503 `starting`; requests that come meanwhile wait for the one load of
 * the app that answers them (the API's, or the whole app's for the console, the admin endpoint,
 * the sandbox pages and the rails' webhooks); once the whole app has loaded it answers everything,
 * readiness included.
 */
import assert from "node:assert/strict";
import { Metrics } from "../lib/platform/metrics.ts";
import { createApiApp } from "../routes/api_app.ts";
import { createApp } from "../routes/app.ts";
import { createLazyApp, type FetchHandler, LATER_SURFACES } from "../routes/lazy_app.ts";
import { type HttpFixture, withHttpFixture } from "./http_fixture.ts";

const info: Deno.ServeHandlerInfo<Deno.NetAddr> = {
  remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 50000 },
  completed: Promise.resolve(),
};

/** A load the test finishes when it wants: each call waits for the next `finish`. */
function heldLoads(whole: FetchHandler) {
  const waiting: ((fetch: FetchHandler) => void)[] = [];
  return {
    load: () => new Promise<FetchHandler>((resolve) => waiting.push(resolve)),
    finish: () => waiting.splice(0).forEach((resolve) => resolve(whole)),
    get calls() {
      return waiting.length;
    },
  };
}

/**
 * The API's app, the whole app and the starting one in front of them, sharing metrics and the
 * access log. Each app's load is held until the test finishes it, unless `loads` replaces it.
 */
function lazyAndWhole(
  f: HttpFixture,
  loads: {
    api?: (app: FetchHandler) => () => Promise<FetchHandler>;
    whole?: (app: FetchHandler) => () => Promise<FetchHandler>;
  } = {},
) {
  const logs: Record<string, unknown>[] = [];
  const metrics = new Metrics();
  const log = (entry: Record<string, unknown>) => logs.push(entry);
  const whole = createApp({ ...f.deps, metrics, log });
  const api = createApiApp({ ...f.deps, metrics, log });
  const served: string[] = [];
  const counted = (app: { fetch: FetchHandler }, name: string): FetchHandler => (request, info) => {
    served.push(`${name}: ${request.method} ${new URL(request.url).pathname}`);
    return app.fetch(request, info);
  };
  const held = heldLoads(counted(whole, "whole"));
  const heldApi = heldLoads(counted(api, "api"));
  const firstAnswers = { count: 0 };
  const lazy = createLazyApp({
    databases: f.deps.databases,
    metrics,
    workerStallMs: f.deps.config.limits.WORKER_STALL_MS,
    log,
    loadApi: loads.api ? loads.api(counted(api, "api")) : heldApi.load,
    load: loads.whole ? loads.whole(counted(whole, "whole")) : held.load,
    afterFirstApiAnswer: () => firstAnswers.count++,
  });
  const ask = (path: string, init?: RequestInit) =>
    lazy(new Request(`http://localhost${path}`, init), info);
  return { whole, ask, logs, metrics, served, held, heldApi, firstAnswers };
}

/** Lets the loads that have finished be seen by the starting app. */
const settled = () => new Promise((resolve) => setTimeout(resolve, 0));

const requestCounts = (metrics: Metrics) =>
  metrics.render({}).split("\n").filter((line) => line.startsWith("http_requests_total{"));

const starting = {
  status: "not_ready",
  reason: "starting",
  reasons: ["starting"],
  databases: { test: "ok", live: "ok" },
};

Deno.test("while the API's app loads, /healthz answers as the whole app does and /readyz 503 starting, logged and counted alike", async () => {
  await withHttpFixture(async (f) => {
    const { whole, ask, logs, metrics, served, held, heldApi } = lazyAndWhole(f);
    assert.deepEqual(
      [heldApi.calls, held.calls],
      [1, 0],
      "the API's load starts with the app; the rest's when asked (or when the service starts it)",
    );
    for (const method of ["GET", "HEAD"]) {
      const light = await ask("/healthz", { method });
      const full = await whole.request("/healthz", { method }, info);
      assert.deepEqual(
        [light.status, light.headers.get("Content-Type"), await light.text()],
        [full.status, full.headers.get("Content-Type"), await full.text()],
        `${method} /healthz`,
      );
      assert.match(light.headers.get("X-Request-Id")!, /^[0-9a-f-]{36}$/);
    }
    const notReady = await ask("/readyz");
    assert.deepEqual(
      [notReady.status, notReady.headers.get("Content-Type"), await notReady.json()],
      [503, "application/json", starting],
    );
    const head = await ask("/readyz", { method: "HEAD" });
    assert.deepEqual([head.status, await head.text()], [503, ""]);
    assert.deepEqual(served, [], "nothing answered by an app yet");
    assert.deepEqual([heldApi.calls, held.calls], [1, 0], "one load however often asked");
    const kept = await ask("/healthz", { headers: { "X-Request-Id": "probe-7" } });
    await kept.body?.cancel();
    assert.equal(kept.headers.get("X-Request-Id"), "probe-7", "a caller's request id is kept");

    // Every answer has one access log line of the same shape as the whole app's.
    assert.equal(logs.length, 7);
    const shape = (entry: Record<string, unknown>) => ({
      ...entry,
      time: typeof entry.time,
      request_id: typeof entry.request_id,
      duration_ms: typeof entry.duration_ms,
    });
    assert.deepEqual(shape(logs[0]), shape(logs[1]), "GET /healthz: light, then whole");
    assert.deepEqual(shape(logs[4]), {
      time: "string",
      level: "error",
      msg: "request",
      request_id: "string",
      method: "GET",
      path: "/readyz",
      status: 503,
      duration_ms: "number",
    });
    assert.equal(logs[6].request_id, "probe-7");
    assert.deepEqual(requestCounts(metrics), [
      'http_requests_total{surface="other",status="200"} 5',
      'http_requests_total{surface="other",status="503"} 2',
    ]);

    // Ready once the API's app has loaded, whether the whole app has or not.
    heldApi.finish();
    await settled();
    const ready = await ask("/readyz");
    assert.deepEqual([ready.status, await ready.json()], [200, {
      status: "ready",
      databases: { test: "ok", live: "ok" },
    }]);
    const consolePage = ask("/console/sign-in");
    assert.equal(held.calls, 1, "a console request loads the rest");
    held.finish();
    (await consolePage).body?.cancel();
    const stillReady = await ask("/readyz");
    assert.equal(stillReady.status, 200);
    await stillReady.body?.cancel();
    assert.deepEqual(served, [
      "api: GET /readyz",
      "whole: GET /console/sign-in",
      "whole: GET /readyz",
    ]);
  });
});

Deno.test("an API request that comes while the API's app loads waits for its one load; the API answers before the whole app (console, rails' jobs) has loaded", async () => {
  await withHttpFixture(async (f) => {
    const { whole, ask, served, held, heldApi, firstAnswers } = lazyAndWhole(f);
    const balance = "/v1/ledgers/auto/balance";
    const headers = { Authorization: `Bearer ${f.cast.acmeAutoKeyTest}` };
    const asked = Promise.all([ask(balance, { headers }), ask(balance, { headers })]);
    assert.equal(heldApi.calls, 1, "two requests at once, one load");
    heldApi.finish();
    const answers = await asked;
    const expected = await (await whole.request(balance, { headers }, info)).json();
    for (const answer of answers) {
      assert.equal(answer.status, 200);
      assert.deepEqual(await answer.json(), expected);
    }
    const clock = await ask("/v1/sandbox/clock", { headers });
    assert.equal(clock.status, 200, "the sandbox clock is the API's");
    await clock.body?.cancel();
    assert.equal(firstAnswers.count, 1, "told of the first answer once, not of every answer");
    assert.equal(held.calls, 0, "the whole app not asked for yet");
    const rails = ask("/rails/paypal/webhooks", { method: "POST" });
    held.finish();
    await (await rails).body?.cancel();
    const wrongMethod = await ask("/readyz", { method: "POST" });
    assert.deepEqual([wrongMethod.status, wrongMethod.headers.get("Allow")], [405, "GET, HEAD"]);
    await wrongMethod.body?.cancel();
    assert.deepEqual(served, [
      `api: GET ${balance}`,
      `api: GET ${balance}`,
      "api: GET /v1/sandbox/clock",
      "whole: POST /rails/paypal/webhooks",
      "whole: POST /readyz",
    ]);
  });
});

Deno.test("a console, admin, sandbox page, payee page or rail webhook request before the whole app has loaded waits for it, never a 404", async () => {
  await withHttpFixture(async (f) => {
    const { whole, ask, served, held, heldApi } = lazyAndWhole(f);
    heldApi.finish();
    await settled();
    const paths = [
      "/console/sign-in",
      "/sandbox/inbox",
      "/rails/paypal/webhooks",
      "/console",
      "/portal/no-such-token",
      "/pay",
      "/documents/no-such-link",
      "/checks/no-such-check",
    ];
    const asked = Promise.all(paths.map((path) => ask(path, { redirect: "manual" })));
    await settled();
    assert.deepEqual(served, [], "none answered by the API's app");
    held.finish();
    const answers = await asked;
    for (const [i, path] of paths.entries()) {
      const expected = await whole.request(path, { redirect: "manual" }, info);
      // Compared without their bodies: a sign-in form carries a fresh CSRF token.
      const seen = (answer: Response) => [
        answer.status,
        answer.headers.get("Location"),
        answer.headers.get("Content-Type"),
      ];
      assert.deepEqual(seen(answers[i]), seen(expected), path);
      await answers[i].body?.cancel();
      await expected.body?.cancel();
    }
    assert.equal(answers[0].status, 200, "the console's sign-in page, not a 404");
    assert.deepEqual(served, paths.map((path) => `whole: GET ${path}`));
  });
});

Deno.test("LATER_SURFACES holds every path the whole app serves and the API's app does not", async () => {
  await withHttpFixture((f) => {
    const deps = { ...f.deps, adminToken: "admin-token" };
    const apiPaths = new Set(createApiApp(deps).routes.map((route) => route.path));
    const onlyWhole = createApp(deps).routes.map((route) => route.path)
      .filter((path) => !apiPaths.has(path));
    assert.ok(onlyWhole.length > 100, `${onlyWhole.length} paths of the whole app alone`);
    const later = (path: string) =>
      LATER_SURFACES.some((prefix) => path === prefix || path.startsWith(prefix + "/"));
    assert.deepEqual(onlyWhole.filter((path) => !later(path)), []);
    assert.deepEqual([...apiPaths].filter(later), [], "the API's app serves no later surface");
    return Promise.resolve();
  });
});

Deno.test("a load that fails is logged; a request then answers 500 in the surface's format, and readiness or the next request loads again", async () => {
  await withHttpFixture(async (f) => {
    const attempts = { api: 0, whole: 0 };
    const failing = (name: "api" | "whole", failures: number) => (app: FetchHandler) => () => {
      attempts[name]++;
      return attempts[name] <= failures
        ? Promise.reject(new Error(`a module of the ${name} app failed to load`))
        : Promise.resolve(app);
    };
    const errors: string[] = [];
    const originalError = console.error;
    console.error = (line: string) => errors.push(line);
    let failed;
    let notReady;
    let consoleFailed;
    let lazy;
    try {
      lazy = lazyAndWhole(f, { api: failing("api", 2), whole: failing("whole", 1) });
      // The load at start fails; readiness says starting and loads the API's again, which fails
      // too; a console request loads the rest, which fails once.
      notReady = await lazy.ask("/readyz");
      failed = await lazy.ask("/v1/ledgers/auto/balance");
      consoleFailed = await lazy.ask("/console/sign-in");
    } finally {
      console.error = originalError;
    }
    assert.deepEqual([notReady.status, await notReady.json()], [503, starting]);
    assert.deepEqual([failed.status, failed.headers.get("Content-Type"), await failed.json()], [
      500,
      "application/problem+json",
      {
        type: "/docs/errors#internal_error",
        title: "Internal Server Error",
        status: 500,
        detail: "the service failed to load its routes; it tries again at the next request",
        code: "internal_error",
      },
    ]);
    assert.equal(consoleFailed.status, 500);
    await consoleFailed.body?.cancel();
    assert.equal(errors.length, 3, "each failed load logged once");
    const logged = errors.map((line) => JSON.parse(line));
    assert.deepEqual(logged.map((entry) => [entry.level, entry.msg]).sort(), [
      ["error", "the API's app failed to load"],
      ["error", "the API's app failed to load"],
      ["error", "the app failed to load"],
    ]);
    assert.match(logged[0].error, /failed to load/);
    const again = await lazy.ask("/v1/ledgers/auto/balance", {
      headers: { Authorization: `Bearer ${f.cast.acmeAutoKeyTest}` },
    });
    assert.equal(again.status, 200);
    await again.body?.cancel();
    assert.deepEqual(attempts, { api: 3, whole: 1 });
    const ready = await lazy.ask("/readyz");
    assert.equal(ready.status, 200);
    await ready.body?.cancel();
    // The rest's failed load is tried again by the next request that needs it.
    const consolePage = await lazy.ask("/console/sign-in");
    assert.equal(consolePage.status, 200);
    await consolePage.body?.cancel();
    assert.deepEqual(attempts, { api: 3, whole: 2 });
  });
});
