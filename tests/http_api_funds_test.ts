import assert from "node:assert/strict";
import { basic, type HttpFixture, withHttpFixture } from "./http_fixture.ts";

async function token(f: HttpFixture, key = f.cast.alice.keyTest): Promise<string> {
  const res = await f.app.request("/api/authenticate", {
    method: "POST",
    headers: { Authorization: basic(f.cast.acme.tin, key) },
  });
  return ((await res.json()) as { access_token: string }).access_token;
}

async function api(
  f: HttpFixture,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  key?: string,
) {
  return await f.app.request(path, {
    method,
    headers: {
      Authorization: `Bearer ${await token(f, key)}`,
      "Content-Type": "application/json",
      ...headers,
    },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
}

const ach = {
  payment_method: "ACH",
  description: "monthly top-up",
  large_disbursement: false,
  amount: 2500.5,
};

Deno.test("POST /api/funds: ACH is pending for three business days; a sandbox wire is available at once", async () => {
  await withHttpFixture(async (f) => {
    const res = await api(f, "POST", "/api/funds", ach);
    assert.equal(res.status, 201);
    const body = await res.json() as Record<string, unknown>;
    assert.match(String(body.funding_uuid), /^fund_/);
    assert.deepEqual({ ...body, funding_uuid: "fund" }, {
      funding_uuid: "fund",
      payment_method: "ACH",
      amount: 2500.5,
      description: "monthly top-up",
      large_disbursement: false,
      status: "Pending",
      expected_available_at: "2026-01-08T15:00:00.000Z",
      completed_at: null,
      line: "auto",
      created_at: "2026-01-05T15:00:00.000Z",
    });
    const wire = await (await api(f, "POST", "/api/funds", {
      ...ach,
      payment_method: "WireTransfer",
      amount: 100,
    })).json() as Record<string, unknown>;
    assert.equal(wire.status, "Completed");
    const balance = await (await api(f, "GET", "/api/balance")).json() as Record<string, unknown>;
    assert.deepEqual([balance.line, balance.available, balance.pending, balance.reserved], [
      "auto",
      100,
      2500.5,
      0,
    ]);
    await api(f, "POST", "/api/sandbox/clock/advance", { seconds: 3 * 86_400 });
    const later = await (await api(f, "GET", "/api/balance")).json() as Record<string, unknown>;
    assert.deepEqual([later.available, later.pending], [2600.5, 0]);
  });
});

Deno.test("POST /api/funds: every bad field is a 400 in the seed's error record", async () => {
  await withHttpFixture(async (f) => {
    const cases: [unknown, string, string][] = [
      [
        { ...ach, payment_method: "Check" },
        "payment_method",
        "payment_method must be ACH or WireTransfer",
      ],
      [
        { ...ach, amount: 10.005 },
        "amount",
        "amount must be dollars with at most two decimals and no exponent, got 10.005",
      ],
      [{ ...ach, amount: 0 }, "amount", "amount must be at least $0.01"],
      [
        { ...ach, large_disbursement: "no" },
        "large_disbursement",
        "large_disbursement must be true or false",
      ],
      [{ ...ach, description: "" }, "description", "description must not be empty"],
      [
        { payment_method: "ACH", description: "x", amount: 1 },
        "large_disbursement",
        "large_disbursement is required",
      ],
    ];
    for (const [body, field, issue] of cases) {
      const res = await api(f, "POST", "/api/funds", body);
      assert.equal(res.status, 400, JSON.stringify(body));
      const record = await res.json() as { name: string; details: unknown[] };
      assert.equal(record.name, "VALIDATION_ERROR");
      assert.deepEqual(
        record.details[0],
        { Issue: issue, Field: field, Location: "body" },
        JSON.stringify(body),
      );
    }
    const unknownLine = await api(f, "POST", "/api/funds", { ...ach, line: "marine" });
    assert.equal(unknownLine.status, 400);
    assert.deepEqual((await unknownLine.json() as { details: unknown[] }).details, [
      { Issue: 'the company has no line "marine"', Field: "line", Location: "body" },
    ]);
    const balance = await (await api(f, "GET", "/api/balance")).json() as { pending: number };
    assert.equal(balance.pending, 0, "nothing was funded");
    assert.equal((await api(f, "GET", "/api/balance?line=marine")).status, 400);
  });
});

Deno.test("fundings have their own cap, FUNDING_AMOUNT_MAX_CENTS: a $2.5 M wire is accepted, $99,999,999.99 and one cent past it", async () => {
  await withHttpFixture(async (f) => {
    const wire = { ...ach, payment_method: "WireTransfer", large_disbursement: true };
    const large = await api(f, "POST", "/api/funds", { ...wire, amount: 2_500_000 });
    assert.equal(large.status, 201, await large.clone().text());
    assert.equal((await large.json() as { amount: number }).amount, 2_500_000);
    const atLimit = await api(f, "POST", "/api/funds", { ...ach, amount: 99_999_999.99 });
    assert.equal(atLimit.status, 201, "the largest amount a NACHA entry carries");
    const past = await api(f, "POST", "/api/funds", { ...ach, amount: 100_000_000 });
    assert.equal(past.status, 400);
    assert.deepEqual(await past.json(), {
      name: "VALIDATION_ERROR",
      message: "the request is not valid: amount: amount must be at most $99,999,999.99",
      details: [{
        Issue: "amount must be at most $99,999,999.99",
        Field: "amount",
        Location: "body",
      }],
    });
    const balance = await (await api(f, "GET", "/api/balance")).json() as Record<string, number>;
    assert.deepEqual([balance.available, balance.pending], [2_500_000, 99_999_999.99]);
    const { rows } = await f.deps.databases.test.readClient.execute(
      "SELECT count(*) AS n FROM fundings",
    );
    assert.equal(Number(rows[0].n), 2, "the refused funding wrote nothing");
  });
});

Deno.test("the OpenAPI document states each amount's bounds: fundings to $99,999,999.99, payees to $1,000,000.00", async () => {
  await withHttpFixture(async (f) => {
    type Body = { properties: Record<string, Record<string, unknown>> };
    const doc = await (await f.app.request("/openapi.json")).json() as {
      paths: Record<
        string,
        { post: { requestBody: { content: Record<string, { schema: Body }> } } }
      >;
    };
    const bodyOf = (path: string) =>
      doc.paths[path].post.requestBody.content["application/json"].schema;
    assert.deepEqual(bodyOf("/api/funds").properties.amount, {
      type: "number",
      minimum: 0.01,
      maximum: 99_999_999.99,
      description: "US dollars with at most two decimals, $0.01 to $99,999,999.99.",
    });
    const payee = (bodyOf("/api/disbursements").properties.payees as { items: Body }).items;
    assert.deepEqual(payee.properties.amount, {
      type: "number",
      minimum: 0.01,
      maximum: 1_000_000,
      description: "US dollars with at most two decimals, $0.01 to $1,000,000.00.",
    });
  });
});

Deno.test("FUNDING_AMOUNT_MAX_CENTS is configurable, apart from the per-payee cap", async () => {
  await withHttpFixture(async (f) => {
    const refused = await api(f, "POST", "/api/funds", { ...ach, amount: 500.01 });
    assert.equal(refused.status, 400);
    assert.deepEqual((await refused.json() as { details: unknown[] }).details, [
      { Issue: "amount must be at most $500.00", Field: "amount", Location: "body" },
    ]);
    assert.equal((await api(f, "POST", "/api/funds", { ...ach, amount: 500 })).status, 201);
  }, { FUNDING_AMOUNT_MAX_CENTS: "50000", AMOUNT_MAX_CENTS: "100" });
});

Deno.test("a double-clicked add funds never funds twice: Idempotency-Key and funding_uuid", async () => {
  await withHttpFixture(async (f) => {
    const [first, second] = await Promise.all([
      api(f, "POST", "/api/funds", ach, { "Idempotency-Key": "click-1" }),
      api(f, "POST", "/api/funds", ach, { "Idempotency-Key": "click-1" }),
    ]);
    const statuses = [first.status, second.status].sort();
    assert.ok(statuses[0] === 201 && (statuses[1] === 201 || statuses[1] === 409), `${statuses}`);
    const reused = await api(f, "POST", "/api/funds", { ...ach, amount: 1 }, {
      "Idempotency-Key": "click-1",
    });
    assert.equal(reused.status, 422);
    assert.equal((await reused.json() as { name: string }).name, "IDEMPOTENCY_KEY_REUSED");

    const withUuid = { ...ach, funding_uuid: "F-77" };
    assert.equal((await api(f, "POST", "/api/funds", withUuid)).status, 201);
    const again = await api(f, "POST", "/api/funds", withUuid);
    assert.equal(again.status, 200, "the same funding_uuid and body return the first record");
    assert.equal((await again.json() as { funding_uuid: string }).funding_uuid, "F-77");
    const other = await api(f, "POST", "/api/funds", { ...withUuid, amount: 5 });
    assert.equal(other.status, 409);
    assert.deepEqual(await other.json(), {
      name: "CONFLICT",
      message: "funding_uuid F-77 was used with a different request",
      details: [{
        Issue: "funding_uuid F-77 was used with a different request",
        Field: "funding_uuid",
        Location: "body",
      }],
    });
    const balance = await (await api(f, "GET", "/api/balance")).json() as { pending: number };
    assert.equal(balance.pending, 5001, "two fundings of 2,500.50: the click and F-77");
  });
});

Deno.test("a live wire stays pending until an operator records it", async () => {
  await withHttpFixture(async (f) => {
    const res = await api(
      f,
      "POST",
      "/api/funds",
      { ...ach, payment_method: "WireTransfer" },
      {},
      f.cast.alice.keyLive,
    );
    assert.equal(res.status, 201);
    const body = await res.json() as Record<string, unknown>;
    assert.deepEqual([body.status, body.expected_available_at], ["Pending", null]);
  });
});
