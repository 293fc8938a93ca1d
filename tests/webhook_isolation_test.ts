/**
 * One tenant's dead endpoint delays only itself (issue 16, item 1): a real black-hole listener on
 * 127.0.0.1 (it accepts and never answers) for Acme beside a normal receiver for Beacon, in both
 * environments; the circuit breaker's policy table, its spacing and its five-day disable on a fake
 * clock; the explicit re-enable on both surfaces.
 */
import assert from "node:assert/strict";
import { type DispatcherOptions, WebhookDispatcher } from "../lib/webhooks/dispatcher.ts";
import {
  type AttemptAnswer,
  CIRCUIT_OPENS_AFTER_FAILING_MS,
  CIRCUIT_PROBE_INTERVAL_MS,
  circuitAfterAttempts,
  ENDPOINT_DISABLED_AFTER_FAILING_MS,
} from "../lib/webhooks/circuit.ts";
import { recordEvent } from "../lib/webhooks/event_store.ts";
import { newWebhookSecret } from "../lib/platform/crypto.ts";
import type { Environment } from "../lib/platform/config.ts";
import { basic, type HttpFixture, withHttpFixture } from "./http_fixture.ts";

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

Deno.test("circuit breaker policy: when the circuit opens, when a probe may go, when the endpoint is disabled", () => {
  const t0 = Date.UTC(2026, 0, 5, 15, 0, 0);
  const cases: {
    name: string;
    failingSince: number | null;
    now: number;
    answers: AttemptAnswer[];
    expected: ReturnType<typeof circuitAfterAttempts>;
  }[] = [
    {
      name: "a success keeps it closed",
      failingSince: null,
      now: t0,
      answers: ["succeeded"],
      expected: { failingSince: null, probeNotBefore: null, disabledReason: null },
    },
    {
      name: "the first failure starts the run",
      failingSince: null,
      now: t0,
      answers: ["failed"],
      expected: { failingSince: t0, probeNotBefore: null, disabledReason: null },
    },
    {
      name: "failing one millisecond short of an hour: still closed",
      failingSince: t0,
      now: t0 + HOUR_MS - 1,
      answers: ["failed"],
      expected: { failingSince: t0, probeNotBefore: null, disabledReason: null },
    },
    {
      name: "failing for an hour: open, the next probe five minutes on",
      failingSince: t0,
      now: t0 + HOUR_MS,
      answers: ["failed"],
      expected: {
        failingSince: t0,
        probeNotBefore: t0 + HOUR_MS + 5 * 60_000,
        disabledReason: null,
      },
    },
    {
      name: "a probe that succeeds closes it",
      failingSince: t0,
      now: t0 + 2 * HOUR_MS,
      answers: ["succeeded"],
      expected: { failingSince: null, probeNotBefore: null, disabledReason: null },
    },
    {
      name: "a failure after a success in one unit starts a new run",
      failingSince: t0,
      now: t0 + 2 * HOUR_MS,
      answers: ["succeeded", "failed"],
      expected: { failingSince: t0 + 2 * HOUR_MS, probeNotBefore: null, disabledReason: null },
    },
    {
      name: "a success after a failure in one unit closes it",
      failingSince: t0,
      now: t0 + 2 * HOUR_MS,
      answers: ["failed", "succeeded"],
      expected: { failingSince: null, probeNotBefore: null, disabledReason: null },
    },
    {
      name: "one millisecond short of five days: open, not disabled",
      failingSince: t0,
      now: t0 + 5 * DAY_MS - 1,
      answers: ["failed"],
      expected: {
        failingSince: t0,
        probeNotBefore: t0 + 5 * DAY_MS - 1 + 5 * 60_000,
        disabledReason: null,
      },
    },
    {
      name: "five days of failures: disabled",
      failingSince: t0,
      now: t0 + 5 * DAY_MS,
      answers: ["failed"],
      expected: {
        failingSince: t0,
        probeNotBefore: t0 + 5 * DAY_MS + 5 * 60_000,
        disabledReason: "every attempt failed for 5 days, since 2026-01-05T15:00:00.000Z",
      },
    },
    {
      name: "410 Gone disables at once",
      failingSince: null,
      now: t0,
      answers: ["gone"],
      expected: {
        failingSince: t0,
        probeNotBefore: null,
        disabledReason: "the receiver answered 410 Gone",
      },
    },
  ];
  assert.equal(CIRCUIT_OPENS_AFTER_FAILING_MS, HOUR_MS);
  assert.equal(CIRCUIT_PROBE_INTERVAL_MS, 5 * 60_000);
  assert.equal(ENDPOINT_DISABLED_AFTER_FAILING_MS, 5 * DAY_MS);
  for (const c of cases) {
    assert.deepEqual(
      circuitAfterAttempts({ failingSince: c.failingSince, now: c.now, answers: c.answers }),
      c.expected,
      c.name,
    );
  }
});

