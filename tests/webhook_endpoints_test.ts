import assert from "node:assert/strict";
import { checkEndpointUrl } from "../lib/webhooks/endpoint_url.ts";
import { fundAcmeAuto, type HttpFixture, withHttpFixture } from "./http_fixture.ts";

const refusedInLive = [
  "http://example.com/hook",
  "https://localhost/hook",
  "https://app.localhost/hook",
  "https://127.0.0.1/hook",
  "https://127.1.2.3/hook",
  "https://2130706433/hook",
  "https://0x7f.1/hook",
  "https://0177.0.0.1/hook",
  "https://0x7f000001/hook",
  "https://0.0.0.0/hook",
  "https://10.0.0.1/hook",
  "https://10.255.255.255/hook",
  "https://172.16.0.1/hook",
  "https://172.31.255.255/hook",
  "https://192.168.1.1/hook",
  "https://169.254.169.254/latest/meta-data",
  "https://169.254.0.1/hook",
  "https://100.64.0.1/hook",
  "https://100.127.255.255/hook",
  "https://224.0.0.1/hook",
  "https://239.255.255.250/hook",
  "https://240.0.0.1/hook",
  "https://255.255.255.255/hook",
  "https://192.0.2.10/hook",
  "https://198.18.0.1/hook",
  "https://198.51.100.7/hook",
  "https://203.0.113.9/hook",
  "https://[::1]/hook",
  "https://[::]/hook",
  "https://[fc00::1]/hook",
  "https://[fd12:3456::1]/hook",
  "https://[fe80::1]/hook",
  "https://[ff02::1]/hook",
  "https://[::ffff:127.0.0.1]/hook",
  "https://[::ffff:10.0.0.1]/hook",
  "https://[::ffff:169.254.169.254]/hook",
  "https://[64:ff9b::7f00:1]/hook",
  "https://user:pass@example.com/hook",
  "ftp://example.com/hook",
  "not a url",
];

Deno.test("40 SSRF-prone URLs are refused in live; public https is accepted", () => {
  assert.equal(refusedInLive.length, 40);
  for (const url of refusedInLive) assert.equal(checkEndpointUrl(url, "live").ok, false, url);
  for (
    const url of [
      "https://example.com/hook",
      "https://93.184.216.34/x",
      "https://[2606:4700::1111]/x",
    ]
  ) {
    assert.equal(checkEndpointUrl(url, "live").ok, true, url);
  }
  // The sandbox accepts receivers on the developer's own machine, but never the metadata address.
  for (
    const url of ["http://localhost:9999/hook", "http://127.0.0.1:8080/x", "http://[::1]:3000/x"]
  ) {
    assert.equal(checkEndpointUrl(url, "test").ok, true, url);
  }
  assert.equal(checkEndpointUrl("http://169.254.169.254/", "test").ok, false);
  assert.equal(checkEndpointUrl("https://10.0.0.1/", "test").ok, false);
});

