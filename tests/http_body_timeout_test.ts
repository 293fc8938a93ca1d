/**
 * The body deadline (routes/body_timeout.ts) of many requests at once: one timer serves them all,
 * and each body still has its own deadline, counted from its own request.
 */
import assert from "node:assert/strict";
import { Hono } from "hono";
import { bodyArrival } from "../routes/body_timeout.ts";
import type { AppEnv } from "../routes/context.ts";

const TIMEOUT_MS = 300;

function app(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use(bodyArrival({ timeoutMs: TIMEOUT_MS, limit: () => async (_c, next) => await next() }));
  app.post("/", async (c) => c.text(`got ${(await c.req.text()).length}`));
  return app;
}

/** A body that sends `first` at once and the rest after `delayMs` (never, when null). */
function slowBody(first: string, rest: string, delayMs: number | null) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(first));
      if (delayMs === null) return;
      timer = setTimeout(() => {
        controller.enqueue(new TextEncoder().encode(rest));
        controller.close();
      }, delayMs);
    },
  });
  return { body, stop: () => clearTimeout(timer) };
}

const post = async (hono: Hono<AppEnv>, body: ReadableStream<Uint8Array>): Promise<Response> =>
  await hono.request("/", { method: "POST", body });

Deno.test("8 bodies read at once, then 8 one after another, set one deadline timer, not one each", async () => {
  const hono = app();
  const original = globalThis.setTimeout;
  let deadlineTimers = 0;
  globalThis.setTimeout = ((handler: () => void, ms?: number) => {
    if (ms !== undefined && ms > 200 && ms <= TIMEOUT_MS) deadlineTimers++;
    return original(handler, ms);
  }) as typeof setTimeout;
  try {
    const bodies = Array.from({ length: 8 }, (_, i) => slowBody("ab", "cd".repeat(i), 20));
    const answers = await Promise.all(bodies.map(({ body }) => post(hono, body)));
    assert.deepEqual(
      await Promise.all(answers.map((r) => r.text())),
      Array.from({ length: 8 }, (_, i) => `got ${2 + 2 * i}`),
    );
    // Each read before the next comes: the timer left for the first serves them all.
    for (let i = 0; i < 8; i++) {
      assert.equal(await (await post(hono, slowBody("ab", "cd", 1).body)).text(), "got 4");
    }
  } finally {
    globalThis.setTimeout = original;
  }
  assert.equal(deadlineTimers, 1);
});

Deno.test("bodies that stop arriving are 408 each at its own deadline; one that arrives meanwhile is read", async () => {
  const hono = app();
  const started = performance.now();
  const first = slowBody("{", "", null);
  const stalledFirst = post(hono, first.body).then((r) => ({ r, at: performance.now() - started }));
  await new Promise((resolve) => setTimeout(resolve, 150));
  const second = slowBody("{", "", null);
  const stalledSecond = post(hono, second.body).then((r) => ({
    r,
    at: performance.now() - started,
  }));
  // Arrives after the first body's deadline, within its own.
  const late = slowBody("[", "]", 250);
  const arriving = post(hono, late.body).then((r) => ({ r, at: performance.now() - started }));
  const [a, b, c] = await Promise.all([stalledFirst, stalledSecond, arriving]);
  first.stop();
  second.stop();
  assert.equal(a.r.status, 408);
  assert.ok(a.at >= TIMEOUT_MS && a.at < TIMEOUT_MS + 140, `first expired at ${a.at} ms`);
  assert.equal(b.r.status, 408);
  assert.ok(b.at >= 150 + TIMEOUT_MS, `second expired at ${b.at} ms, before its own deadline`);
  assert.equal(c.r.status, 200);
  assert.equal(await c.r.text(), "got 2");
  await a.r.body?.cancel();
  await b.r.body?.cancel();
});

Deno.test("a body that stops arriving after others were read expires at its own deadline, not at the timer left for them", async () => {
  const hono = app();
  const started = performance.now();
  const quick = await post(hono, slowBody("ab", "", 0).body);
  assert.equal(await quick.text(), "got 2");
  await new Promise((resolve) => setTimeout(resolve, 150));
  const stalled = slowBody("{", "", null);
  const answer = await post(hono, stalled.body);
  const at = performance.now() - started;
  stalled.stop();
  assert.equal(answer.status, 408);
  assert.ok(at >= 150 + TIMEOUT_MS, `expired at ${at} ms, before its own deadline`);
  await answer.body?.cancel();
});
