/**
 * pay_by on both surfaces (a documented extension), Simple Payments included: accepted and
 * echoed, the company's default, refused at the edge or against the sandbox clock with each
 * surface's error; and the sandbox clock driving a /v1 payout through its deadline to a mailed
 * check and its completion.
 */
import assert from "node:assert/strict";
import { fundAcmeAuto, type HttpFixture, withHttpFixture } from "./http_fixture.ts";
import { api, payee } from "./api_helpers.ts";

const DAY_SECONDS = 86_400;

async function v1(f: HttpFixture, method: string, path: string, body?: unknown) {
  return await f.app.request(path, {
    method,
    headers: {
      Authorization: `Bearer ${f.cast.acmeAutoKeyTest}`,
      "Content-Type": "application/json",
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function setDeadlines(f: HttpFixture, action: string, days: number | null) {
  await f.deps.databases.test.writer.write((tx) =>
    tx.execute({
      sql: "UPDATE companies SET offer_expiry_action = ?, pay_by_days = ? WHERE id = ?",
      args: [action, days, f.cast.acme.id],
    })
  );
}

const balance = async (f: HttpFixture) =>
  await (await v1(f, "GET", "/v1/ledgers/auto/balance")).json() as Record<string, number>;

Deno.test("/v1: pay_by drives a payee who never chooses to a mailed check at 00:00 UTC of the date, then completed", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 100_000);
    await setDeadlines(f, "fallback", 30);
    const payeeBody = {
      id: "noaction",
      name: "Pat Doe",
      email: "pat@example.test",
      address: { line1: "9 Elm St", city: "Springfield", state: "IL", postal_code: "62701" },
    };
    assert.equal((await v1(f, "POST", "/v1/payees", payeeBody)).status, 201);
    const created = await v1(f, "POST", "/v1/disbursements", {
      amount: 250,
      claim_id: "CLM-35",
      payee: { id: "noaction" },
      modalities: ["ach", "check"],
      pay_by: "2026-01-20",
    });
    assert.equal(created.status, 201);
    const body = await created.json() as { id: string; pay_by: string };
    assert.equal(body.pay_by, "2026-01-20");
    assert.deepEqual([(await balance(f)).available, (await balance(f)).reserved], [750, 250]);

    // The fixture's clock reads 2026-01-05 15:00 UTC; the deadline is 2026-01-20 00:00 UTC.
    const toDeadline = (Date.UTC(2026, 0, 20) - Date.UTC(2026, 0, 5, 15)) / 1000;
    const advance = (seconds: number) =>
      v1(f, "POST", "/v1/sandbox/clock/advance", { seconds }).then((r) => r.status);
    assert.equal(await advance(toDeadline - 1), 200);
    const waiting = await (await v1(f, "GET", `/v1/disbursements/${body.id}`)).json() as {
      status: string;
    };
    assert.equal(waiting.status, "modality_offered");
    assert.equal(await advance(1), 200);
    const fell = await (await v1(f, "GET", `/v1/disbursements/${body.id}`)).json() as {
      status: string;
      modality: string;
      timeline: { status: string; at: string; detail?: string }[];
    };
    // The sandbox pays a check without a check account at once: it is sent in the same instant.
    assert.deepEqual([fell.status, fell.modality], ["funds_sent", "check"]);
    const [fallback, sent] = fell.timeline.slice(-2);
    assert.deepEqual(fallback, {
      status: "modality_selected",
      at: "2026-01-20T00:00:00.000Z",
      detail: "fallback at deadline: a check mailed to the address on file",
    });
    assert.deepEqual([sent.status, sent.at], ["funds_sent", "2026-01-20T00:00:00.000Z"]);
    assert.match(String(sent.detail), /^po_\w+-1$/, "the check rail took its first submission");
    const events = await (await v1(
      f,
      "GET",
      "/v1/events?type=disbursement.fallback_at_deadline",
    )).json() as { data: { type: string; data: Record<string, unknown> }[] };
    assert.equal(events.data.length, 1);
    assert.equal(
      events.data[0].data.reason,
      "fallback at deadline: a check mailed to the address on file",
    );
    assert.deepEqual([(await balance(f)).available, (await balance(f)).reserved], [750, 0]);

    assert.equal(await advance(5 * DAY_SECONDS), 200);
    const paid = await (await v1(f, "GET", `/v1/disbursements/${body.id}`)).json() as {
      status: string;
    };
    assert.equal(paid.status, "completed");
  });
});

