import assert from "node:assert/strict";
import { readLineBalances } from "../lib/ledger/store.ts";
import { surfaceAEnvelope } from "../lib/webhooks/payloads.ts";
import { api, asBeacon } from "./api_helpers.ts";
import { fundAcmeAuto, withHttpFixture } from "./http_fixture.ts";

const simplePayment = (uuid: string, extra: Record<string, unknown> = {}) => ({
  simple_payment_uuid: uuid,
  amount: 42.5,
  first_name: "Sam",
  last_name: "Payee",
  email: "sam@example.test",
  phone: "+15555550123",
  delivery_options: { email: true, sms: false },
  memo: "Refund of premium",
  allowed_payment_method_ids: [6, 7],
  ...extra,
});

Deno.test("simple payment: 201 record, held at once, offered with a link; same body 200, other 409", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 10_000);
    const res = await api(f, "POST", "/api/simple-payments", simplePayment("SP-1"));
    assert.equal(res.status, 201);
    const record = await res.json();
    assert.deepEqual(record, {
      simple_payment_uuid: "SP-1",
      amount: 42.5,
      first_name: "Sam",
      last_name: "Payee",
      email: "sam@example.test",
      phone: "+15555550123",
      delivery_options: { email: true, sms: false },
      memo: "Refund of premium",
      allowed_payment_method_ids: [6, 7],
      pay_by: null,
      status: "Created",
      status_id: 1,
      link: { state: "not_sent", expires_at: null },
      created_at: "2026-01-05 15:00:00",
    });
    const balances = await readLineBalances(
      f.deps.databases.test.readClient,
      f.cast.acme.autoLineId,
    );
    assert.deepEqual([balances.available, balances.reserved], [10_000 - 4_250, 4_250]);

    const again = await api(f, "POST", "/api/simple-payments", simplePayment("SP-1"));
    assert.equal(again.status, 200);
    assert.deepEqual(await again.json(), record);
    const other = await api(
      f,
      "POST",
      "/api/simple-payments",
      simplePayment("SP-1", { amount: 1 }),
    );
    assert.equal(other.status, 409);
    assert.deepEqual(await other.json(), {
      name: "CONFLICT",
      message: "simple_payment_uuid SP-1 already exists with a different request",
      details: [{ Issue: "already used", Field: "simple_payment_uuid", Location: "body" }],
    });
    assert.equal(
      (await readLineBalances(f.deps.databases.test.readClient, f.cast.acme.autoLineId)).reserved,
      4_250,
      "held once",
    );

    await api(f, "POST", "/api/sandbox/clock/advance", { seconds: 60 });
    const fetched = await (await api(f, "GET", "/api/simple-payments/SP-1")).json() as Record<
      string,
      unknown
    >;
    assert.equal(fetched.status, "PendingPaymentMethodSelection");
    // contract §9: portal links live 30 days (the offer itself lives 90).
    assert.deepEqual(fetched.link, { state: "sent", expires_at: "2026-02-04 15:00:00" });
    const { rows } = await f.deps.databases.test.readClient.execute(
      "SELECT subject FROM notifications WHERE recipient = 'sam@example.test'",
    );
    assert.deepEqual(rows.map((r) => r.subject), ["Acme Mutual has a payment for you"]);

    const { rows: events } = await f.deps.databases.test.readClient.execute(
      "SELECT id, event_type_id, reason, data, created_at FROM events ORDER BY rowid LIMIT 1",
    );
    const payload = surfaceAEnvelope({
      id: String(events[0].id),
      type: null,
      eventTypeId: Number(events[0].event_type_id),
      reason: null,
      data: JSON.parse(String(events[0].data)),
      createdAt: Number(events[0].created_at),
      company: { name: "Acme Mutual", tin: f.cast.acme.tin },
    }) as { webhookTrigger: { payload: Record<string, unknown> } };
    assert.equal(payload.webhookTrigger.payload.PaymentType, "SIMPLE_PAYMENT");
    assert.equal(payload.webhookTrigger.payload.SimplePaymentUUID, "SP-1");
  });
});

Deno.test("simple payment refusals: each bad field 400, short funds 409, another company 404", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 1_000);
    const cases: [Record<string, unknown>, string, string][] = [
      [simplePayment("S", { amount: 0 }), "amount", "amount must be at least $0.01"],
      [
        simplePayment("S", { allowed_payment_method_ids: [0] }),
        "allowed_payment_method_ids.0",
        "each payment method id must be at least 1",
      ],
      [
        simplePayment("S", { allowed_payment_method_ids: [] }),
        "allowed_payment_method_ids",
        "allowed_payment_method_ids needs at least one id",
      ],
      [
        simplePayment("S", { email: "not-an-email" }),
        "email",
        "email is not a valid e-mail address",
      ],
      [
        simplePayment("S", { email: null }),
        "email",
        "email is required when delivery_options.email is true",
      ],
      [
        simplePayment("S", { delivery_options: { email: false, sms: true }, phone: null }),
        "phone",
        "phone is required when delivery_options.sms is true",
      ],
      [simplePayment("S", { memo: "m".repeat(256) }), "memo", "memo is at most 255 characters"],
      [simplePayment(""), "simple_payment_uuid", "simple_payment_uuid must not be empty"],
      [simplePayment("S", { line: "boat" }), "line", 'the company has no line "boat"'],
    ];
    for (const [body, field, issue] of cases) {
      const res = await api(f, "POST", "/api/simple-payments", body);
      assert.equal(res.status, 400, field);
      const record = await res.json() as { name: string; details: unknown[] };
      assert.equal(record.name, "VALIDATION_ERROR");
      assert.deepEqual(record.details[0], { Issue: issue, Field: field, Location: "body" }, field);
    }
    const short = await api(
      f,
      "POST",
      "/api/simple-payments",
      simplePayment("S", { amount: 10.01 }),
    );
    assert.equal(short.status, 409);
    assert.deepEqual(await short.json(), {
      name: "CONFLICT",
      message: "available is $10.00; this disbursement needs $10.01 (short by $0.01)",
      details: [{
        Issue: "available is $10.00; this disbursement needs $10.01 (short by $0.01)",
        Field: "amount",
        Location: "body",
      }],
    });
    assert.equal(
      (await api(f, "POST", "/api/simple-payments", simplePayment("S", { amount: 10 }))).status,
      201,
    );
    const foreign = await api(f, "GET", "/api/simple-payments/S", undefined, asBeacon(f));
    assert.equal(foreign.status, 404);
    assert.equal((await foreign.json() as { name: string }).name, "RESOURCE_NOT_FOUND");
  });
});