const call = (f: HttpFixture, method: string, path: string, body?: unknown, key?: string) =>
  f.app.request(path, {
    method,
    headers: {
      Authorization: `Bearer ${key ?? f.cast.acmeAutoKeyTest}`,
      "Content-Type": "application/json",
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

Deno.test("POST /v1/webhooks shows the secret once and stores it sealed; get, deliveries and delete", async () => {
  await withHttpFixture(async (f) => {
    const res = await call(f, "POST", "/v1/webhooks", {
      url: "http://localhost:9999/hook",
      description: "claims system",
    });
    assert.equal(res.status, 201);
    const created = await res.json() as Record<string, unknown>;
    assert.match(String(created.secret), /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.deepEqual({ ...created, id: "we", secret: "whsec" }, {
      id: "we",
      object: "webhook_endpoint",
      url: "http://localhost:9999/hook",
      events: [
        "disbursement.created",
        "disbursement.modality_offered",
        "disbursement.modality_selected",
        "disbursement.funds_sent",
        "disbursement.completed",
        "disbursement.failed",
        "disbursement.canceled",
        "payee.updated",
        "disbursement.returned",
        "disbursement.pending_approval",
        "disbursement.approved",
        "disbursement.rejected",
        "disbursement.fallback_at_deadline",
        "disbursement.escheated",
      ],
      description: "claims system",
      status: "enabled",
      disabled_at: null,
      disabled_reason: null,
      failing_since: null,
      ed25519_signatures: false,
      line: "auto",
      livemode: false,
      created: new Date(f.clock.now()).toISOString(),
      secret: "whsec",
    });
    const { rows } = await f.deps.databases.test.readClient.execute(
      "SELECT secret_ciphertext FROM webhook_endpoints",
    );
    const sealed = String(rows[0].secret_ciphertext);
    assert.ok(!sealed.includes(String(created.secret).slice(6)), "not stored in clear");
    assert.equal(await f.deps.secretBox.openText(sealed), created.secret);

    const fetched = await (await call(f, "GET", `/v1/webhooks/${created.id}`)).json() as Record<
      string,
      unknown
    >;
    assert.equal(fetched.secret, undefined, "the secret is shown once");
    assert.deepEqual(await (await call(f, "GET", `/v1/webhooks/${created.id}/deliveries`)).json(), {
      object: "list",
      data: [],
      has_more: false,
    });
    assert.equal(
      (await call(f, "GET", `/v1/webhooks/${created.id}`, undefined, f.cast.beaconKeyTest)).status,
      404,
    );
    assert.equal(
      (await call(f, "DELETE", `/v1/webhooks/${created.id}`, undefined, f.cast.beaconKeyTest))
        .status,
      404,
    );
    const deleted = await call(f, "DELETE", `/v1/webhooks/${created.id}`);
    assert.deepEqual(await deleted.json(), {
      id: created.id,
      object: "webhook_endpoint",
      deleted: true,
    });
    assert.equal((await call(f, "GET", `/v1/webhooks/${created.id}`)).status, 404);
  });
});

Deno.test("POST /v1/webhooks refuses bad URLs and events, in the live environment too", async () => {
  await withHttpFixture(async (f) => {
    const cases: [unknown, string | undefined, string, string][] = [
      [
        { url: "http://example.com/hook" },
        f.cast.acmeAutoKeyLive,
        "url",
        "a live url must be https",
      ],
      [
        { url: "https://2130706433/hook" },
        f.cast.acmeAutoKeyLive,
        "url",
        "127.0.0.1 is in 127.0.0.0/8 (loopback), not a public address",
      ],
      [
        { url: "http://example.com/hook" },
        undefined,
        "url",
        "url must be https, or http on localhost",
      ],
      [
        { url: "https://example.com", events: ["disbursement.exploded"] },
        undefined,
        "events.0",
        "each event must be one of disbursement.created, disbursement.modality_offered, disbursement.modality_selected, disbursement.funds_sent, disbursement.completed, disbursement.failed, disbursement.canceled, payee.updated, disbursement.returned, disbursement.pending_approval, disbursement.approved, disbursement.rejected, disbursement.fallback_at_deadline, disbursement.escheated",
      ],
      [{}, undefined, "url", "url is required"],
    ];
    for (const [body, key, param, message] of cases) {
      const res = await call(f, "POST", "/v1/webhooks", body, key);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.deepEqual(
        (await res.json() as { errors: unknown[] }).errors[0],
        { param, message },
        JSON.stringify(body),
      );
    }
    const live = await call(f, "POST", "/v1/webhooks", {
      url: "https://hooks.example.com/in",
      events: ["disbursement.completed"],
    }, f.cast.acmeAutoKeyLive);
    assert.equal(live.status, 201);
    assert.equal((await live.json() as { livemode: boolean }).livemode, true);
  });
});

Deno.test("events queue a delivery per subscribed endpoint; a replay adds one manual delivery per endpoint", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 10_000);
    const all = await (await call(f, "POST", "/v1/webhooks", { url: "http://localhost:9/all" }))
      .json() as { id: string };
    const done = await (await call(f, "POST", "/v1/webhooks", {
      url: "http://localhost:9/done",
      events: ["disbursement.completed"],
    })).json() as { id: string };
    await call(f, "POST", "/v1/payees", { id: "noaction", email: "n@example.test" });
    await call(f, "POST", "/v1/disbursements", {
      amount: 1,
      claim_id: "C",
      payee: { id: "noaction" },
      modalities: ["ach"],
    });
    const events = await (await call(f, "GET", "/v1/events?type=disbursement.created")).json() as {
      data: { id: string }[];
    };
    const replay = await call(f, "POST", `/v1/events/${events.data[0].id}/replay`);
    assert.equal(replay.status, 202);
    assert.deepEqual(await replay.json(), {
      object: "event_replay",
      event_id: events.data[0].id,
      deliveries: 1,
    });
    const deliveries = await (await call(f, "GET", `/v1/webhooks/${all.id}/deliveries`)).json() as {
      data: Record<string, unknown>[];
    };
    const onlyCompleted = await (await call(f, "GET", `/v1/webhooks/${done.id}/deliveries`))
      .json() as { data: unknown[] };
    assert.deepEqual(onlyCompleted.data, [], "an endpoint gets only the events it subscribed to");
    // The event was queued to the endpoint when it happened; the replay adds a manual delivery.
    assert.deepEqual(deliveries.data.map((d) => [d.event_id, d.status, d.manual]), [
      [events.data[0].id, "pending", true],
      [events.data[0].id, "pending", false],
    ]);
    assert.equal(
      (await call(
        f,
        "POST",
        `/v1/events/${events.data[0].id}/replay`,
        undefined,
        f.cast.beaconKeyTest,
      )).status,
      404,
    );
  });
});

