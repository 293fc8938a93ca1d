/**
 * Operations (issue 21): the /metrics token, migrations applied only when the journal has a new
 * one, and a service whose stdout and stderr stay one JSON object per line, whatever its clients
 * send (chunked bodies, bodies cut short, clients that leave).
 */
import assert from "node:assert/strict";
import { hasUnappliedMigrations, openDatabase } from "../db/client.ts";
import { openEmbeddedClient } from "../db/embedded_client.ts";
import { ConfigError, loadConfig } from "../lib/platform/config.ts";
import { withHttpFixture } from "./http_fixture.ts";
import { spawnProductionService } from "./helpers.ts";

const METRICS_TOKEN = "m".repeat(40);

Deno.test("/metrics is open without METRICS_TOKEN", async () => {
  await withHttpFixture(async (f) => {
    const res = await f.app.request("/metrics");
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("Content-Type"), "text/plain; version=0.0.4");
    assert.match(await res.text(), /^# HELP http_requests_total /m);
  });
});

Deno.test("with METRICS_TOKEN, /metrics answers only its bearer token: 401 otherwise", async () => {
  await withHttpFixture(async (f) => {
    const scrape = (authorization?: string) =>
      f.app.request("/metrics", {
        headers: authorization === undefined ? {} : { Authorization: authorization },
      });
    const refused = [
      undefined,
      "",
      `Basic ${btoa(`x:${METRICS_TOKEN}`)}`,
      `Bearer ${"m".repeat(39)}`,
      `Bearer ${METRICS_TOKEN}m`,
      `Bearer ${"n".repeat(40)}`,
    ];
    for (const authorization of refused) {
      const res = await scrape(authorization);
      assert.equal(res.status, 401, String(authorization));
      assert.equal(res.headers.get("WWW-Authenticate"), 'Bearer realm="metrics"');
      assert.deepEqual(await res.json(), {
        error: {
          code: "authentication_failed",
          message: "/metrics needs Authorization: Bearer with the METRICS_TOKEN",
        },
      });
    }
    const allowed = await scrape(`Bearer ${METRICS_TOKEN}`);
    assert.equal(allowed.status, 200);
    assert.match(await allowed.text(), /^db_write_units_committed\{environment="test"\} \d+$/m);
    // Health and readiness stay open for load balancers.
    assert.equal((await f.app.request("/healthz")).status, 200);
    assert.equal((await f.app.request("/readyz")).status, 200);
  }, { METRICS_TOKEN });
});

Deno.test("METRICS_TOKEN shorter than 32 characters stops the start, without showing it", () => {
  const env = {
    DATA_DIR: "data",
    JWT_SECRET: "j".repeat(40),
    ENCRYPTION_KEY: btoa("e".repeat(32)),
  };
  assert.equal(loadConfig({ ...env, METRICS_TOKEN: "t".repeat(32) }).metricsToken, "t".repeat(32));
  assert.equal(loadConfig(env).metricsToken, null);
  assert.throws(() => loadConfig({ ...env, METRICS_TOKEN: "short-token" }), (error) => {
    assert.ok(error instanceof ConfigError);
    assert.deepEqual(error.problems, [
      "METRICS_TOKEN=(11 characters): must be at least 32 characters",
    ]);
    return true;
  });
});