/** A TCP listener that accepts connections and never answers: a dead receiver. */
function blackHole() {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const connections: Deno.Conn[] = [];
  let stopped = false;
  const accepting = (async () => {
    try {
      for await (const connection of listener) connections.push(connection);
    } catch {
      // Closed by stop().
    }
  })();
  return {
    port: (listener.addr as Deno.NetAddr).port,
    connections,
    async stop() {
      if (stopped) return;
      stopped = true;
      listener.close();
      await accepting;
      for (const connection of connections) connection.close();
    },
  };
}

/** A receiver answering `status()` and noting when each event first arrived. */
function receiver(status: () => number = () => 200) {
  const firstArrival = new Map<string, number>();
  let requests = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    await req.body?.cancel();
    requests++;
    const id = req.headers.get("x-event-id")!;
    if (!firstArrival.has(id)) firstArrival.set(id, performance.now());
    return new Response("ok", { status: status() });
  });
  return {
    port: server.addr.port,
    url: `http://127.0.0.1:${server.addr.port}/hook`,
    firstArrival,
    get requests() {
      return requests;
    },
    stop: () => server.shutdown(),
  };
}

const v1 = (f: HttpFixture, key: string, method: string, path: string, body?: unknown) =>
  f.app.request(path, {
    method,
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

async function surfaceA(f: HttpFixture, method: string, path: string, body?: unknown) {
  const login = await f.app.request("/api/authenticate", {
    method: "POST",
    headers: { Authorization: basic(f.cast.acme.tin, f.cast.alice.keyTest) },
  });
  const { access_token } = await login.json() as { access_token: string };
  return await f.app.request(path, {
    method,
    headers: { Authorization: `Bearer ${access_token}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** Inserts an endpoint directly (a live receiver on this machine could not be registered). */
async function insertEndpoint(
  f: HttpFixture,
  environment: Environment,
  owner: { companyId: string; lineId: string | null },
  url: string,
): Promise<string> {
  const id = `we_${crypto.randomUUID().replaceAll("-", "")}`;
  const sealed = await f.deps.secretBox.sealText(newWebhookSecret());
  await f.deps.databases[environment].writer.write((tx) =>
    tx.execute({
      sql:
        `INSERT INTO webhook_endpoints (id, company_id, line_id, surface, url, events, secret_ciphertext, created_at)
            VALUES (?, ?, ?, ?, ?, '[]', ?, ?)`,
      args: [id, owner.companyId, owner.lineId, owner.lineId ? "v1" : "api", url, sealed, 0],
    })
  );
  return id;
}

/** `count` payee.updated events of a line, each queued to the line's endpoints; their ids. */
async function emit(
  f: HttpFixture,
  environment: Environment,
  owner: { companyId: string; lineId: string },
  count: number,
): Promise<string[]> {
  return await f.deps.databases[environment].writer.write(async (tx) => {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      ids.push(
        await recordEvent(tx, {
          companyId: owner.companyId,
          lineId: owner.lineId,
          key: "payee_updated",
          reason: "isolation test",
          data: { payee_id: `p${i}`, changed: ["email"] },
        }, f.clock.now()),
      );
    }
    return ids;
  });
}

/** Sweeps again and again, as the worker loop does, until stopped. */
function sweepContinuously(dispatcher: WebhookDispatcher, pauseMs: number) {
  let running = true;
  const done = (async () => {
    while (running) {
      await dispatcher.sweep();
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  })();
  return async () => {
    running = false;
    await done;
  };
}

async function until(condition: () => boolean, timeoutMs: number, what: string) {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Another tenant's first attempt is made within this long while Acme's hang. */
const OTHER_TENANT_FIRST_ATTEMPT_MS_MAX = 2_000;

Deno.test("a black-hole endpoint delays only itself: Beacon's first attempts in test and live come within 2 s while Acme's hang", async () => {
  const hole = blackHole();
  const beacon = receiver();
  try {
    await withHttpFixture(async (f) => {
      const acme = { companyId: f.cast.acme.id, lineId: f.cast.acme.autoLineId };
      const beaconLine = { companyId: f.cast.beacon.id, lineId: f.cast.beacon.lineId };
      const registered = await v1(f, f.cast.acmeAutoKeyTest, "POST", "/v1/webhooks", {
        url: `http://127.0.0.1:${hole.port}/hook`,
      });
      assert.equal(registered.status, 201);
      assert.equal(
        (await v1(f, f.cast.beaconKeyTest, "POST", "/v1/webhooks", { url: beacon.url })).status,
        201,
      );
      // Live receivers must be public https names: these resolve to a public address, and the
      // test's fetch carries them to the two listeners on this machine.
      await insertEndpoint(f, "live", acme, "https://dead.example.test/hook");
      await insertEndpoint(f, "live", beaconLine, "https://beacon.example.test/hook");
      const local: Record<string, number> = {
        "dead.example.test": hole.port,
        "beacon.example.test": beacon.port,
      };
      const perEndpointConcurrency = 4;
      const dispatcher = new WebhookDispatcher(f.deps.databases, f.deps.secretBox, f.clock, {
        batchSize: 50,
        endpointsInParallel: 4,
        perEndpointConcurrency,
        timeoutMs: 4_000,
        leaseMs: 30_000,
        random: () => 0.5,
        resolve: () => Promise.resolve(["93.184.216.34"]),
        fetch: (input, init) => {
          const url = new URL(String(input));
          const port = local[url.hostname];
          return fetch(port ? `http://127.0.0.1:${port}${url.pathname}` : url, init);
        },
      });
      // Acme's 40 deliveries (20 per environment) go to the black hole first.
      await emit(f, "test", acme, 20);
      await emit(f, "live", acme, 20);
      const stop = sweepContinuously(dispatcher, 100);
      try {
        await until(
          () => hole.connections.length === 2 * perEndpointConcurrency,
          5_000,
          "Acme's attempts hanging in both environments",
        );
        const emitted = performance.now();
        const [testEvent] = await emit(f, "test", beaconLine, 1);
        const [liveEvent] = await emit(f, "live", beaconLine, 1);
        await until(
          () => beacon.firstArrival.has(testEvent) && beacon.firstArrival.has(liveEvent),
          10_000,
          "Beacon's first attempts",
        );
        for (const [environment, event] of [["test", testEvent], ["live", liveEvent]]) {
          const latency = beacon.firstArrival.get(event)! - emitted;
          assert.ok(
            latency < OTHER_TENANT_FIRST_ATTEMPT_MS_MAX,
            `Beacon's ${environment} delivery came ${latency.toFixed(0)} ms after its event`,
          );
        }
        assert.equal(
          hole.connections.length,
          2 * perEndpointConcurrency,
          "Acme's endpoints hold no more than their own slots",
        );
      } finally {
        await stop();
        // The black hole lets go: Acme's attempts end (failed) and are recorded.
        await hole.stop();
        await dispatcher.settled();
      }
      const { rows } = await f.deps.databases.test.readClient.execute({
        sql: `SELECT count(*) AS n FROM delivery_attempts a
              JOIN webhook_deliveries d ON d.id = a.delivery_id
              JOIN webhook_endpoints e ON e.id = d.endpoint_id WHERE e.company_id = ?`,
        args: [f.cast.beacon.id],
      });
      assert.equal(Number(rows[0].n), 1, "Beacon's test delivery was recorded once");
    });
  } finally {
    await hole.stop();
    await beacon.stop();
  }
});

