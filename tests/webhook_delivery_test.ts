/** The dispatcher against a real receiver on 127.0.0.1, on a fake clock. */
import assert from "node:assert/strict";
import { runAdminCommand } from "../lib/admin/commands.ts";
import { type DispatcherOptions, WebhookDispatcher } from "../lib/webhooks/dispatcher.ts";
import { newWebhookSecret } from "../lib/platform/crypto.ts";
import { RETRY_DELAYS_MS } from "../lib/webhooks/schedule.ts";
import { verifySignature } from "../lib/webhooks/signing.ts";
import { fundAcmeAuto, type HttpFixture, withHttpFixture } from "./http_fixture.ts";

interface Received {
  headers: Headers;
  body: string;
}

/** A receiver answering the scripted statuses in turn (the last one repeats). */
function receiver(statuses: number[]) {
  const received: Received[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      received.push({ headers: request.headers, body: await request.text() });
      const status = statuses[Math.min(received.length - 1, statuses.length - 1)];
      return new Response(status === 200 ? "thanks" : "nope", { status });
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}/hook`,
    received,
    stop: () => server.shutdown(),
  };
}

function dispatcherFor(f: HttpFixture, options: Partial<DispatcherOptions> = {}) {
  return new WebhookDispatcher(f.deps.databases, f.deps.secretBox, f.clock, {
    batchSize: 50,
    endpointsInParallel: 4,
    perEndpointConcurrency: 1,
    timeoutMs: 2_000,
    leaseMs: 30_000,
    random: () => 0.5,
    // The disabled-endpoint line is asserted in webhook_isolation_test.ts.
    log: () => {},
    ...options,
  });
}

const call = (f: HttpFixture, method: string, path: string, body?: unknown) =>
  f.app.request(path, {
    method,
    headers: {
      Authorization: `Bearer ${f.cast.acmeAutoKeyTest}`,
      "Content-Type": "application/json",
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

async function register(f: HttpFixture, url: string, events?: string[]) {
  const res = await call(f, "POST", "/v1/webhooks", { url, ...(events ? { events } : {}) });
  assert.equal(res.status, 201);
  return await res.json() as { id: string; secret: string };
}

/** One payee.updated event for the line. */
async function emitEvent(f: HttpFixture) {
  await call(f, "POST", "/v1/payees", { id: "p1", email: "a@example.test" });
  await call(f, "POST", "/v1/payees", { id: "p1", email: "b@example.test" });
}

async function delivery(f: HttpFixture) {
  const { rows } = await f.deps.databases.test.readClient.execute(
    "SELECT status, attempt_count, next_attempt_at FROM webhook_deliveries ORDER BY rowid DESC LIMIT 1",
  );
  return {
    status: String(rows[0].status),
    attempts: Number(rows[0].attempt_count),
    next: rows[0].next_attempt_at === null ? null : Number(rows[0].next_attempt_at),
  };
}

Deno.test("an always-500 endpoint gets 10 attempts on the schedule, then the delivery fails", async () => {
  const r = receiver([500]);
  try {
    await withHttpFixture(async (f) => {
      await register(f, r.url);
      await emitEvent(f);
      const dispatcher = dispatcherFor(f);
      const times: number[] = [];
      for (;;) {
        times.push(f.clock.now());
        assert.equal(await dispatcher.sweep(), 1);
        const state = await delivery(f);
        if (state.next === null) {
          assert.equal(state.status, "failed");
          break;
        }
        assert.equal(await dispatcher.sweep(), 0, "nothing is due before the next attempt");
        f.clock.set(state.next);
      }
      assert.equal(r.received.length, 10);
      assert.deepEqual(times.slice(1).map((t, i) => t - times[i]), [...RETRY_DELAYS_MS]);
      assert.ok(times.at(-1)! - times[0] < 86_400_000, "all within 24 hours of the event");
      assert.deepEqual(r.received.map((x) => x.headers.get("x-delivery-attempt")), [
        "1",
        "2",
        "3",
        "4",
        "5",
        "6",
        "7",
        "8",
        "9",
        "10",
      ]);
      const { rows } = await f.deps.databases.test.readClient.execute(
        "SELECT count(*) AS n, min(status_code) AS s FROM delivery_attempts",
      );
      assert.deepEqual([Number(rows[0].n), Number(rows[0].s)], [10, 500]);
    });
  } finally {
    await r.stop();
  }
});

Deno.test("410 Gone disables the endpoint after one attempt; later events are not queued to it", async () => {
  const r = receiver([410]);
  try {
    await withHttpFixture(async (f) => {
      const endpoint = await register(f, r.url);
      await emitEvent(f);
      assert.equal(await dispatcherFor(f).sweep(), 1);
      assert.deepEqual(await delivery(f), { status: "failed", attempts: 1, next: null });
      const fetched = await (await call(f, "GET", `/v1/webhooks/${endpoint.id}`)).json() as {
        status: string;
      };
      assert.equal(fetched.status, "disabled");
      await call(f, "POST", "/v1/payees", { id: "p1", email: "c@example.test" });
      const { rows } = await f.deps.databases.test.readClient.execute(
        "SELECT count(*) AS n FROM webhook_deliveries",
      );
      assert.equal(Number(rows[0].n), 1);
    });
  } finally {
    await r.stop();
  }
});

Deno.test("410 Gone fails the endpoint's waiting deliveries too; they can be replayed once it is enabled", async () => {
  const r = receiver([500, 410]);
  try {
    await withHttpFixture(async (f) => {
      const endpoint = await register(f, r.url);
      await call(f, "POST", "/v1/payees", { id: "p1", email: "a@example.test" });
      await call(f, "POST", "/v1/payees", { id: "p1", email: "b@example.test" });
      const dispatcher = dispatcherFor(f);
      assert.equal(await dispatcher.sweep(), 1);
      assert.deepEqual(await delivery(f), {
        status: "pending",
        attempts: 1,
        next: f.clock.now() + RETRY_DELAYS_MS[0],
      });
      await call(f, "POST", "/v1/payees", { id: "p1", email: "c@example.test" });
      assert.equal(await dispatcher.sweep(), 1, "only the new event is due");
      const { rows } = await f.deps.databases.test.readClient.execute(
        "SELECT status, attempt_count, next_attempt_at, completed_at FROM webhook_deliveries ORDER BY rowid",
      );
      assert.deepEqual(rows.map((row) => ({ ...row })), [
        { status: "failed", attempt_count: 1, next_attempt_at: null, completed_at: f.clock.now() },
        { status: "failed", attempt_count: 1, next_attempt_at: null, completed_at: f.clock.now() },
      ]);
      const enabled = await call(f, "POST", `/v1/webhooks/${endpoint.id}/enable`);
      assert.equal(enabled.status, 200);
      const events = await (await call(f, "GET", "/v1/events?type=payee.updated")).json() as {
        data: { id: string }[];
      };
      const replay = await call(f, "POST", `/v1/events/${events.data.at(-1)!.id}/replay`);
      assert.equal((await replay.json() as { deliveries: number }).deliveries, 1);
    });
  } finally {
    await r.stop();
  }
});

Deno.test("an endpoint that fails twice then succeeds gets 3 signed attempts of the same event", async () => {
  const r = receiver([500, 503, 200]);
  try {
    await withHttpFixture(async (f) => {
      const { secret } = await register(f, r.url);
      await emitEvent(f);
      const dispatcher = dispatcherFor(f);
      for (let i = 0; i < 3; i++) {
        await dispatcher.sweep();
        const state = await delivery(f);
        if (state.next !== null) f.clock.set(state.next);
      }
      assert.deepEqual(await delivery(f), { status: "succeeded", attempts: 3, next: null });
      const ids = new Set(r.received.map((x) => x.headers.get("x-event-id")));
      assert.equal(ids.size, 1);
      for (const request of r.received) {
        assert.equal(request.headers.get("webhook-id"), [...ids][0]);
        const valid = await verifySignature({
          header: request.headers.get("x-signature")!,
          body: request.body,
          secret,
          nowSeconds: Math.floor(f.clock.now() / 1000),
          toleranceSeconds: 86_400,
        });
        assert.ok(valid, "each attempt is signed with the endpoint's secret");
      }
      const body = JSON.parse(r.received[0].body);
      assert.deepEqual(
        Object.keys(body),
        ["id", "type", "created", "data", "signature", "sequence"],
      );
      assert.deepEqual(body.data, { id: "p1", object: "payee", changed: ["email"] });
    });
  } finally {
    await r.stop();
  }
});

Deno.test("a manual replay is attempted once and not rescheduled; modality_selected carries the seed's 6.2 data", async () => {
  const r = receiver([200]);
  try {
    await withHttpFixture(async (f) => {
      await fundAcmeAuto(f, 100_000);
      await register(f, r.url, ["disbursement.modality_selected"]);
      await call(f, "POST", "/v1/payees", { id: "success+instant", email: "s@example.test" });
      const { id } = await (await call(f, "POST", "/v1/disbursements", {
        amount: 42.5,
        claim_id: "CLM-9",
        payee: { id: "success+instant" },
        modalities: ["instant"],
      })).json() as { id: string };
      await call(f, "POST", "/v1/sandbox/clock/advance", { seconds: 1 });
      await dispatcherFor(f).sweep();
      assert.equal(r.received.length, 1);
      const selected = JSON.parse(r.received[0].body);
      assert.equal(selected.type, "disbursement.modality_selected");
      assert.deepEqual(selected.data, {
        disbursement_id: id,
        claim_id: "CLM-9",
        modality: "instant_deposit",
        amount: 42.5,
        payee: { id: "success+instant" },
      });

      const failing = receiver([500]);
      try {
        const other = await register(f, failing.url, ["disbursement.modality_selected"]);
        const replay = await call(f, "POST", `/v1/events/${selected.id}/replay`);
        assert.equal((await replay.json() as { deliveries: number }).deliveries, 2);
        await dispatcherFor(f).sweep();
        const { rows } = await f.deps.databases.test.readClient.execute({
          sql:
            "SELECT status, attempt_count, next_attempt_at FROM webhook_deliveries WHERE endpoint_id = ? AND manual = 1",
          args: [other.id],
        });
        assert.deepEqual({ ...rows[0] }, {
          status: "failed",
          attempt_count: 1,
          next_attempt_at: null,
        });
        assert.equal(failing.received.length, 1);
      } finally {
        await failing.stop();
      }
    });
  } finally {
    await r.stop();
  }
});

Deno.test("after a secret rotation both secrets sign for 24 hours, then only the new one", async () => {
  const r = receiver([200]);
  try {
    await withHttpFixture(async (f) => {
      const endpoint = await register(f, r.url);
      const rotated = await call(f, "POST", `/v1/webhooks/${endpoint.id}/rotate-secret`);
      assert.equal(rotated.status, 200);
      const { secret: newSecret } = await rotated.json() as { secret: string };
      assert.notEqual(newSecret, endpoint.secret);
      await emitEvent(f);
      await dispatcherFor(f).sweep();
      const verify = (request: Received, secret: string) =>
        verifySignature({
          header: request.headers.get("x-signature")!,
          body: request.body,
          secret,
          nowSeconds: Math.floor(f.clock.now() / 1000),
        });
      assert.equal(
        r.received[0].headers.get("x-signature")!.split("sha256=").length,
        3,
        "two signatures",
      );
      assert.ok(await verify(r.received[0], endpoint.secret));
      assert.ok(await verify(r.received[0], newSecret));
      f.clock.advance(86_400_000 + 1000);
      await call(f, "POST", "/v1/payees", { id: "p1", email: "later@example.test" });
      await dispatcherFor(f).sweep();
      assert.equal(r.received.length, 2);
      assert.equal(
        r.received[1].headers.get("x-signature")!.split("sha256=").length,
        2,
        "one signature",
      );
      assert.ok(!(await verify(r.received[1], endpoint.secret)));
      assert.ok(await verify(r.received[1], newSecret));
      assert.equal((await call(f, "POST", "/v1/webhooks/we_missing/rotate-secret")).status, 404);
    });
  } finally {
    await r.stop();
  }
});

Deno.test("live: a host name that resolves to a private address is not reached; a public one is", async () => {
  await withHttpFixture(async (f) => {
    const live = (method: string, path: string, body?: unknown) =>
      f.app.request(path, {
        method,
        headers: {
          Authorization: `Bearer ${f.cast.acmeAutoKeyLive}`,
          "Content-Type": "application/json",
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    assert.equal(
      (await live("POST", "/v1/webhooks", { url: "https://rebind.example.test/hook" })).status,
      201,
    );
    await live("POST", "/v1/payees", { id: "p1", email: "a@example.test" });
    await live("POST", "/v1/payees", { id: "p1", email: "b@example.test" });
    const sent: string[] = [];
    const make = (addresses: string[]) =>
      new WebhookDispatcher(f.deps.databases, f.deps.secretBox, f.clock, {
        batchSize: 10,
        endpointsInParallel: 1,
        perEndpointConcurrency: 1,
        timeoutMs: 1000,
        leaseMs: 10_000,
        random: () => 0.5,
        resolve: () => Promise.resolve(addresses),
        fetch: (input) => {
          sent.push(String(input));
          return Promise.resolve(new Response("ok", { status: 200 }));
        },
      });
    assert.equal(await make(["93.184.216.34", "10.1.2.3"]).sweep(), 1);
    assert.deepEqual(sent, [], "nothing was sent");
    const { rows } = await f.deps.databases.live.readClient.execute(
      "SELECT error FROM delivery_attempts",
    );
    assert.match(
      String(rows[0].error),
      /^not sent: rebind\.example\.test resolves to 10\.1\.2\.3: /,
    );
    const pending = await f.deps.databases.live.readClient.execute(
      "SELECT next_attempt_at FROM webhook_deliveries",
    );
    f.clock.set(Number(pending.rows[0].next_attempt_at));
    assert.equal(await make(["93.184.216.34"]).sweep(), 1);
    assert.deepEqual(sent, ["https://rebind.example.test/hook"]);
  });
});

Deno.test("Surface A endpoints get every event in the webhookTrigger shape; an operator replay reaches both surfaces", async () => {
  const r = receiver([200]);
  try {
    await withHttpFixture(async (f) => {
      await register(f, r.url);
      const secret = newWebhookSecret();
      await f.deps.databases.test.writer.write(async (tx) =>
        tx.execute({
          sql:
            `INSERT INTO webhook_endpoints (id, company_id, line_id, surface, url, events, secret_ciphertext, created_at)
                VALUES ('we_api', ?, NULL, 'api', ?, '[]', ?, 0)`,
          args: [f.cast.acme.id, r.url, await f.deps.secretBox.sealText(secret)],
        })
      );
      await emitEvent(f);
      assert.equal(await dispatcherFor(f).sweep(), 2);
      const surfaceA = r.received.map((x) => JSON.parse(x.body)).find((b) => b.webhookTrigger);
      assert.equal(surfaceA.webhookTrigger.payload.EventTypeId, 10);
      assert.equal(surfaceA.webhookTrigger.payload.EventTypeName, "PAYEE.UPDATED");
      assert.equal(surfaceA.webhookTrigger.payload.CompanyName, "Acme Mutual");
      assert.equal(surfaceA.webhookTrigger.payload.CompanyTin, "111111111");

      const { rows } = await f.deps.databases.test.readClient.execute(
        "SELECT id FROM events LIMIT 1",
      );
      const replayed = await runAdminCommand(
        {
          databases: f.deps.databases,
          now: f.clock.now(),
          keyGraceSeconds: 86_400,
          secretBox: f.deps.secretBox,
          runtimeSettings: { offerTtlDays: 90, baseUrl: "http://127.0.0.1:8000" },
          // A dev-mode sandbox: a test-environment replay needs no operator session.
          dev: true,
          origin: "cli",
          sessionToken: null,
          input: {},
        },
        "event:replay",
        { event: String(rows[0].id), environment: "test" },
      );
      assert.deepEqual(replayed, {
        ok: true,
        value: { environment: "test", event_id: String(rows[0].id), deliveries: 2 },
      });
      const missing = await runAdminCommand(
        {
          databases: f.deps.databases,
          now: f.clock.now(),
          keyGraceSeconds: 86_400,
          secretBox: f.deps.secretBox,
          runtimeSettings: { offerTtlDays: 90, baseUrl: "http://127.0.0.1:8000" },
          // A dev-mode sandbox: a test-environment replay needs no operator session.
          dev: true,
          origin: "cli",
          sessionToken: null,
          input: {},
        },
        "event:replay",
        { event: "evt_missing", environment: "test" },
      );
      assert.ok(!missing.ok && missing.code === "event_not_found");
      assert.equal(await dispatcherFor(f).sweep(), 2);
      assert.equal(r.received.length, 4);
    });
  } finally {
    await r.stop();
  }
});

Deno.test("test environment: advancing the sandbox clock past a retry makes it due at once", async () => {
  const r = receiver([500]);
  try {
    await withHttpFixture(async (f) => {
      await register(f, r.url);
      await emitEvent(f);
      const dispatcher = dispatcherFor(f);
      assert.equal(await dispatcher.sweep(), 1);
      const first = await delivery(f);
      assert.equal(first.next, f.clock.now() + 5_000, "the first retry is 5 s away in real time");
      assert.equal(await dispatcher.sweep(), 0, "not due yet");

      const short = await call(f, "POST", "/v1/sandbox/clock/advance", { seconds: 4 });
      assert.equal(short.status, 200);
      assert.equal((await delivery(f)).next, first.next, "4 s do not reach it");
      assert.equal(await dispatcher.sweep(), 0);

      await call(f, "POST", "/v1/sandbox/clock/advance", { seconds: 2 });
      assert.equal((await delivery(f)).next, f.clock.now(), "the sandbox passed it: due now");
      assert.equal(await dispatcher.sweep(), 1);
      assert.equal(r.received.length, 2);
      const second = await delivery(f);
      assert.equal(second.attempts, 2);
      assert.equal(
        second.next,
        f.clock.now() + 30_000,
        "the next retry follows the schedule again",
      );
    });
  } finally {
    await r.stop();
  }
});

/** One endpoint, four in flight; `apiBusy` plays the API traffic. */
const dispatcherUnderTraffic = (f: HttpFixture, apiBusy: () => boolean) =>
  dispatcherFor(f, { endpointsInParallel: 1, perEndpointConcurrency: 4, apiBusy });

const deliveriesQueued = async (f: HttpFixture) =>
  Number(
    (await f.deps.databases.test.readClient.execute(
      "SELECT count(*) AS n FROM webhook_deliveries",
    )).rows[0].n,
  );

Deno.test("while API requests are in flight one worker still delivers everything", async () => {
  const r = receiver([200]);
  try {
    await withHttpFixture(async (f) => {
      await register(f, r.url);
      for (let i = 0; i < 4; i++) await emitEvent(f);
      let busyChecks = 0;
      const dispatcher = dispatcherUnderTraffic(f, () => {
        busyChecks++;
        return busyChecks < 50;
      });
      const queued = await deliveriesQueued(f);
      assert.equal(queued, 7, "one payee.updated per change");
      assert.equal(await dispatcher.sweep(), queued);
      assert.equal(r.received.length, queued);
      assert.ok(busyChecks > 0, "the other workers waited for the API");
    });
  } finally {
    await r.stop();
  }
});

Deno.test("under steady API traffic deliveries go on in small claims, paced, until all are done", async () => {
  const r = receiver([200]);
  try {
    await withHttpFixture(async (f) => {
      await register(f, r.url);
      for (let i = 0; i < 10; i++) await emitEvent(f);
      const dispatcher = dispatcherUnderTraffic(f, () => true);
      const claimsBefore = f.deps.databases.test.writer.stats.groups;
      const queued = await deliveriesQueued(f);
      assert.ok(queued > 16, `${queued} deliveries queued`);
      assert.equal(await dispatcher.sweep(), queued);
      assert.equal(r.received.length, queued);
      const groups = f.deps.databases.test.writer.stats.groups - claimsBefore;
      // Claims of 8 at most (and their records): far more units than one claim of 50 would take.
      assert.ok(groups >= Math.ceil(queued / 8) * 2, `${queued} deliveries in ${groups} groups`);
      const pending = await f.deps.databases.test.readClient.execute(
        "SELECT count(*) AS n FROM webhook_deliveries WHERE status <> 'succeeded' OR claimed_until IS NOT NULL",
      );
      assert.equal(pending.rows[0].n, 0);
    });
  } finally {
    await r.stop();
  }
});

Deno.test("one sweep to a 200, a 500 and a 410 endpoint records each attempt by its own answer", async () => {
  const ok = receiver([200]);
  const failing = receiver([500]);
  const gone = receiver([410]);
  try {
    await withHttpFixture(async (f) => {
      const endpoints = new Map<string, string>();
      for (const [name, r] of [["ok", ok], ["failing", failing], ["gone", gone]] as const) {
        endpoints.set((await register(f, r.url)).id, name);
      }
      await emitEvent(f);
      await call(f, "POST", "/v1/payees", { id: "p1", email: "c@example.test" });
      const sweptAt = f.clock.now();
      assert.equal(await dispatcherFor(f).sweep(), 6, "two payee events to three endpoints");
      const { rows } = await f.deps.databases.test.readClient.execute(
        `SELECT d.endpoint_id, d.status, d.attempt_count, d.next_attempt_at, d.claimed_until,
                a.status_code, e.disabled_at
           FROM webhook_deliveries d
           JOIN delivery_attempts a ON a.delivery_id = d.id
           JOIN webhook_endpoints e ON e.id = d.endpoint_id
          ORDER BY d.rowid`,
      );
      const byEndpoint = (name: string) =>
        rows.filter((row) => endpoints.get(String(row.endpoint_id)) === name).map((row) => ({
          status: row.status,
          attempts: Number(row.attempt_count),
          next: row.next_attempt_at === null ? null : Number(row.next_attempt_at),
          claimed: row.claimed_until,
          answered: Number(row.status_code),
          disabled: row.disabled_at !== null,
        }));
      const common = { attempts: 1, claimed: null };
      assert.deepEqual(byEndpoint("ok"), [
        { ...common, status: "succeeded", next: null, answered: 200, disabled: false },
        { ...common, status: "succeeded", next: null, answered: 200, disabled: false },
      ]);
      const retry = sweptAt + RETRY_DELAYS_MS[0];
      assert.deepEqual(byEndpoint("failing"), [
        { ...common, status: "pending", next: retry, answered: 500, disabled: false },
        { ...common, status: "pending", next: retry, answered: 500, disabled: false },
      ]);
      assert.deepEqual(byEndpoint("gone"), [
        { ...common, status: "failed", next: null, answered: 410, disabled: true },
        { ...common, status: "failed", next: null, answered: 410, disabled: true },
      ]);
    });
  } finally {
    await Promise.all([ok.stop(), failing.stop(), gone.stop()]);
  }
});

Deno.test("an endpoint deleted while an attempt is in flight: the failed attempt is recorded and the delivery canceled, not rescheduled", async () => {
  let release!: () => void;
  const released = new Promise<void>((resolve) => release = resolve);
  let arrived!: () => void;
  const inFlight = new Promise<void>((resolve) => arrived = resolve);
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    await req.text();
    arrived();
    await released;
    return new Response("nope", { status: 500 });
  });
  try {
    await withHttpFixture(async (f) => {
      const endpoint = await register(f, `http://127.0.0.1:${server.addr.port}/hook`);
      await emitEvent(f);
      const sweeping = dispatcherFor(f).sweep();
      await inFlight;
      assert.equal((await call(f, "DELETE", `/v1/webhooks/${endpoint.id}`)).status, 200);
      release();
      assert.equal(await sweeping, 1);
      assert.deepEqual(await delivery(f), { status: "canceled", attempts: 1, next: null });
    });
  } finally {
    await server.shutdown();
  }
});
