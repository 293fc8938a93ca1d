/**
 * The listener facing clients: headers that never finish are closed after HEADER_TIMEOUT_MS while
 * the service keeps answering; connection limits per client address and in all refuse, log and
 * count; requests reach the app as Deno.serve hands them (URL, headers, body, client address).
 */
import assert from "node:assert/strict";
import { Metrics } from "../lib/platform/metrics.ts";
import { serveGuarded, type ServiceServer } from "../routes/guarded_server.ts";
import { createApp } from "../routes/app.ts";
import { withHttpFixture } from "./http_fixture.ts";

const encoder = new TextEncoder();

async function withServer(
  handler: (
    request: Request,
    info: Deno.ServeHandlerInfo<Deno.NetAddr>,
  ) => Response | Promise<Response>,
  options: { headerTimeoutMs?: number; perAddress?: number; total?: number },
  fn: (port: number, metrics: Metrics, logs: Record<string, unknown>[]) => Promise<void>,
): Promise<void> {
  const metrics = new Metrics();
  const logs: Record<string, unknown>[] = [];
  const server: ServiceServer = serveGuarded({
    hostname: "127.0.0.1",
    port: 0,
    headerTimeoutMs: options.headerTimeoutMs ?? 10_000,
    connectionsPerAddressMax: options.perAddress ?? 0,
    connectionsMax: options.total ?? 0,
    metrics,
    log: (entry) => logs.push(entry),
  }, handler);
  const { port } = await server.addr;
  try {
    await fn(port, metrics, logs);
  } finally {
    await server.shutdown();
  }
}

/** Everything the server sends until it closes the connection; null if still open at `ms`. */
async function readUntilClosed(conn: Deno.Conn, ms: number): Promise<string | null> {
  const chunks: Uint8Array[] = [];
  const buffer = new Uint8Array(4096);
  const deadline = AbortSignal.timeout(ms);
  const expired = new Promise<"expired">((resolve) =>
    deadline.addEventListener("abort", () => resolve("expired"), { once: true })
  );
  for (;;) {
    const read = await Promise.race([conn.read(buffer).catch(() => null), expired]);
    if (read === "expired") return null;
    if (read === null) break;
    chunks.push(buffer.slice(0, read));
  }
  return new TextDecoder().decode(
    chunks.reduce((all, c) => new Uint8Array([...all, ...c]), new Uint8Array()),
  );
}

Deno.test("1,000 connections with unfinished headers are closed within the header timeout, and /healthz answers meanwhile", async () => {
  await withHttpFixture(async (f) => {
    const app = createApp({ ...f.deps });
    const timeoutMs = 1000;
    await withServer(app.fetch, { headerTimeoutMs: timeoutMs }, async (port, metrics) => {
      const opened = performance.now();
      const slow: Deno.Conn[] = [];
      for (let i = 0; i < 1000; i++) {
        const conn = await Deno.connect({ hostname: "127.0.0.1", port });
        await conn.write(encoder.encode("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: "));
        slow.push(conn);
      }
      const health = await fetch(`http://127.0.0.1:${port}/healthz`);
      assert.deepEqual([health.status, await health.json()], [200, { status: "ok" }]);
      // Closed at the timeout, give or take the check interval (a tenth of it) and the load.
      const answers = await Promise.all(slow.map((conn) => readUntilClosed(conn, 3 * timeoutMs)));
      const closedAfterMs = performance.now() - opened;
      for (const conn of slow) conn.close();
      assert.equal(answers.filter((a) => a === null).length, 0, "every connection was closed");
      assert.ok(answers.every((a) => a!.startsWith("HTTP/1.1 408 ")), answers[0]!);
      assert.ok(closedAfterMs >= timeoutMs, `${closedAfterMs} ms`);
      assert.ok(closedAfterMs < 3 * timeoutMs, `${closedAfterMs} ms`);
      assert.match(
        metrics.render({}),
        /^http_header_timeouts_total 1000$/m,
      );
      // A request that completes its headers in time is answered as before.
      const after = await fetch(`http://127.0.0.1:${port}/readyz`);
      assert.equal(after.status, 200);
      await after.body?.cancel();
    });
  });
});