interface EndpointView {
  status: string;
  disabled_at: string | null;
  disabled_reason: string | null;
  failing_since: string | null;
}

Deno.test("circuit breaker: after an hour of failures one probe per 5 minutes; after 5 days disabled, logged, visible, and enabled again by an explicit call", async () => {
  let answer = 500;
  const r = receiver(() => answer);
  try {
    await withHttpFixture(async (f) => {
      const key = f.cast.acmeAutoKeyTest;
      const acme = { companyId: f.cast.acme.id, lineId: f.cast.acme.autoLineId };
      const registered = await v1(f, key, "POST", "/v1/webhooks", { url: r.url });
      const { id } = await registered.json() as { id: string };
      const logs: Record<string, unknown>[] = [];
      const options: DispatcherOptions = {
        batchSize: 50,
        endpointsInParallel: 4,
        perEndpointConcurrency: 4,
        timeoutMs: 2_000,
        leaseMs: 30_000,
        random: () => 0.5,
        log: (entry) => logs.push(entry),
      };
      const dispatcher = new WebhookDispatcher(
        f.deps.databases,
        f.deps.secretBox,
        f.clock,
        options,
      );
      const t0 = f.clock.now();
      const endpoint = async () =>
        await (await v1(f, key, "GET", `/v1/webhooks/${id}`)).json() as EndpointView;
      const pending = async () =>
        (await f.deps.databases.test.readClient.execute(
          "SELECT next_attempt_at FROM webhook_deliveries WHERE status = 'pending' ORDER BY rowid",
        )).rows.map((row) => Number(row.next_attempt_at));

      await emit(f, "test", acme, 1);
      assert.equal(await dispatcher.sweep(), 1);
      assert.deepEqual(await endpoint(), {
        ...await endpoint(),
        status: "enabled",
        failing_since: new Date(t0).toISOString(),
      });

      // An hour of failures: four deliveries are due, one probe goes.
      f.clock.set(t0 + HOUR_MS);
      await emit(f, "test", acme, 3);
      const before = r.requests;
      assert.equal(await dispatcher.sweep(), 1, "one probe while the circuit is open");
      assert.equal(r.requests, before + 1);
      const probeAt = t0 + HOUR_MS + CIRCUIT_PROBE_INTERVAL_MS;
      assert.deepEqual(await pending(), [probeAt, probeAt, probeAt, probeAt]);
      await emit(f, "test", acme, 1);
      assert.equal(await dispatcher.sweep(), 0, "a new event waits for the next probe too");
      f.clock.advance(CIRCUIT_PROBE_INTERVAL_MS - 1);
      assert.equal(await dispatcher.sweep(), 0);
      f.clock.advance(1);
      assert.equal(await dispatcher.sweep(), 1, "the next probe, five minutes on");
      assert.equal(r.requests, before + 2);

      // Five days of failures, one minute short: still enabled.
      f.clock.set(t0 + ENDPOINT_DISABLED_AFTER_FAILING_MS - 60_000);
      await emit(f, "test", acme, 2);
      assert.equal(await dispatcher.sweep(), 1);
      assert.equal((await endpoint()).status, "enabled");
      assert.deepEqual(logs, []);
      f.clock.advance(CIRCUIT_PROBE_INTERVAL_MS);
      assert.equal(await dispatcher.sweep(), 1);
      const reason = "every attempt failed for 5 days, since 2026-01-05T15:00:00.000Z";
      const disabledAt = new Date(f.clock.now()).toISOString();
      assert.deepEqual(await endpoint(), {
        ...await endpoint(),
        status: "disabled",
        disabled_at: disabledAt,
        disabled_reason: reason,
        failing_since: "2026-01-05T15:00:00.000Z",
      });
      assert.deepEqual(logs, [{
        level: "warn",
        msg: "webhook endpoint disabled",
        environment: "test",
        endpoint_id: id,
        company_id: f.cast.acme.id,
        reason,
        failing_since: "2026-01-05T15:00:00.000Z",
      }]);
      assert.deepEqual(await pending(), [], "its waiting deliveries failed");
      await emit(f, "test", acme, 1);
      assert.equal(await dispatcher.sweep(), 0, "nothing is queued to a disabled endpoint");
      const failed = Number(
        (await f.deps.databases.test.readClient.execute(
          "SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'failed'",
        )).rows[0].n,
      );

      // Enabled again by an explicit call: a fresh start, the failures stay failed.
      const enabled = await v1(f, key, "POST", `/v1/webhooks/${id}/enable`);
      assert.equal(enabled.status, 200);
      assert.deepEqual(await enabled.json(), {
        ...await endpoint(),
        status: "enabled",
        disabled_at: null,
        disabled_reason: null,
        failing_since: null,
      });
      assert.equal(
        (await v1(f, f.cast.beaconKeyTest, "POST", `/v1/webhooks/${id}/enable`)).status,
        404,
        "another line's key does not see it",
      );
      answer = 200;
      await emit(f, "test", acme, 1);
      assert.equal(await dispatcher.sweep(), 1);
      const { rows } = await f.deps.databases.test.readClient.execute(
        "SELECT status, count(*) AS n FROM webhook_deliveries GROUP BY status ORDER BY status",
      );
      assert.deepEqual(rows.map((row) => [row.status, Number(row.n)]), [
        ["failed", failed],
        ["succeeded", 1],
      ]);
    });
  } finally {
    await r.stop();
  }
});