Deno.test("pay_by refused: not a date at the edge, or not after today on the sandbox clock, on each surface", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 100_000);
    await v1(f, "POST", "/v1/payees", { id: "noaction", email: "pat@example.test" });
    const create = (payBy: unknown) =>
      v1(f, "POST", "/v1/disbursements", {
        amount: 10,
        claim_id: "CLM-1",
        payee: { id: "noaction" },
        modalities: ["ach"],
        pay_by: payBy,
      });
    const notDate = await create("2026-02-30");
    assert.equal(notDate.status, 400);
    assert.deepEqual(await notDate.json(), {
      type: "/docs/errors#validation_error",
      title: "Bad Request",
      status: 400,
      detail: "the request is not valid: pay_by: pay_by must be a date YYYY-MM-DD",
      code: "validation_error",
      errors: [{ param: "pay_by", message: "pay_by must be a date YYYY-MM-DD" }],
    });
    const today = await create("2026-01-05");
    assert.equal(today.status, 400);
    const message = "pay_by must be after today (2026-01-05); got 2026-01-05";
    assert.deepEqual(await today.json(), {
      type: "/docs/errors#validation_error",
      title: "Bad Request",
      status: 400,
      detail: message,
      code: "validation_error",
      errors: [{ param: "pay_by", message }],
    });
    const far = await create("2027-01-06");
    assert.equal(far.status, 400);
    assert.deepEqual((await far.json() as { errors: unknown }).errors, [{
      param: "pay_by",
      message: "pay_by is at most 365 days ahead (2027-01-05); got 2027-01-06",
    }]);
    assert.deepEqual((await balance(f)).reserved, 0, "nothing was held");

    const apiCreate = (payBy: unknown, uuid: string) =>
      api(f, "POST", "/api/disbursements", {
        disbursement_uuid: uuid,
        large_disbursement: false,
        pay_by: payBy,
        payees: [payee("p-1", 10)],
      });
    const apiNotDate = await apiCreate(20260120, "D-1");
    assert.equal(apiNotDate.status, 400);
    assert.deepEqual(await apiNotDate.json(), {
      name: "VALIDATION_ERROR",
      message: "the request is not valid: pay_by: pay_by must be a string",
      details: [{ Issue: "pay_by must be a string", Field: "pay_by", Location: "body" }],
    });
    const apiPast = await apiCreate("2026-01-04", "D-2");
    assert.equal(apiPast.status, 400);
    const pastMessage = "pay_by must be after today (2026-01-05); got 2026-01-04";
    assert.deepEqual(await apiPast.json(), {
      name: "VALIDATION_ERROR",
      message: pastMessage,
      details: [{ Issue: pastMessage, Field: "pay_by", Location: "body" }],
    });
    const ok = await apiCreate("2026-02-01", "D-3");
    assert.equal(ok.status, 201);
    assert.equal((await ok.json() as { pay_by: string }).pay_by, "2026-02-01");
    const read = await api(f, "GET", "/api/disbursements/D-3");
    assert.equal((await read.json() as { pay_by: string }).pay_by, "2026-02-01");
  });
});

