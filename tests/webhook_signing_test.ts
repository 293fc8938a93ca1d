import assert from "node:assert/strict";
import { Webhook } from "standardwebhooks";
import { newWebhookSecret } from "../lib/platform/crypto.ts";
import { nextAttemptAt, RETRY_DELAYS_MS } from "../lib/webhooks/schedule.ts";
import { signDelivery, verifySignature } from "../lib/webhooks/signing.ts";

const NOW_S = 1_767_625_200;

Deno.test("X-Signature matches a known HMAC vector and verifies within 5 minutes only", async () => {
  const secret = `whsec_${btoa("k".repeat(32))}`;
  const body = '{"id":"evt_1","type":"disbursement.created"}';
  const headers = await signDelivery({
    eventId: "evt_1",
    body,
    secrets: [secret],
    timestampSeconds: NOW_S,
  });
  // HMAC-SHA256(key = 32 x "k", "1767625200.<body>"), computed independently with openssl dgst -hmac.
  const expected = "4d7015b68ada60ca8791a50fcf509dacb9428d0156042566ef5f9bb487ea54de";
  assert.equal(headers["X-Signature"], `v1=t=${NOW_S},sha256=${expected}`);
  assert.equal(
    await verifySignature({
      header: headers["X-Signature"],
      body,
      secret,
      nowSeconds: NOW_S + 300,
    }),
    true,
  );
  assert.equal(
    await verifySignature({
      header: headers["X-Signature"],
      body,
      secret,
      nowSeconds: NOW_S + 301,
    }),
    false,
  );
  assert.equal(
    await verifySignature({
      header: headers["X-Signature"],
      body: body + " ",
      secret,
      nowSeconds: NOW_S,
    }),
    false,
  );
  assert.equal(
    await verifySignature({
      header: headers["X-Signature"],
      body,
      secret: newWebhookSecret(),
      nowSeconds: NOW_S,
    }),
    false,
  );
});

Deno.test("during a rotation both secrets sign; either verifies", async () => {
  const [oldSecret, newSecret] = [newWebhookSecret(), newWebhookSecret()];
  const headers = await signDelivery({
    eventId: "evt_2",
    body: "{}",
    secrets: [newSecret, oldSecret],
    timestampSeconds: NOW_S,
  });
  assert.equal(headers["X-Signature"].split(",sha256=").length, 3);
  for (const secret of [oldSecret, newSecret]) {
    assert.equal(
      await verifySignature({
        header: headers["X-Signature"],
        body: "{}",
        secret,
        nowSeconds: NOW_S,
      }),
      true,
    );
  }
  assert.equal(headers["webhook-signature"].split(" ").length, 2);
});

Deno.test("the standardwebhooks library verifies 1,000 deliveries; a changed byte or a 301 s old timestamp fails", async () => {
  const secret = newWebhookSecret();
  const verifier = new Webhook(secret);
  const realNow = Math.floor(Date.now() / 1000);
  for (let i = 0; i < 1000; i++) {
    const body = JSON.stringify({
      id: `evt_${i}`,
      type: "disbursement.created",
      created: new Date().toISOString(),
      data: { n: i },
    });
    const headers = await signDelivery({
      eventId: `evt_${i}`,
      body,
      secrets: [secret],
      timestampSeconds: realNow,
    });
    verifier.verify(body, headers);
    if (i % 100 === 0) {
      assert.throws(() => verifier.verify(body.replace(`"n":${i}`, `"n":${i + 1}`), headers));
    }
  }
  const stale = await signDelivery({
    eventId: "evt_old",
    body: "{}",
    secrets: [secret],
    timestampSeconds: realNow - 301,
  });
  assert.throws(() => verifier.verify("{}", stale));
});

Deno.test("retry schedule: roughly 5 s … 12 h with ±10 % jitter, Retry-After within bounds, 24 h cap", () => {
  const at = (attemptsMade: number, random = 0.5, retryAfterSeconds?: number, now = 0) =>
    nextAttemptAt({
      attemptsMade,
      eventCreatedAt: 0,
      now,
      random: () => random,
      retryAfterSeconds,
    });
  assert.deepEqual(RETRY_DELAYS_MS.map((_, i) => at(i + 1)), [
    5_000,
    30_000,
    120_000,
    600_000,
    1_800_000,
    3_600_000,
    10_800_000,
    21_600_000,
    43_200_000,
  ]);
  assert.equal(at(1, 0), 4_500);
  assert.equal(at(1, 1), 5_500);
  assert.equal(at(10), null, "the schedule is exhausted");
  assert.equal(at(9, 0.5, undefined, 50_000_000), null, "past 24 hours after the event");
  assert.equal(at(1, 0.5, 20), 20_000, "Retry-After 20 s is honoured");
  assert.equal(at(1, 0.5, 3600), 30_000, "but not beyond the next step");
  assert.equal(at(2, 0.5, 1), 30_000, "and never sooner than the schedule");
});