Deno.test("any successful attempt clears failing_since", async () => {
  let answer = 503;
  const r = receiver(() => answer);
  try {
    await withHttpFixture(async (f) => {
      const acme = { companyId: f.cast.acme.id, lineId: f.cast.acme.autoLineId };
      await v1(f, f.cast.acmeAutoKeyTest, "POST", "/v1/webhooks", { url: r.url });
      const dispatcher = new WebhookDispatcher(f.deps.databases, f.deps.secretBox, f.clock, {
        batchSize: 50,
        endpointsInParallel: 4,
        perEndpointConcurrency: 4,
        timeoutMs: 2_000,
        leaseMs: 30_000,
        random: () => 0.5,
      });
      const failingSince = async () =>
        (await f.deps.databases.test.readClient.execute(
          "SELECT failing_since FROM webhook_endpoints",
        )).rows[0].failing_since;
      const t0 = f.clock.now();
      await emit(f, "test", acme, 1);
      await dispatcher.sweep();
      assert.equal(await failingSince(), t0);
      f.clock.advance(30 * 60_000);
      await emit(f, "test", acme, 1);
      await dispatcher.sweep();
      assert.equal(await failingSince(), t0, "a run of failures keeps its start");
      answer = 200;
      f.clock.advance(60_000);
      await emit(f, "test", acme, 1);
      await dispatcher.sweep();
      assert.equal(await failingSince(), null);
    });
  } finally {
    await r.stop();
  }
});