Deno.test("pay_by left out: the company's default from create on both surfaces; none without one", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 100_000);
    const created = await api(f, "POST", "/api/disbursements", {
      disbursement_uuid: "D-none",
      large_disbursement: false,
      payees: [payee("p-1", 10)],
    });
    assert.equal((await created.json() as { pay_by: unknown }).pay_by, null);
    await setDeadlines(f, "fallback", 30);
    const defaulted = await api(f, "POST", "/api/disbursements", {
      disbursement_uuid: "D-default",
      large_disbursement: false,
      payees: [payee("p-1", 10)],
    });
    assert.equal((await defaulted.json() as { pay_by: unknown }).pay_by, "2026-02-04");
    await v1(f, "POST", "/v1/payees", { id: "noaction", email: "pat@example.test" });
    const v1Created = await v1(f, "POST", "/v1/disbursements", {
      amount: 10,
      claim_id: "CLM-2",
      payee: { id: "noaction" },
      modalities: ["ach"],
    });
    assert.equal((await v1Created.json() as { pay_by: unknown }).pay_by, "2026-02-04");
  });
});

Deno.test("Simple Payments take pay_by as disbursements do: echoed on create, replay and read; the company's default when absent; refused at the edge and against the sandbox clock in Surface A's format", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 100_000);
    const create = (uuid: string, payBy?: unknown) =>
      api(f, "POST", "/api/simple-payments", {
        simple_payment_uuid: uuid,
        amount: 10,
        first_name: "Sam",
        last_name: "Payee",
        email: "sam@example.test",
        delivery_options: { email: true, sms: false },
        allowed_payment_method_ids: [1, 2],
        ...(payBy === undefined ? {} : { pay_by: payBy }),
      });
    const payByOf = async (response: Response) =>
      (await response.json() as { pay_by: unknown }).pay_by;

    const given = await create("SP-DATE", "2026-02-01");
    assert.equal(given.status, 201);
    assert.equal(await payByOf(given), "2026-02-01");
    const replayed = await create("SP-DATE", "2026-02-01");
    assert.equal(replayed.status, 200);
    assert.equal(await payByOf(replayed), "2026-02-01");
    assert.equal(await payByOf(await api(f, "GET", "/api/simple-payments/SP-DATE")), "2026-02-01");
    const [row] = (await f.deps.databases.test.readClient.execute(
      "SELECT p.pay_by FROM payouts p JOIN disbursements d ON d.id = p.disbursement_id WHERE d.external_uuid = 'SP-DATE'",
    )).rows;
    assert.equal(row.pay_by, "2026-02-01", "the deadline the payout falls due at");

    assert.equal(await payByOf(await create("SP-NONE")), null);
    await setDeadlines(f, "fallback", 30);
    assert.equal(await payByOf(await create("SP-DEFAULT")), "2026-02-04");

    const notDate = await create("SP-BAD", "2026-02-30");
    assert.equal(notDate.status, 400);
    assert.deepEqual(await notDate.json(), {
      name: "VALIDATION_ERROR",
      message: "the request is not valid: pay_by: pay_by must be a date YYYY-MM-DD",
      details: [{
        Issue: "pay_by must be a date YYYY-MM-DD",
        Field: "pay_by",
        Location: "body",
      }],
    });
    const reserved = (await balance(f)).reserved;
    const today = await create("SP-TODAY", "2026-01-05");
    assert.equal(today.status, 400);
    const message = "pay_by must be after today (2026-01-05); got 2026-01-05";
    assert.deepEqual(await today.json(), {
      name: "VALIDATION_ERROR",
      message,
      details: [{ Issue: message, Field: "pay_by", Location: "body" }],
    });
    const far = await create("SP-FAR", "2027-01-06");
    assert.equal(far.status, 400);
    assert.deepEqual((await far.json() as { details: unknown }).details, [{
      Issue: "pay_by is at most 365 days ahead (2027-01-05); got 2027-01-06",
      Field: "pay_by",
      Location: "body",
    }]);
    assert.equal((await balance(f)).reserved, reserved, "a refused one holds nothing");
  });
});
