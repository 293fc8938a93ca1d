/**
 * The app as the service serves it while it starts (routes/lazy_app.ts): the whole app loads at
 * once, in the background; meanwhile /healthz answers as the whole app does and /readyz says 503
 * `starting`; requests that come meanwhile wait for the one load; from then on the whole app
 * answers everything, readiness included.
 */
import assert from "node:assert/strict";
import { Metrics } from "../lib/platform/metrics.ts";
import { createApp } from "../routes/app.ts";
import { createLazyApp, type FetchHandler } from "../routes/lazy_app.ts";
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

/** The whole app and the starting one in front of it, sharing metrics and the access log. */
function lazyAndWhole(f: HttpFixture, load?: (whole: FetchHandler) => () => Promise<FetchHandler>) {
  const logs: Record<string, unknown>[] = [];
  const metrics = new Metrics();
  const log = (entry: Record<string, unknown>) => logs.push(entry);
  const whole = createApp({ ...f.deps, metrics, log });
  const served: string[] = [];
  const counted: FetchHandler = (request, connection) => {
    served.push(`${request.method} ${new URL(request.url).pathname}`);
    return whole.fetch(request, connection);
  };
  const held = heldLoads(counted);
  const lazy = createLazyApp({
    databases: f.deps.databases,
    metrics,
    workerStallMs: f.deps.config.limits.WORKER_STALL_MS,
    log,
    load: load ? load(counted) : held.load,
  });
  const ask = (path: string, init?: RequestInit) =>
    lazy(new Request(`http://localhost${path}`, init), info);
  return { whole, ask, logs, metrics, served, held };
}

const requestCounts = (metrics: Metrics) =>
  metrics.render({}).split("\n").filter((line) => line.startsWith("http_requests_total{"));

const starting = {
  status: "not_ready",
  reason: "starting",
  reasons: ["starting"],
  databases: { test: "ok", live: "ok" },
};

Deno.test("while the whole app loads, /healthz answers as it does and /readyz 503 starting, logged and counted alike", async () => {
  await withHttpFixture(async (f) => {
    const { whole, ask, logs, metrics, served, held } = lazyAndWhole(f);
    assert.equal(held.calls, 1, "the load starts with the app, before any request");
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
    assert.deepEqual(served, [], "nothing answered by the whole app yet");
    assert.equal(held.calls, 1, "one load however often readiness is asked");
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

    held.finish();
    await new Promise((resolve) => setTimeout(resolve, 0));
    const ready = await ask("/readyz");
    assert.deepEqual([ready.status, await ready.json()], [200, {
      status: "ready",
      databases: { test: "ok", live: "ok" },
    }]);
    assert.deepEqual(served, ["GET /readyz"], "once loaded, the whole app answers readiness");
  });
});

Deno.test("a request that comes while the app loads waits for the one load; then the whole app answers everything", async () => {
  await withHttpFixture(async (f) => {
    const { whole, ask, served, held } = lazyAndWhole(f);
    const balance = "/v1/ledgers/auto/balance";
    const headers = { Authorization: `Bearer ${f.cast.acmeAutoKeyTest}` };
    const asked = Promise.all([ask(balance, { headers }), ask(balance, { headers })]);
    assert.equal(held.calls, 1, "two requests at once, one load");
    held.finish();
    const answers = await asked;
    const expected = await (await whole.request(balance, { headers }, info)).json();
    for (const answer of answers) {
      assert.equal(answer.status, 200);
      assert.deepEqual(await answer.json(), expected);
    }
    const wrongMethod = await ask("/readyz", { method: "POST" });
    assert.deepEqual([wrongMethod.status, wrongMethod.headers.get("Allow")], [405, "GET, HEAD"]);
    await wrongMethod.body?.cancel();
    const posted = await ask("/healthz", { method: "POST" });
    assert.deepEqual([posted.status, posted.headers.get("Allow")], [405, "GET, HEAD"]);
    await posted.body?.cancel();
    assert.deepEqual(served, [
      `GET ${balance}`,
      `GET ${balance}`,
      "POST /readyz",
      "POST /healthz",
    ]);
  });
});

Deno.test("a load that fails is logged; a request then answers 500 in the surface's format, and readiness or the next request loads again", async () => {
  await withHttpFixture(async (f) => {
    let attempts = 0;
    const errors: string[] = [];
    const originalError = console.error;
    console.error = (line: string) => errors.push(line);
    let failed;
    let notReady;
    let lazy;
    try {
      lazy = lazyAndWhole(f, (whole) => () => {
        attempts++;
        return attempts <= 2
          ? Promise.reject(new Error("a module failed to load"))
          : Promise.resolve(whole);
      });
      // The load at start fails; readiness says starting and loads again, which fails too.
      notReady = await lazy.ask("/readyz");
      failed = await lazy.ask("/v1/ledgers/auto/balance");
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
    assert.equal(errors.length, 2, "each failed load logged once");
    const logged = JSON.parse(errors[0]);
    assert.deepEqual([logged.level, logged.msg], ["error", "the app failed to load"]);
    assert.match(logged.error, /a module failed to load/);
    const again = await lazy.ask("/v1/ledgers/auto/balance", {
      headers: { Authorization: `Bearer ${f.cast.acmeAutoKeyTest}` },
    });
    assert.equal(again.status, 200);
    await again.body?.cancel();
    assert.equal(attempts, 3);
    const ready = await lazy.ask("/readyz");
    assert.equal(ready.status, 200);
    await ready.body?.cancel();
  });
});