Deno.test("Surface A: a disabled endpoint shows why in GET /api/webhooks/{id}; POST …/enable enables it", async () => {
  await withHttpFixture(async (f) => {
    const created = await surfaceA(f, "POST", "/api/webhooks", { url: "http://localhost:7000/in" });
    const { id } = await created.json() as { id: string };
    const failingSince = f.clock.now() - 5 * DAY_MS;
    await f.deps.databases.test.writer.write((tx) =>
      tx.execute({
        sql:
          "UPDATE webhook_endpoints SET disabled_at = ?, disabled_reason = ?, failing_since = ? WHERE id = ?",
        args: [f.clock.now(), "every attempt failed for 5 days, since x", failingSince, id],
      })
    );
    const shown = await (await surfaceA(f, "GET", `/api/webhooks/${id}`)).json() as EndpointView;
    assert.deepEqual(
      [shown.status, shown.disabled_at, shown.disabled_reason, shown.failing_since],
      [
        "disabled",
        new Date(f.clock.now()).toISOString(),
        "every attempt failed for 5 days, since x",
        new Date(failingSince).toISOString(),
      ],
    );
    const enabled = await surfaceA(f, "POST", `/api/webhooks/${id}/enable`);
    assert.equal(enabled.status, 200);
    const view = await enabled.json() as EndpointView & { id: string };
    assert.deepEqual(
      [view.id, view.status, view.disabled_at, view.disabled_reason, view.failing_since],
      [id, "enabled", null, null, null],
    );
    assert.equal((await surfaceA(f, "POST", "/api/webhooks/we_missing/enable")).status, 404);
    const { rows } = await f.deps.databases.test.readClient.execute({
      sql: "SELECT disabled_at, disabled_reason, failing_since FROM webhook_endpoints WHERE id = ?",
      args: [id],
    });
    assert.deepEqual({ ...rows[0] }, {
      disabled_at: null,
      disabled_reason: null,
      failing_since: null,
    });
  });
});