Deno.test("past CONNECTIONS_PER_ADDRESS_MAX a client address's new connection is closed at once, logged once and counted", async () => {
  await withServer(() => new Response("ok"), { perAddress: 3 }, async (port, metrics, logs) => {
    const held = await Promise.all(
      [0, 1, 2].map(() => Deno.connect({ hostname: "127.0.0.1", port })),
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    for (let i = 0; i < 2; i++) {
      const extra = await Deno.connect({ hostname: "127.0.0.1", port });
      assert.equal(await readUntilClosed(extra, 1000), "", "closed without a byte");
      extra.close();
    }
    assert.match(metrics.render({}), /^http_connections_refused_total\{limit="per_address"\} 2$/m);
    assert.deepEqual(logs, [{
      level: "warn",
      msg: "connection limit of a client address reached: its new connections are closed",
      limit: "CONNECTIONS_PER_ADDRESS_MAX",
      address: "127.0.0.1",
      connections_per_address_max: 3,
    }]);
    // One of the three leaves: the address may open one again.
    held.pop()!.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const again = await fetch(`http://127.0.0.1:${port}/`, { headers: { Connection: "close" } });
    assert.equal(await again.text(), "ok");
    for (const conn of held) conn.close();
  });
});

Deno.test("past CONNECTIONS_MAX any new connection is closed at once, logged and counted", async () => {
  await withServer(() => new Response("ok"), { total: 2 }, async (port, metrics, logs) => {
    const held = await Promise.all([0, 1].map(() => Deno.connect({ hostname: "127.0.0.1", port })));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const extra = await Deno.connect({ hostname: "127.0.0.1", port });
    assert.equal(await readUntilClosed(extra, 1000), "");
    extra.close();
    assert.match(metrics.render({}), /^http_connections_refused_total\{limit="total"\} 1$/m);
    assert.deepEqual(logs.map((l) => l.limit), ["CONNECTIONS_MAX"]);
    for (const conn of held) conn.close();
  });
});

Deno.test("a request reaches the app as Deno.serve hands it: URL, repeated headers, body, client address; cookies and statuses come back", async () => {
  await withServer(
    async (request, info) => {
      const body = request.body === null ? null : await request.text();
      const headers = new Headers({ "Content-Type": "application/json" });
      headers.append("Set-Cookie", "a=1; Path=/");
      headers.append("Set-Cookie", "b=2; Path=/");
      return new Response(
        JSON.stringify({
          url: request.url,
          method: request.method,
          accept: request.headers.get("accept"),
          body,
          client: info.remoteAddr.hostname,
        }),
        { status: 201, headers },
      );
    },
    {},
    async (port) => {
      const posted = await fetch(`http://127.0.0.1:${port}/v1/x?y=1`, {
        method: "POST",
        headers: { Accept: "application/json" },
        body: "héllo",
      });
      assert.equal(posted.status, 201);
      assert.deepEqual(posted.headers.getSetCookie(), ["a=1; Path=/", "b=2; Path=/"]);
      assert.deepEqual(await posted.json(), {
        url: `http://127.0.0.1:${port}/v1/x?y=1`,
        method: "POST",
        accept: "application/json",
        body: "héllo",
        client: "127.0.0.1",
      });
      const got = await fetch(`http://127.0.0.1:${port}/`);
      assert.equal((await got.json()).body, null, "a GET has no body");
    },
  );
});

Deno.test("a JSON answer goes out whole with its Content-Length; any other body streams as it comes", async () => {
  const json = JSON.stringify({ object: "disbursement", id: "dsb_1" });
  await withServer(
    (request) => {
      if (new URL(request.url).pathname === "/json") {
        return new Response(json, { headers: { "Content-Type": "application/json" } });
      }
      const encoder = new TextEncoder();
      return new Response(
        new ReadableStream({
          start(controller) {
            controller.enqueue(encoder.encode("a,b\n"));
            controller.enqueue(encoder.encode("1,2\n"));
            controller.close();
          },
        }),
        { headers: { "Content-Type": "text/csv" } },
      );
    },
    {},
    async (port) => {
      const ask = async (path: string) => {
        const conn = await Deno.connect({ hostname: "127.0.0.1", port });
        await conn.write(
          encoder.encode(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`),
        );
        const text = await readUntilClosed(conn, 5_000);
        conn.close();
        return text ?? "";
      };
      const whole = await ask("/json");
      assert.match(whole, new RegExp(`\r\ncontent-length: ${json.length}\r\n`, "i"));
      assert.doesNotMatch(whole, /transfer-encoding/i);
      assert.ok(whole.endsWith(`\r\n\r\n${json}`), whole);
      const streamed = await ask("/csv");
      assert.match(streamed, /\r\ntransfer-encoding: chunked\r\n/i);
      assert.match(streamed, /a,b\n/);
      assert.match(streamed, /1,2\n/);
    },
  );
});
