import assert from "node:assert/strict";
import { RateLimiter } from "../lib/platform/rate_limit.ts";
import { openHttpFixture } from "./http_fixture.ts";

Deno.test("token bucket: the limit passes, one past it waits, tokens refill with time", () => {
  const limiter = new RateLimiter({ ratePerSecond: 100 });
  const now = 1_000_000;
  for (let i = 0; i < 100; i++) {
    assert.equal(limiter.take("k", now).allowed, true, `request ${i + 1}`);
  }
  assert.deepEqual(limiter.take("k", now), { allowed: false, retryAfterSeconds: 1 });
  assert.equal(limiter.take("other", now).allowed, true, "buckets are per credential");
  assert.equal(limiter.take("k", now + 10).allowed, true, "10 ms refill one token at 100/s");
  assert.equal(limiter.take("k", now + 10).allowed, false);
});

Deno.test("token bucket: memory is bounded by forgetting the least recently used credential", () => {
  const limiter = new RateLimiter({ ratePerSecond: 1, credentialsMax: 3 });
  for (const key of ["a", "b", "c", "d"]) limiter.take(key, 0);
  assert.equal(limiter.size, 3);
  assert.equal(limiter.take("a", 0).allowed, true, "a was forgotten, so it starts full");
  assert.equal(limiter.take("d", 0).allowed, false, "d is remembered and empty");
});

Deno.test("HTTP: the 101st request in a second is 429 with Retry-After in the surface's format", async () => {
  const f = await openHttpFixture({ RATE_LIMIT_RPS: "100" });
  try {
    const headers = { Authorization: `Bearer ${f.cast.acmeAutoKeyTest}` };
    for (let i = 0; i < 100; i++) {
      const res = await f.app.request("/v1/nothing", { headers });
      assert.equal(res.status, 404);
      await res.body?.cancel();
    }
    const limited = await f.app.request("/v1/nothing", { headers });
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get("retry-after"), "1");
    assert.equal((await limited.json() as { code: string }).code, "rate_limited");
    const otherKey = await f.app.request("/v1/nothing", {
      headers: { Authorization: `Bearer ${f.cast.beaconKeyTest}` },
    });
    assert.equal(otherKey.status, 404, "another credential is not affected");
    await otherKey.body?.cancel();
    f.clock.advance(1000);
    const later = await f.app.request("/v1/nothing", { headers });
    assert.equal(later.status, 404, "a second later the bucket has refilled");
    await later.body?.cancel();
  } finally {
    await f.close();
  }
});

Deno.test("HTTP: RATE_LIMIT_RPS=0 turns the limit off", async () => {
  const f = await openHttpFixture({ RATE_LIMIT_RPS: "0" });
  try {
    for (let i = 0; i < 150; i++) {
      const res = await f.app.request("/v1/nothing", {
        headers: { Authorization: `Bearer ${f.cast.acmeAutoKeyTest}` },
      });
      assert.equal(res.status, 404);
      await res.body?.cancel();
    }
  } finally {
    await f.close();
  }
});
