/**
 * The app as the service serves it for a fast cold start (routes/lazy_app.ts): health and
 * readiness answer as the whole app does without loading it, the first other request loads the
 * whole app once, and from then on the whole app answers everything.
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

/** The whole app and the lazy one in front of it, sharing metrics and the access log. */
function lazyAndWhole(f: HttpFixture, load?: () => Promise<FetchHandler>) {
  const logs: Record<string, unknown>[] = [];
  const metrics = new Metrics();
  const log = (entry: Record<string, unknown>) => logs.push(entry);
  const whole = createApp({ ...f.deps, metrics, log });
  const served: string[] = [];
  const loads: number[] = [];
  const lazy = createLazyApp({
    databases: f.deps.databases,
    metrics,
    workerStallMs: f.deps.config.limits.WORKER_STALL_MS,
    log,
    load: load ?? (() => {
      loads.push(loads.length + 1);
      return Promise.resolve((request: Request, connection: Deno.ServeHandlerInfo) => {
        served.push(`${request.method} ${new URL(request.url).pathname}`);
        return whole.fetch(request, connection);
      });
    }),
  });
  const ask = (path: string, init?: RequestInit) =>
    lazy(new Request(`http://localhost${path}`, init), info);
  return { whole, ask, logs, metrics, served, loads };
}

const requestCounts = (metrics: Metrics) =>
  metrics.render({}).split("\n").filter((line) => line.startsWith("http_requests_total{"));

Deno.test("before the whole app loads, health and readiness answer as it does, logged and counted alike", async () => {
  await withHttpFixture(async (f) => {
    const { whole, ask, logs, metrics, loads } = lazyAndWhole(f);
    for (const path of ["/healthz", "/readyz"]) {
      for (const method of ["GET", "HEAD"]) {
        const light = await ask(path, { method });
        const full = await whole.request(path, { method }, info);
        assert.deepEqual(
          [light.status, light.headers.get("Content-Type"), await light.text()],
          [full.status, full.headers.get("Content-Type"), await full.text()],
          `${method} ${path}`,
        );
        assert.match(light.headers.get("X-Request-Id")!, /^[0-9a-f-]{36}$/);
      }
    }
    assert.equal(
      await (await ask("/readyz")).text(),
      '{"status":"ready","databases":{"test":"ok","live":"ok"}}',
    );
    assert.deepEqual(loads, [], "nothing of the surfaces loaded");
    const kept = await ask("/healthz", { headers: { "X-Request-Id": "probe-7" } });
    await kept.body?.cancel();
    assert.equal(kept.headers.get("X-Request-Id"), "probe-7", "a caller's request id is kept");

    // Every answer has one access log line of the same shape, the light ones as the whole app's.
    assert.equal(logs.length, 10);
    const shape = (entry: Record<string, unknown>) => ({
      ...entry,
      time: typeof entry.time,
      request_id: typeof entry.request_id,
      duration_ms: typeof entry.duration_ms,
    });
    assert.deepEqual(shape(logs[0]), shape(logs[1]), "GET /healthz: light, then whole");
    assert.deepEqual(shape(logs[4]), {
      time: "string",
      level: "info",
      msg: "request",
      request_id: "string",
      method: "GET",
      path: "/readyz",
      status: 200,
      duration_ms: "number",
    });
    assert.deepEqual(shape(logs[4]), shape(logs[5]));
    assert.equal(logs[9].request_id, "probe-7");
    assert.deepEqual(requestCounts(metrics), [
      'http_requests_total{surface="other",status="200"} 10',
    ]);
  });
});

Deno.test("the first other request loads the whole app once; then it answers everything, health too", async () => {
  await withHttpFixture(async (f) => {
    const { whole, ask, served, loads } = lazyAndWhole(f);
    const balance = "/v1/ledgers/auto/balance";
    const headers = { Authorization: `Bearer ${f.cast.acmeAutoKeyTest}` };
    const answers = await Promise.all([ask(balance, { headers }), ask(balance, { headers })]);
    assert.deepEqual(loads, [1], "two requests at once, one load");
    const expected = await (await whole.request(balance, { headers }, info)).json();
    for (const answer of answers) {
      assert.equal(answer.status, 200);
      assert.deepEqual(await answer.json(), expected);
    }
    const ready = await ask("/readyz");
    assert.equal(ready.status, 200);
    await ready.body?.cancel();
    const wrongMethod = await ask("/readyz", { method: "POST" });
    assert.deepEqual([wrongMethod.status, wrongMethod.headers.get("Allow")], [405, "GET, HEAD"]);
    await wrongMethod.body?.cancel();
    assert.deepEqual(served, [`GET ${balance}`, `GET ${balance}`, "GET /readyz", "POST /readyz"]);
    assert.deepEqual(loads, [1]);
  });
});

Deno.test("a method health does not answer loads the whole app, which answers 405 with Allow", async () => {
  await withHttpFixture(async (f) => {
    const { ask, served, loads } = lazyAndWhole(f);
    const posted = await ask("/healthz", { method: "POST" });
    assert.deepEqual([posted.status, posted.headers.get("Allow")], [405, "GET, HEAD"]);
    await posted.body?.cancel();
    assert.deepEqual([loads, served], [[1], ["POST /healthz"]]);
  });
});

Deno.test("a load that fails answers 500 in the surface's format, logged, and the next request loads again", async () => {
  await withHttpFixture(async (f) => {
    let attempts = 0;
    const whole = createApp(f.deps);
    const { ask } = lazyAndWhole(f, () => {
      attempts++;
      return attempts === 1
        ? Promise.reject(new Error("a module failed to load"))
        : Promise.resolve(whole.fetch);
    });
    const errors: string[] = [];
    const originalError = console.error;
    console.error = (line: string) => errors.push(line);
    let failed;
    try {
      failed = await ask("/v1/ledgers/auto/balance");
    } finally {
      console.error = originalError;
    }
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
    assert.equal(errors.length, 1);
    const logged = JSON.parse(errors[0]);
    assert.deepEqual([logged.level, logged.msg], ["error", "the app failed to load"]);
    assert.match(logged.error, /a module failed to load/);
    const again = await ask("/v1/ledgers/auto/balance", {
      headers: { Authorization: `Bearer ${f.cast.acmeAutoKeyTest}` },
    });
    assert.equal(again.status, 200);
    await again.body?.cancel();
    assert.equal(attempts, 2);
  });
});
