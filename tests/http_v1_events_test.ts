/**
 * GET /v1/events and /v1/events/{id} show what the webhooks carried, and every id a /v1 event
 * carries is readable through /v1 with the same line key: checked against a real receiver on
 * 127.0.0.1 that the dispatcher delivered to.
 */
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { WebhookDispatcher } from "../lib/webhooks/dispatcher.ts";
import { verifyEnvelopeSignature, verifySignature } from "../client/mod.ts";
import { api, payee } from "./api_helpers.ts";
import { fundAcmeAuto, type HttpFixture, withHttpFixture } from "./http_fixture.ts";

interface Delivered {
  readonly body: Record<string, unknown>;
  readonly raw: string;
  readonly header: string;
}

function receiver() {
  const received: Delivered[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      const raw = await request.text();
      received.push({ body: JSON.parse(raw), raw, header: request.headers.get("X-Signature")! });
      return new Response("ok");
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}/hook`,
    received,
    stop: () => server.shutdown(),
  };
}

const dispatcherFor = (f: HttpFixture) =>
  new WebhookDispatcher(f.deps.databases, f.deps.secretBox, f.clock, {
    batchSize: 50,
    endpointsInParallel: 2,
    perEndpointConcurrency: 1,
    timeoutMs: 2_000,
    leaseMs: 30_000,
  });

const v1 = (f: HttpFixture, method: string, path: string, body?: unknown, key?: string) =>
  f.app.request(path, {
    method,
    headers: {
      Authorization: `Bearer ${key ?? f.cast.acmeAutoKeyTest}`,
      "Content-Type": "application/json",
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

type ApiEvent = Record<string, unknown> & { id: string; signature: string | null };

async function listEvents(f: HttpFixture): Promise<ApiEvent[]> {
  const res = await v1(f, "GET", "/v1/events?limit=100");
  assert.equal(res.status, 200);
  return (await res.json() as { data: ApiEvent[] }).data;
}

Deno.test("GET /v1/events and /v1/events/{id} return the body the receiver got, with the latest attempt's signature", async () => {
  const r = receiver();
  try {
    await withHttpFixture(async (f) => {
      await fundAcmeAuto(f, 100_000);
      assert.equal((await v1(f, "POST", "/v1/webhooks", { url: r.url })).status, 201);
      await v1(f, "POST", "/v1/payees", { id: "noaction", email: "pat@example.test" });
      await v1(f, "POST", "/v1/payees", { id: "noaction", phone: "+15555550100" });
      const created = await (await v1(f, "POST", "/v1/disbursements", {
        amount: 12.5,
        claim_id: "CLM-77",
        payee: { id: "noaction" },
        modalities: ["ach", "check"],
        metadata: { policy: "AU-1" },
      })).json() as { id: string };
      assert.equal((await v1(f, "POST", `/v1/disbursements/${created.id}/cancel`)).status, 200);

      const before = await listEvents(f);
      assert.deepEqual(before.map((e) => [e.type, e.signature]), [
        ["disbursement.canceled", null],
        ["disbursement.created", null],
        ["payee.updated", null],
      ], "no attempt yet: no signature");
      const createdEvent = before.find((e) => e.type === "disbursement.created")!;
      assert.deepEqual(createdEvent, {
        id: createdEvent.id,
        object: "event",
        type: "disbursement.created",
        created: "2026-01-05T15:00:00.000Z",
        data: {
          id: created.id,
          object: "disbursement",
          status: "created",
          amount: 12.5,
          currency: "USD",
          claim_id: "CLM-77",
          payee: { id: "noaction" },
          modality: null,
          reason: null,
        },
        signature: null,
        sequence: 1,
      }, "the webhook's data: dollars, the /v1 id, no payout, ledger or e-mail");

      assert.equal(await dispatcherFor(f).sweep(), 3);
      assert.equal(r.received.length, 3);
      for (const delivered of r.received) {
        const id = String(delivered.body.id);
        const one = await v1(f, "GET", `/v1/events/${id}`);
        assert.equal(one.status, 200);
        assert.deepEqual(
          await one.json(),
          { ...delivered.body, object: "event" },
          `${delivered.body.type}: the receiver's body, as the events API shows it`,
        );
      }
      const listed = await listEvents(f);
      assert.deepEqual(
        listed.map(({ object: _object, ...event }) => event),
        [...r.received].reverse().map((d) => d.body),
        "the list shows the same events, newest first",
      );

      // A replay is attempted again, signed afresh at a later time: its signature is shown.
      f.clock.advance(60_000);
      const replay = await v1(f, "POST", `/v1/events/${createdEvent.id}/replay`);
      assert.equal(replay.status, 202);
      assert.equal(await dispatcherFor(f).sweep(), 1);
      const latest = r.received.at(-1)!;
      assert.equal(latest.body.id, createdEvent.id);
      const first = r.received.find((d) => d.body.id === createdEvent.id)!;
      assert.notEqual(latest.body.signature, first.body.signature);
      const shown = await (await v1(f, "GET", `/v1/events/${createdEvent.id}`)).json() as ApiEvent;
      assert.equal(shown.signature, latest.body.signature, "the latest attempt's signature");
    });
  } finally {
    await r.stop();
  }
});