Deno.test("the migrator runs only when the journal holds a migration the database has not applied", async () => {
  const dir = await Deno.makeTempDir({ prefix: "disbursement-migrations-" });
  try {
    const url = `file:${dir}/test.db`;
    const fresh = openEmbeddedClient(url, 1000);
    assert.equal(await hasUnappliedMigrations(fresh), true, "no record table yet");
    fresh.close();
    const database = await openDatabase({
      environment: "test",
      url,
      busyTimeoutMs: 1000,
      unitsPerGroupMax: 16,
      readCacheEntries: 0,
    });
    const client = openEmbeddedClient(url, 1000);
    try {
      assert.equal(await hasUnappliedMigrations(client), false, "every migration applied");
      await client.execute(
        "DELETE FROM __drizzle_migrations WHERE created_at = (SELECT max(created_at) FROM __drizzle_migrations)",
      );
      assert.equal(await hasUnappliedMigrations(client), true, "the newest is missing");
    } finally {
      client.close();
      await database.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** A loopback port nobody listens on right now. */
function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** Sends raw bytes on a new connection and reads until the server closes it or `waitMs` passes. */
async function rawExchange(port: number, request: string, options: { closeAfterMs?: number }) {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(new TextEncoder().encode(request));
  if (options.closeAfterMs !== undefined) {
    // The client leaves before sending the whole body, or before the answer.
    await new Promise((resolve) => setTimeout(resolve, options.closeAfterMs));
    conn.close();
    return "";
  }
  const chunks: Uint8Array[] = [];
  const buffer = new Uint8Array(16_384);
  for (;;) {
    const n = await conn.read(buffer);
    if (n === null) break;
    chunks.push(buffer.slice(0, n));
    if (new TextDecoder().decode(chunks.at(-1)).includes("\r\n\r\n")) break;
  }
  conn.close();
  return new TextDecoder().decode(chunks[0] ?? new Uint8Array());
}

Deno.test({
  name:
    "the service's stdout and stderr stay JSON lines: chunked bodies, cut bodies, clients that leave",
  sanitizeResources: false,
  async fn() {
    const dataDir = await Deno.makeTempDir({ prefix: "disbursement-ops-" });
    const port = freePort();
    const child = spawnProductionService(dataDir, port, {
      env: { LOG_FORMAT: "json" },
      stdout: "piped",
    });
    const stdout = new Response(child.stdout).text();
    const stderr = new Response(child.stderr).text();
    try {
      const base = `http://127.0.0.1:${port}`;
      const deadline = Date.now() + 30_000;
      for (;;) {
        try {
          const res = await fetch(`${base}/readyz`);
          await res.body?.cancel();
          if (res.status === 200) break;
        } catch {
          // Not listening yet.
        }
        assert.ok(Date.now() < deadline, "the service did not become ready within 30 s");
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // A chunked body (no Content-Length) is read and counted by the body limit.
      const chunked = await rawExchange(
        port,
        "POST /v1/payees HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
          "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n" +
          '6\r\n{"id":\r\n5\r\n"p-1"\r\n1\r\n}\r\n0\r\n\r\n',
        {},
      );
      assert.match(chunked, /^HTTP\/1\.1 401 /, chunked);
      const sized = await fetch(`${base}/api/authenticate`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      assert.equal(sized.status, 401);
      await sized.body?.cancel();
      // A client that sends part of its body, and one that leaves before the answer.
      await rawExchange(
        port,
        "POST /v1/payees HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
          'Content-Length: 100\r\n\r\n{"id":',
        { closeAfterMs: 100 },
      );
      await rawExchange(
        port,
        'POST /v1/payees HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n{"i\r\n',
        { closeAfterMs: 100 },
      );
      await rawExchange(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", { closeAfterMs: 0 });
      const metrics = await fetch(`${base}/metrics`);
      assert.equal(metrics.status, 200);
      await metrics.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, 300));
    } finally {
      child.kill("SIGTERM");
      await child.status;
      await Deno.remove(dataDir, { recursive: true });
    }
    const lines = (text: string) => text.split("\n").filter((line) => line !== "");
    const out = lines(await stdout);
    const err = lines(await stderr);
    for (const line of [...out, ...err]) {
      assert.doesNotThrow(() => JSON.parse(line), `not a JSON line: ${line}`);
    }
    const logged = out.map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.deepEqual(logged[0], { level: "info", msg: "listening", host: "127.0.0.1", port });
    assert.deepEqual(
      logged.filter((entry) => entry.msg === "request" && entry.method === "POST").map((entry) => [
        entry.path,
        entry.status,
      ]).slice(0, 2),
      [["/v1/payees", 401], ["/api/authenticate", 401]],
    );
    // A request whose client left is logged when its answer is dropped, which on a loaded machine
    // can come after the shutdown line: only such request lines may follow it.
    const shutdown = logged.findIndex((entry) => entry.msg === "shutting down");
    assert.deepEqual(logged[shutdown], { level: "info", msg: "shutting down", signal: "SIGTERM" });
    assert.deepEqual(
      logged.slice(shutdown + 1).filter((entry) => entry.msg !== "request"),
      [],
    );
  },
});

Deno.test("a chunked body within the limit reaches the route whole", async () => {
  await withHttpFixture(async (f) => {
    const parts = ['{"sec', 'onds": ', "3600}"];
    const res = await f.app.request("/v1/sandbox/clock/advance", {
      method: "POST",
      headers: {
        Authorization: `Bearer ${f.cast.acmeAutoKeyTest}`,
        "Content-Type": "application/json",
        "Transfer-Encoding": "chunked",
      },
      body: new ReadableStream({
        start(controller) {
          for (const part of parts) controller.enqueue(new TextEncoder().encode(part));
          controller.close();
        },
      }),
    });
    assert.equal(res.status, 200);
    assert.equal((await res.json() as { advanced_seconds: number }).advanced_seconds, 3600);
  });
});
