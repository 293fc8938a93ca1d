import assert from "node:assert/strict";
import { basic, type HttpFixture, withHttpFixture } from "./http_fixture.ts";

async function api(
  f: HttpFixture,
  method: string,
  path: string,
  body?: unknown,
  key?: string,
  tin?: string,
) {
  const login = await f.app.request("/api/authenticate", {
    method: "POST",
    headers: { Authorization: basic(tin ?? f.cast.acme.tin, key ?? f.cast.alice.keyTest) },
  });
  const { access_token } = await login.json() as { access_token: string };
  return await f.app.request(path, {
    method,
    headers: { Authorization: `Bearer ${access_token}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

Deno.test("Surface A webhook URLs: register with the secret shown once, list, get, rotate, delete", async () => {
  await withHttpFixture(async (f) => {
    const res = await api(f, "POST", "/api/webhooks", {
      url: "http://localhost:7000/in",
      events: ["DISBURSEMENT.COMPLETED", "DISBURSEMENT.FAILED"],
    });
    assert.equal(res.status, 201);
    const created = await res.json() as Record<string, unknown>;
    assert.match(String(created.secret), /^whsec_/);
    assert.deepEqual({ ...created, id: "we", secret: "whsec" }, {
      id: "we",
      object: "webhook_endpoint",
      url: "http://localhost:7000/in",
      events: ["DISBURSEMENT.COMPLETED", "DISBURSEMENT.FAILED"],
      description: null,
      status: "enabled",
      disabled_at: null,
      disabled_reason: null,
      failing_since: null,
      ed25519_signatures: false,
      livemode: false,
      created: "2026-01-05T15:00:00.000Z",
      secret: "whsec",
    });
    const all = await api(f, "POST", "/api/webhooks", { url: "http://localhost:7000/all" });
    assert.equal(
      ((await all.json()) as { events: string[] }).events.length,
      17,
      "every EventTypeName by default: the seed's 11, DISBURSEMENT.RETURNED, the approval's three, DISBURSEMENT.FALLBACK_AT_DEADLINE and DISBURSEMENT.ESCHEATED",
    );
    const listed = await (await api(f, "GET", "/api/webhooks")).json() as {
      data: { id: string; secret?: string }[];
    };
    assert.equal(listed.data.length, 2);
    assert.ok(listed.data.every((e) => e.secret === undefined));
    const rotated = await api(f, "POST", `/api/webhooks/${created.id}/rotate-secret`);
    assert.equal(rotated.status, 200);
    assert.notEqual((await rotated.json() as { secret: string }).secret, created.secret);
    // Morgan acts for Beacon: Acme's endpoint is not found there.
    const beaconView = await api(
      f,
      "GET",
      `/api/webhooks/${created.id}`,
      undefined,
      f.cast.bob.keyTest,
      f.cast.beacon.tin,
    );
    assert.equal(beaconView.status, 404);
    assert.equal((await beaconView.json() as { name: string }).name, "RESOURCE_NOT_FOUND");
    assert.equal((await api(f, "DELETE", `/api/webhooks/${created.id}`)).status, 200);
    assert.equal((await api(f, "GET", `/api/webhooks/${created.id}`)).status, 404);
    // /v1 keys do not see Surface A endpoints.
    const v1 = await f.app.request(`/v1/webhooks/${listed.data[1].id}`, {
      headers: { Authorization: `Bearer ${f.cast.acmeAutoKeyTest}` },
    });
    assert.equal(v1.status, 404);
  });
});

Deno.test("Surface A webhook URLs: bad events and URLs are 400 in the seed's format", async () => {
  await withHttpFixture(async (f) => {
    const badEvent = await api(f, "POST", "/api/webhooks", {
      url: "http://localhost:7000/in",
      events: ["disbursement.completed"],
    });
    assert.equal(badEvent.status, 400);
    const record = await badEvent.json() as {
      name: string;
      details: { Field: string; Location: string }[];
    };
    assert.equal(record.name, "VALIDATION_ERROR");
    assert.deepEqual([record.details[0].Field, record.details[0].Location], ["events.0", "body"]);
    const live = await api(
      f,
      "POST",
      "/api/webhooks",
      { url: "http://hooks.example.com/in" },
      f.cast.alice.keyLive,
    );
    assert.equal(live.status, 400);
    assert.deepEqual((await live.json() as { details: unknown[] }).details, [
      { Issue: "a live url must be https", Field: "url", Location: "body" },
    ]);
  });
});