Deno.test("a /v1 event about a Surface A payout carries an id GET /v1/disbursements/{id} reads with the same line key", async () => {
  const r = receiver();
  try {
    await withHttpFixture(async (f) => {
      await fundAcmeAuto(f, 100_000);
      assert.equal((await v1(f, "POST", "/v1/webhooks", { url: r.url })).status, 201);
      const made = await api(f, "POST", "/api/disbursements", {
        disbursement_uuid: "claim-1001",
        large_disbursement: false,
        payees: [payee("noaction", 40, { allowed_payment_method_ids: [1] })],
      });
      assert.equal(made.status, 201);
      const simple = await api(f, "POST", "/api/simple-payments", {
        simple_payment_uuid: "sp-9",
        amount: 15,
        first_name: "Sam",
        last_name: "Roe",
        email: "sam@example.test",
        delivery_options: { email: true, sms: false },
        allowed_payment_method_ids: [7],
      });
      assert.equal(simple.status, 201);
      const canceled = await api(f, "POST", "/api/disbursements/claim-1001/payees/noaction/cancel");
      assert.equal(canceled.status, 200);

      assert.equal(await dispatcherFor(f).sweep(), 3);
      const bodies = r.received.map((d) =>
        d.body as { type: string; data: Record<string, unknown> }
      );
      assert.deepEqual(bodies.map((b) => b.type).sort(), [
        "disbursement.canceled",
        "disbursement.created",
        "disbursement.created",
      ]);
      const { rows } = await f.deps.databases.test.readClient.execute(
        `SELECT p.id, d.external_uuid FROM payouts p JOIN disbursements d ON d.id = p.disbursement_id
          ORDER BY p.rowid`,
      );
      const payoutOf = Object.fromEntries(rows.map((row) => [row.external_uuid, String(row.id)]));
      for (const body of bodies) {
        const id = String(body.data.id);
        assert.ok(id !== "claim-1001" && id !== "sp-9", `${id}: not the Surface A uuid`);
        const read = await v1(f, "GET", `/v1/disbursements/${id}`);
        assert.equal(read.status, 200, `${body.type} ${id} is readable through /v1`);
        const disbursement = await read.json() as Record<string, unknown>;
        for (const key of ["id", "status", "amount", "claim_id", "payee", "modality"]) {
          if (key === "status" && body.type === "disbursement.created") continue;
          assert.deepEqual(disbursement[key], body.data[key], `${body.type}: ${key}`);
        }
        const other = await v1(
          f,
          "GET",
          `/v1/disbursements/${id}`,
          undefined,
          f.cast.beaconKeyTest,
        );
        assert.equal(other.status, 404, "another company's key does not read it");
      }
      const claim = await (await v1(f, "GET", `/v1/disbursements/${payoutOf["claim-1001"]}`))
        .json() as Record<string, unknown>;
      const { timeline, ...rest } = claim;
      assert.deepEqual(rest, {
        id: payoutOf["claim-1001"],
        object: "disbursement",
        status: "canceled",
        amount: 40,
        currency: "USD",
        claim_id: "claim-1001",
        payee: null,
        modalities: ["ach"],
        modality: null,
        metadata: {},
        pay_by: null,
        network: null,
        line: "auto",
        livemode: false,
        created: "2026-01-05T15:00:00.000Z",
        payee_url: null,
      });
      assert.deepEqual(
        (timeline as { status: string }[]).map((step) => step.status),
        ["created", "canceled"],
      );
      const spCreated = bodies.find((b) => b.data.id === payoutOf["sp-9"])!;
      assert.equal(spCreated.data.claim_id, "sp-9", "a simple payment's own uuid is its claim id");
      // The list stays the /v1-created disbursements; the id reads them one by one.
      const list = await (await v1(f, "GET", "/v1/disbursements")).json() as { data: unknown[] };
      assert.deepEqual(list.data, []);
    });
  } finally {
    await r.stop();
  }
});

/** A /v1 webhook body as the contract writes it. */
interface V1Body {
  readonly id: string;
  readonly type: string;
  readonly created: string;
  readonly data: Record<string, unknown>;
  readonly signature: string;
  readonly sequence: number | null;
}

