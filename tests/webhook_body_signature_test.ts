/**
 * What a webhook body carries beyond its event: on /v1 the `signature` of the envelope
 * (`v1=t=<ts>,sha256=<hex>` over `<ts>.<JSON of {id, type, created, data}>`, the same <ts> as
 * X-Signature), and on both surfaces the payout's `sequence` (1, 2, … in commit order; null for an
 * event about no payout). Checked against a real receiver on 127.0.0.1.
 */
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { WebhookDispatcher } from "../lib/webhooks/dispatcher.ts";
import { verifyEnvelopeSignature, verifySignature } from "../client/mod.ts";
import { api, payee } from "./api_helpers.ts";
import { fundAcmeAuto, type HttpFixture, withHttpFixture } from "./http_fixture.ts";

interface Delivered {
  readonly path: string;
  readonly raw: string;
  readonly header: string;
}

function receiver() {
  const received: Delivered[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      received.push({
        path: new URL(request.url).pathname,
        raw: await request.text(),
        header: request.headers.get("X-Signature")!,
      });
      return new Response("ok");
    },
  );
  return {
    url: (path: string) => `http://127.0.0.1:${server.addr.port}${path}`,
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

const v1 = (f: HttpFixture, method: string, path: string, body?: unknown) =>
  f.app.request(path, {
    method,
    headers: {
      Authorization: `Bearer ${f.cast.acmeAutoKeyTest}`,
      "Content-Type": "application/json",
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

/** HMAC-SHA256 hex under the 32 bytes a whsec_ secret encodes, written from the contract's words. */
const hmacHex = (secret: string, message: string) =>
  createHmac("sha256", Uint8Array.from(atob(secret.slice(6)), (c) => c.charCodeAt(0)))
    .update(message).digest("hex");

Deno.test("a /v1 body carries the envelope's signature, with X-Signature's timestamp, and each payout's sequence", async () => {
  const r = receiver();
  try {
    await withHttpFixture(async (f) => {
      await fundAcmeAuto(f, 100_000);
      const endpoint = await (await v1(f, "POST", "/v1/webhooks", { url: r.url("/v1") }))
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

      const bodies = r.received.map((d) => ({ ...d, body: JSON.parse(d.raw) }));
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
      assert.equal((await api(f, "POST", "/api/webhooks", { url: r.url("/api") })).status, 201);
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
