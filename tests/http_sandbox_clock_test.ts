import assert from "node:assert/strict";
import { basic, fundAcmeAuto, type HttpFixture, withHttpFixture } from "./http_fixture.ts";

const advance = (f: HttpFixture, key: string, body: string) =>
  f.app.request("/v1/sandbox/clock/advance", {
    method: "POST",
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
    body,
  });

Deno.test("POST /v1/sandbox/clock/advance runs what falls due: ACH funding clears after 3 business days", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 250_000, "ACH");
    const balance = async () =>
      await (await f.app.request("/v1/ledgers/auto/balance", {
        headers: { Authorization: `Bearer ${f.cast.acmeAutoKeyTest}` },
      })).json() as { available: number; pending: number };
    assert.deepEqual(await balance().then((b) => [b.available, b.pending]), [0, 2_500]);

    const twoDays = await advance(f, f.cast.acmeAutoKeyTest, '{"seconds": 172800}');
    assert.equal(twoDays.status, 200);
    assert.deepEqual(await twoDays.json(), {
      object: "sandbox_clock",
      now: new Date(f.clock.now() + 172_800_000).toISOString(),
      advanced_seconds: 172_800,
      jobs_run: 0,
    });
    const third = await advance(f, f.cast.acmeAutoKeyTest, '{"seconds": 86400}');
    assert.equal((await third.json() as { jobs_run: number }).jobs_run, 1);
    assert.deepEqual(await balance().then((b) => [b.available, b.pending]), [2_500, 0]);
  });
});

Deno.test("clock advance: bad bodies are 400 naming the field; a live key is 403", async () => {
  await withHttpFixture(async (f) => {
    const cases: [string, string][] = [
      ['{"seconds": 0}', "seconds must be at least 1"],
      ['{"seconds": 1.5}', "seconds must be a whole number"],
      ['{"seconds": "60"}', "seconds must be a number"],
      ['{"seconds": 31536001}', "seconds must be at most 31536000"],
    ];
    for (const [body, message] of cases) {
      const res = await advance(f, f.cast.acmeAutoKeyTest, body);
      assert.equal(res.status, 400, body);
      assert.deepEqual((await res.json() as { errors: unknown }).errors, [{
        param: "seconds",
        message,
      }], body);
    }
    const notJson = await advance(f, f.cast.acmeAutoKeyTest, "{seconds:");
    assert.equal(notJson.status, 400);
    assert.equal((await notJson.json() as { errors: { param: string }[] }).errors[0].param, "body");
    const live = await advance(f, f.cast.acmeAutoKeyLive, '{"seconds": 60}');
    assert.equal(live.status, 403);
    assert.equal((await live.json() as { code: string }).code, "live_mode_forbidden");
    assert.equal(
      (await advance(f, f.cast.acmeAutoKeyTest, '{"seconds": 31536000}')).status,
      200,
      "the limit itself is accepted",
    );
  });
});

Deno.test("POST /api/sandbox/clock/advance: test token moves the company's clock; live token is 403", async () => {
  await withHttpFixture(async (f) => {
    const token = async (key: string) => {
      const res = await f.app.request("/api/authenticate", {
        method: "POST",
        headers: { Authorization: basic(f.cast.acme.tin, key) },
      });
      return ((await res.json()) as { access_token: string }).access_token;
    };
    const call = async (key: string) =>
      f.app.request("/api/sandbox/clock/advance", {
        method: "POST",
        headers: {
          Authorization: `Bearer ${await token(key)}`,
          "Content-Type": "application/json",
        },
        body: '{"seconds": 3600}',
      });
    const ok = await call(f.cast.alice.keyTest);
    assert.equal(ok.status, 200);
    assert.equal(
      (await ok.json() as { now: string }).now,
      new Date(f.clock.now() + 3_600_000).toISOString(),
    );
    const live = await call(f.cast.alice.keyLive);
    assert.equal(live.status, 403);
    assert.deepEqual(await live.json(), {
      name: "NOT_AUTHORIZED",
      message: "the sandbox clock exists only in the test environment; use a test credential",
      details: [],
    });
    // Each company has its own clock: Beacon's did not move.
    const beacon = await advance(f, f.cast.beaconKeyTest, '{"seconds": 1}');
    assert.equal(
      (await beacon.json() as { now: string }).now,
      new Date(f.clock.now() + 1000).toISOString(),
    );
  });
});

Deno.test("GET /v1/sandbox/clock reads the company's sandbox time; real time moves it too; a live key is 403", async () => {
  await withHttpFixture(async (f) => {
    const read = (key: string) =>
      f.app.request("/v1/sandbox/clock", { headers: { Authorization: `Bearer ${key}` } });
    const before = await read(f.cast.acmeAutoKeyTest);
    assert.equal(before.status, 200);
    assert.deepEqual(await before.json(), {
      object: "sandbox_clock",
      now: new Date(f.clock.now()).toISOString(),
      ahead_seconds: 0,
    });
    assert.equal((await advance(f, f.cast.acmeAutoKeyTest, '{"seconds": 86400}')).status, 200);
    f.clock.advance(5_000);
    const after = await read(f.cast.acmeAutoKeyTest);
    assert.deepEqual(await after.json(), {
      object: "sandbox_clock",
      now: new Date(f.clock.now() + 86_400_000).toISOString(),
      ahead_seconds: 86_400,
    });
    // Another company's clock did not move.
    const beacon = await read(f.cast.beaconKeyTest);
    assert.equal((await beacon.json() as { ahead_seconds: number }).ahead_seconds, 0);

    const live = await read(f.cast.acmeAutoKeyLive);
    assert.equal(live.status, 403);
    assert.deepEqual(await live.json(), {
      type: "/docs/errors#live_mode_forbidden",
      title: "Forbidden",
      status: 403,
      detail: "the sandbox clock exists only in the test environment; use a test credential",
      code: "live_mode_forbidden",
    });
    // There is no reset: the clock resource only answers GET.
    const reset = await f.app.request("/v1/sandbox/clock", {
      method: "DELETE",
      headers: { Authorization: `Bearer ${f.cast.acmeAutoKeyTest}` },
    });
    assert.equal(reset.status, 405);
    assert.equal(reset.headers.get("Allow"), "GET, HEAD");
  });
});

Deno.test("GET /api/sandbox/clock: a test token reads its company's clock; a live token is 403", async () => {
  await withHttpFixture(async (f) => {
    const token = async (key: string) => {
      const res = await f.app.request("/api/authenticate", {
        method: "POST",
        headers: { Authorization: basic(f.cast.acme.tin, key) },
      });
      return ((await res.json()) as { access_token: string }).access_token;
    };
    const read = async (key: string) =>
      f.app.request("/api/sandbox/clock", {
        headers: { Authorization: `Bearer ${await token(key)}` },
      });
    assert.equal((await advance(f, f.cast.acmeAutoKeyTest, '{"seconds": 3600}')).status, 200);
    const ok = await read(f.cast.alice.keyTest);
    assert.equal(ok.status, 200);
    assert.deepEqual(await ok.json(), {
      object: "sandbox_clock",
      now: new Date(f.clock.now() + 3_600_000).toISOString(),
      ahead_seconds: 3600,
    });
    const live = await read(f.cast.alice.keyLive);
    assert.equal(live.status, 403);
    assert.deepEqual(await live.json(), {
      name: "NOT_AUTHORIZED",
      message: "the sandbox clock exists only in the test environment; use a test credential",
      details: [],
    });
  });
});