/** HMAC-SHA256 hex under the 32 bytes a whsec_ secret encodes, written from the contract's words. */
const hmacHex = (secret: string, message: string) =>
  createHmac("sha256", Uint8Array.from(atob(secret.slice(6)), (c) => c.charCodeAt(0)))
    .update(message).digest("hex");

Deno.test("a /v1 body carries the envelope's signature, with X-Signature's timestamp, and each payout's sequence", async () => {
  const r = receiver();
  try {
    await withHttpFixture(async (f) => {
      await fundAcmeAuto(f, 100_000);
      const endpoint = await (await v1(f, "POST", "/v1/webhooks", { url: r.url }))
        .json() as { secret: string };
      await v1(f, "POST", "/v1/payees", { id: "noaction", email: "pat@example.test" });
      await v1(f, "POST", "/v1/payees", { id: "noaction", phone: "+15555550100" });
      const created = await (await v1(f, "POST", "/v1/disbursements", {
        amount: 12.5,
        claim_id: "CLM-78",
        payee: { id: "noaction" },
        modalities: ["ach"],
      })).json() as { id: string };
      assert.equal((await v1(f, "POST", `/v1/disbursements/${created.id}/cancel`)).status, 200);
      assert.equal(await dispatcherFor(f).sweep(), 3);

      const bodies = r.received.map((d) => ({ ...d, body: d.body as unknown as V1Body }));
      const byType = new Map(bodies.map((d) => [d.body.type as string, d]));
      for (const d of bodies) {
        assert.deepEqual(
          Object.keys(d.body),
          ["id", "type", "created", "data", "signature", "sequence"],
          `${d.body.type}: the envelope, then signature and sequence`,
        );
        const [, ts, hex] = /^v1=t=(\d+),sha256=([0-9a-f]{64})$/.exec(d.body.signature)!;
        assert.equal(d.header.split(",")[0], `v1=t=${ts}`, "the same timestamp as X-Signature");
        const { id, type, created, data } = d.body;
        assert.equal(
          hex,
          hmacHex(endpoint.secret, `${ts}.${JSON.stringify({ id, type, created, data })}`),
        );
        assert.ok(
          await verifyEnvelopeSignature({
            event: d.body,
            secret: endpoint.secret,
            nowSeconds: Number(ts),
          }),
          "the client's helper verifies it",
        );
        assert.ok(
          await verifySignature({
            header: d.header,
            body: d.raw,
            secret: endpoint.secret,
            nowSeconds: Number(ts),
          }),
          "X-Signature still signs the whole raw body",
        );
        assert.equal(
          await verifyEnvelopeSignature({
            event: { ...d.body, data: { ...d.body.data, amount: 1 } },
            secret: endpoint.secret,
            nowSeconds: Number(ts),
          }),
          false,
          "an altered envelope fails",
        );
      }
      assert.equal(byType.get("payee.updated")!.body.sequence, null, "no payout: no sequence");
      assert.equal(byType.get("disbursement.created")!.body.sequence, 1);
      assert.equal(byType.get("disbursement.canceled")!.body.sequence, 2);

      // The events API shows the same body, with the latest attempt's body signature.
      const shown =
        await (await v1(f, "GET", `/v1/events/${byType.get("disbursement.canceled")!.body.id}`))
          .json();
      assert.deepEqual(shown, { ...byType.get("disbursement.canceled")!.body, object: "event" });
    });
  } finally {
    await r.stop();
  }
});

Deno.test("a Surface A payload carries the payout's sequence in commit order", async () => {
  const r = receiver();
  try {
    await withHttpFixture(async (f) => {
      await fundAcmeAuto(f, 100_000);
      assert.equal((await api(f, "POST", "/api/webhooks", { url: r.url })).status, 201);
      const created = await api(f, "POST", "/api/disbursements", {
        disbursement_uuid: "D-SEQ",
        large_disbursement: false,
        payees: [payee("noaction", 10), payee("other", 20)],
      });
      assert.equal(created.status, 201);
      assert.equal(
        (await api(f, "POST", "/api/disbursements/D-SEQ/payees/noaction/cancel")).status,
        200,
      );
      assert.equal(await dispatcherFor(f).sweep(), 3);
      const payloads = r.received.map((d) => JSON.parse(d.raw).webhookTrigger.payload);
      const seen = payloads
        .map((p) => [p.DisbursementPayeeUUID, p.EventTypeName, p.sequence])
        .sort((a, b) => `${a[0]}${a[2]}`.localeCompare(`${b[0]}${b[2]}`));
      assert.deepEqual(seen, [
        ["noaction", "DISBURSEMENT.CREATED", 1],
        ["noaction", "DISBURSEMENT.CANCELED", 2],
        ["other", "DISBURSEMENT.CREATED", 1],
      ]);
    });
  } finally {
    await r.stop();
  }
});