Deno.test("claims last leaseMs: a delivery waiting for its endpoint's slot has its claim extended, and stop() releases it", async () => {
  const hole = blackHole();
  try {
    await withHttpFixture(async (f) => {
      const acme = { companyId: f.cast.acme.id, lineId: f.cast.acme.autoLineId };
      await v1(f, f.cast.acmeAutoKeyTest, "POST", "/v1/webhooks", {
        url: `http://127.0.0.1:${hole.port}/hook`,
      });
      await emit(f, "test", acme, 5);
      const leaseMs = 30_000;
      const dispatcher = new WebhookDispatcher(f.deps.databases, f.deps.secretBox, f.clock, {
        batchSize: 50,
        endpointsInParallel: 1,
        perEndpointConcurrency: 1,
        timeoutMs: 1_000,
        leaseMs,
        attemptWaitMs: 100,
        random: () => 0.5,
      });
      const claims = async () =>
        (await f.deps.databases.test.readClient.execute(
          "SELECT claimed_until, attempt_count FROM webhook_deliveries ORDER BY rowid",
        )).rows.map((row) => [row.claimed_until, Number(row.attempt_count)]);
      const t0 = f.clock.now();
      assert.equal(await dispatcher.sweep(), 1, "one slot: one attempt, hanging; four wait");
      assert.deepEqual(await claims(), Array(5).fill([t0 + leaseMs, 0]));
      // Most of the lease goes by while the attempt hangs (2 s left, under the 3.84 s floor of a
      // 1 s timeout); its end brings a unit that extends the claims of the four still waiting.
      f.clock.advance(28_000);
      await until(
        () => hole.connections.length === 1,
        2_000,
        "the attempt reached the black hole",
      );
      await dispatcher.settled();
      assert.deepEqual(await claims(), [
        [null, 1],
        ...Array(4).fill([t0 + 28_000 + leaseMs, 0]),
      ]);
      await dispatcher.stop();
      assert.deepEqual(await claims(), [[null, 1], ...Array(4).fill([null, 0])]);
    });
  } finally {
    await hole.stop();
  }
});
