import assert from "node:assert/strict";
import { WebhookDispatcher } from "../lib/webhooks/dispatcher.ts";
import { basic, fundAcmeAuto, type HttpFixture, withHttpFixture } from "./http_fixture.ts";

const advance = (f: HttpFixture, key: string, body: string) =>
  f.app.request("/v1/sandbox/clock/advance", {
    method: "POST",
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
    body,
  });

Deno.test("POST /v1/sandbox/clock/advance runs what falls due: ACH funding clears when its debit's return window closes", async () => {
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
      // The debit's cutoff found, its file built and transmitted, its window's close (nothing
      // left to void), the sandbox bank's returns, and its statements of the two days that closed.
      jobs_run: 7,
    });
    const third = await advance(f, f.cast.acmeAutoKeyTest, '{"seconds": 86400}');
    // The funding clears, and the sandbox bank states the day that closed.
    assert.equal((await third.json() as { jobs_run: number }).jobs_run, 2);
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

Deno.test("a test-environment delivery is dated in real time, its event in sandbox time: completed >= created after advances", async () => {
  const received: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    received.push(await req.text());
    return new Response("ok");
  });
  try {
    await withHttpFixture(async (f) => {
      const v1 = (method: string, path: string, body?: unknown) =>
        f.app.request(path, {
          method,
          headers: {
            Authorization: `Bearer ${f.cast.acmeAutoKeyTest}`,
            "Content-Type": "application/json",
          },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      await fundAcmeAuto(f, 100_000);
      const endpoint = await (await v1("POST", "/v1/webhooks", {
        url: `http://127.0.0.1:${server.addr.port}/hook`,
        events: ["disbursement.created", "disbursement.modality_offered"],
      })).json() as { id: string };
      assert.equal(
        (await v1("POST", "/v1/payees", { id: "noaction", email: "p@x.test" })).status,
        201,
      );
      const day = 86_400_000;
      assert.equal((await advance(f, f.cast.acmeAutoKeyTest, '{"seconds": 172800}')).status, 200);

      f.clock.advance(10_000);
      const createdAt = f.clock.now();
      assert.equal(
        (await v1("POST", "/v1/disbursements", {
          amount: 12.5,
          claim_id: "CLM-1",
          payee: { id: "noaction" },
          modalities: ["ach"],
        })).status,
        201,
      );
      // The offer job runs in this advance at its due time, two sandbox days ahead of real time.
      f.clock.advance(10_000);
      const advancedAt = f.clock.now();
      assert.equal((await advance(f, f.cast.acmeAutoKeyTest, '{"seconds": 86400}')).status, 200);

      f.clock.advance(10_000);
      const deliveredAt = f.clock.now();
      const dispatcher = new WebhookDispatcher(f.deps.databases, f.deps.secretBox, f.clock, {
        batchSize: 50,
        endpointsInParallel: 2,
        perEndpointConcurrency: 1,
        timeoutMs: 2_000,
        leaseMs: 30_000,
      });
      assert.equal(await dispatcher.sweep(), 2);
      assert.equal(received.length, 2);

      const events = await (await v1("GET", "/v1/events?limit=10")).json() as {
        data: { type: string; created: string }[];
      };
      assert.deepEqual(events.data.map((e) => [e.type, e.created]), [
        ["disbursement.modality_offered", new Date(createdAt + 2 * day).toISOString()],
        ["disbursement.created", new Date(createdAt + 2 * day).toISOString()],
      ], "events follow the sandbox clock");
      const deliveries = await (await v1("GET", `/v1/webhooks/${endpoint.id}/deliveries`))
        .json() as { data: { status: string; created: string; completed: string }[] };
      assert.deepEqual(
        deliveries.data.map((d) => [d.status, d.created, d.completed]),
        [
          ["succeeded", new Date(advancedAt).toISOString(), new Date(deliveredAt).toISOString()],
          ["succeeded", new Date(createdAt).toISOString(), new Date(deliveredAt).toISOString()],
        ],
        "deliveries follow real time: queued when the request or the advance ran",
      );
      for (const d of deliveries.data) assert.ok(d.completed >= d.created, JSON.stringify(d));
      const { rows } = await f.deps.databases.test.readClient.execute(
        "SELECT attempted_at FROM delivery_attempts",
      );
      assert.deepEqual(rows.map((row) => Number(row.attempted_at)), [deliveredAt, deliveredAt]);
    });
  } finally {
    await server.shutdown();
  }
});
