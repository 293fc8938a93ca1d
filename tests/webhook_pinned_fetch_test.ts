/** The live transport connects to the addresses the SSRF check approved, never resolving again. */
import assert from "node:assert/strict";
import { pinnedFetch } from "../lib/webhooks/pinned_fetch.ts";

async function withServer(
  handler: (request: Request) => Response | Promise<Response>,
  fn: (port: number) => Promise<void>,
) {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, handler);
  try {
    await fn(server.addr.port);
  } finally {
    await server.shutdown();
  }
}

const post = (body: string, timeoutMs = 2_000) => ({
  method: "POST",
  headers: { "Content-Type": "application/json", "X-Event-Id": "evt_1" },
  body,
  signal: AbortSignal.timeout(timeoutMs),
});

Deno.test("pinnedFetch reaches the pinned address under the URL's host name (which has no DNS record)", async () => {
  const seen: { host: string | null; body: string; event: string | null }[] = [];
  await withServer(async (request) => {
    seen.push({
      host: request.headers.get("host"),
      body: await request.text(),
      event: request.headers.get("x-event-id"),
    });
    return new Response("queued", { status: 202, headers: { "Retry-After": "7" } });
  }, async (port) => {
    const response = await pinnedFetch(["127.0.0.1"])(
      `http://hooks.unresolvable.example.test:${port}/in`,
      post('{"a":1}'),
    );
    assert.equal(response.status, 202);
    assert.equal(response.headers.get("retry-after"), "7");
    assert.equal(await response.text(), "queued");
  });
  assert.deepEqual(seen, [{
    host: `hooks.unresolvable.example.test:${seen[0].host!.split(":")[1]}`,
    body: '{"a":1}',
    event: "evt_1",
  }]);
});

Deno.test("pinnedFetch: a 204 has no body, a redirect is not followed, a slow answer times out", async () => {
  await withServer((request) => {
    const path = new URL(request.url).pathname;
    if (path === "/empty") return new Response(null, { status: 204 });
    if (path === "/moved") {
      return new Response(null, { status: 301, headers: { Location: "http://169.254.169.254/" } });
    }
    return new Promise((resolve) => setTimeout(() => resolve(new Response("late")), 1_000));
  }, async (port) => {
    const send = pinnedFetch(["127.0.0.1"]);
    const empty = await send(`http://a.example.test:${port}/empty`, post("{}"));
    assert.deepEqual([empty.status, empty.body], [204, null]);
    const moved = await send(`http://a.example.test:${port}/moved`, post("{}"));
    assert.equal(moved.status, 301);
    assert.equal(moved.headers.get("location"), "http://169.254.169.254/");
    await moved.body?.cancel();
    await assert.rejects(send(`http://a.example.test:${port}/slow`, post("{}", 100)));
  });
});