Deno.test("deleting an endpoint cancels its waiting deliveries; their events can be replayed to another endpoint", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 10_000);
    const old = await (await call(f, "POST", "/v1/webhooks", { url: "http://localhost:9/old" }))
      .json() as { id: string };
    await call(f, "POST", "/v1/payees", { id: "noaction", email: "n@example.test" });
    await call(f, "POST", "/v1/disbursements", {
      amount: 1,
      claim_id: "C",
      payee: { id: "noaction" },
      modalities: ["ach"],
    });
    const deliveriesOf = async (endpointId: string) =>
      (await f.deps.databases.test.readClient.execute({
        sql: `SELECT event_id, status, next_attempt_at, completed_at FROM webhook_deliveries
              WHERE endpoint_id = ? ORDER BY rowid`,
        args: [endpointId],
      })).rows.map((row) => ({ ...row }));
    const waiting = await deliveriesOf(old.id);
    assert.ok(waiting.length > 0);
    assert.ok(waiting.every((d) => d.status === "pending" && d.next_attempt_at !== null));

    f.clock.advance(1000);
    assert.equal((await call(f, "DELETE", `/v1/webhooks/${old.id}`)).status, 200);
    assert.deepEqual(
      await deliveriesOf(old.id),
      waiting.map((d) => ({
        ...d,
        status: "canceled",
        next_attempt_at: null,
        completed_at: f.clock.now(),
      })),
    );

    const replacement = await (await call(f, "POST", "/v1/webhooks", {
      url: "http://localhost:9/new",
    })).json() as { id: string };
    const eventId = String(waiting[0].event_id);
    const replay = await call(f, "POST", `/v1/events/${eventId}/replay`);
    assert.equal(replay.status, 202);
    assert.equal((await replay.json() as { deliveries: number }).deliveries, 1);
    assert.deepEqual((await deliveriesOf(replacement.id)).map((d) => [d.event_id, d.status]), [
      [eventId, "pending"],
    ]);
    const listed = await (await call(f, "GET", `/v1/webhooks/${replacement.id}/deliveries`))
      .json() as { data: { status: string }[] };
    assert.deepEqual(listed.data.map((d) => d.status), ["pending"]);
  });
});
