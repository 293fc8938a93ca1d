import assert from "node:assert/strict";
import { basic, fundAcmeAuto, type HttpFixture, withHttpFixture } from "./http_fixture.ts";
import { payee } from "./api_helpers.ts";

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

Deno.test("POST /api/funds: ACH is pending until its debit's return window closes; a sandbox wire is available at once", async () => {
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
      disbursement_uuid: null,
      status: "Pending",
      // Estimated from the schedule: the 10:30 New York same-day cutoff, effective today, clear
      // at 17:00 New York two banking days later; the file's build confirms it.
      expected_available_at: "2026-01-07T22:00:00.000Z",
      completed_at: null,
      line: "auto",
      created_at: "2026-01-05T15:00:00.000Z",
      released_disbursements: [],
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

/** A large disbursement of one payee of `amount` dollars, waiting for funds. */
async function largeDisbursement(f: HttpFixture, uuid: string, amount: number) {
  const res = await api(f, "POST", "/api/disbursements", {
    disbursement_uuid: uuid,
    large_disbursement: true,
    payees: [payee(`payee-${uuid}`, amount)],
  });
  assert.equal(res.status, 201, await res.clone().text());
}

async function payeeStatus(f: HttpFixture, uuid: string): Promise<string> {
  const res = await api(f, "GET", `/api/disbursements/${uuid}/payees/payee-${uuid}`);
  return (await res.json() as { status: string }).status;
}

const wireFor = (uuid: string, amount: number, extra: Record<string, unknown> = {}) => ({
  payment_method: "WireTransfer",
  description: `wire for ${uuid}`,
  large_disbursement: true,
  amount,
  disbursement_uuid: uuid,
  ...extra,
});

Deno.test("a funding names the large disbursement it is for: its credit releases that one first (not the oldest), then others oldest first; GET /api/funds reports what each released", async () => {
  await withHttpFixture(async (f) => {
    await largeDisbursement(f, "D-old", 600);
    f.clock.advance(1_000);
    await largeDisbursement(f, "D-new", 500);
    const wire = await api(f, "POST", "/api/funds", wireFor("D-new", 500, { funding_uuid: "W-1" }));
    assert.equal(wire.status, 201, await wire.clone().text());
    const wireBody = await wire.json() as Record<string, unknown>;
    assert.deepEqual(
      [wireBody.disbursement_uuid, wireBody.status, wireBody.released_disbursements],
      ["D-new", "Completed", [{
        disbursement_uuid: "D-new",
        released_at: "2026-01-05T15:00:01.000Z",
      }]],
    );
    assert.equal(await payeeStatus(f, "D-new"), "Created");
    assert.equal(await payeeStatus(f, "D-old"), "PendingFunds", "the older one waits");

    // An ordinary ACH funding releases the others oldest first when it clears.
    const achFunding = await api(f, "POST", "/api/funds", { ...ach, amount: 700 });
    assert.equal(achFunding.status, 201);
    const achUuid = (await achFunding.json() as { funding_uuid: string }).funding_uuid;
    await api(f, "POST", "/api/sandbox/clock/advance", { seconds: 3 * 86_400 });
    assert.notEqual(await payeeStatus(f, "D-old"), "PendingFunds");

    const listed = await api(f, "GET", "/api/funds");
    assert.equal(listed.status, 200);
    assert.deepEqual(await listed.json(), {
      object: "list",
      data: [
        {
          funding_uuid: achUuid,
          payment_method: "ACH",
          amount: 700,
          description: "monthly top-up",
          large_disbursement: false,
          disbursement_uuid: null,
          status: "Completed",
          // Its debit went in Monday's 10:30 file; cleared Wednesday 17:00 New York.
          expected_available_at: "2026-01-07T22:00:00.000Z",
          completed_at: "2026-01-07T22:00:00.000Z",
          line: "auto",
          created_at: "2026-01-05T15:00:01.000Z",
          released_disbursements: [
            { disbursement_uuid: "D-old", released_at: "2026-01-07T22:00:00.000Z" },
          ],
        },
        {
          funding_uuid: "W-1",
          payment_method: "WireTransfer",
          amount: 500,
          description: "wire for D-new",
          large_disbursement: true,
          disbursement_uuid: "D-new",
          status: "Completed",
          expected_available_at: "2026-01-05T15:00:01.000Z",
          completed_at: "2026-01-05T15:00:01.000Z",
          line: "auto",
          created_at: "2026-01-05T15:00:01.000Z",
          released_disbursements: [
            { disbursement_uuid: "D-new", released_at: "2026-01-05T15:00:01.000Z" },
          ],
        },
      ],
      has_more: false,
    });
    const { rows } = await f.deps.databases.test.readClient.execute(
      `SELECT d.external_uuid, f.funding_uuid, d.released_at FROM disbursements d
         JOIN fundings f ON f.id = d.released_by_funding_id ORDER BY d.rowid`,
    );
    assert.deepEqual(rows.map((r) => [r.external_uuid, r.funding_uuid ?? "ach"]), [
      ["D-old", "ach"],
      ["D-new", "W-1"],
    ]);
  });
});

Deno.test("the money a funding names is not spent on others: when its disbursement does not fit yet, nothing is released", async () => {
  await withHttpFixture(async (f) => {
    await largeDisbursement(f, "D-small", 300);
    f.clock.advance(1_000);
    await largeDisbursement(f, "D-big", 800);
    const wire = await api(f, "POST", "/api/funds", wireFor("D-big", 500));
    assert.equal(wire.status, 201);
    assert.deepEqual((await wire.json() as Record<string, unknown>).released_disbursements, []);
    assert.deepEqual(
      [await payeeStatus(f, "D-small"), await payeeStatus(f, "D-big")],
      ["PendingFunds", "PendingFunds"],
    );
    const rest = await api(f, "POST", "/api/funds", wireFor("D-big", 300, { funding_uuid: "W-2" }));
    assert.deepEqual(
      (await rest.json() as Record<string, unknown>).released_disbursements,
      [{ disbursement_uuid: "D-big", released_at: "2026-01-05T15:00:01.000Z" }],
    );
    assert.equal(await payeeStatus(f, "D-small"), "PendingFunds", "$0 available is left for it");
  });
});

Deno.test("disbursement_uuid on a funding: unknown, another line's, not waiting, or without large_disbursement is refused naming the field, and nothing is funded", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 10_000);
    const normal = await api(f, "POST", "/api/disbursements", {
      disbursement_uuid: "D-paid",
      large_disbursement: false,
      payees: [payee("p-1", 50)],
    });
    assert.equal(normal.status, 201);
    await largeDisbursement(f, "D-wait", 500);
    const database = f.deps.databases.test;
    // A second line, created after the first, so that auto stays the company's first.
    await database.writer.write((tx) =>
      tx.execute({
        sql: `INSERT INTO business_lines (id, company_id, code, created_at)
                VALUES ('line_home', ?, 'home', ?)`,
        args: [f.cast.acme.id, f.clock.now()],
      })
    );
    const cases: [Record<string, unknown>, number, string, string][] = [
      [
        wireFor("D-none", 500),
        400,
        "VALIDATION_ERROR",
        "disbursement_uuid D-none: the company has no such disbursement",
      ],
      [
        wireFor("D-wait", 500, { line: "home" }),
        400,
        "VALIDATION_ERROR",
        "disbursement_uuid D-wait is a disbursement of line auto; this funding is for another line",
      ],
      [
        wireFor("D-paid", 500),
        409,
        "CONFLICT",
        "disbursement_uuid D-paid is not waiting for funds: its payees are Created",
      ],
      [
        wireFor("D-wait", 500, { large_disbursement: false }),
        400,
        "VALIDATION_ERROR",
        "disbursement_uuid names the large disbursement a funding is for: large_disbursement must be true",
      ],
      [wireFor("", 500), 400, "VALIDATION_ERROR", "disbursement_uuid must not be empty"],
    ];
    const count = async () =>
      Number((await database.readClient.execute("SELECT count(*) AS n FROM fundings")).rows[0].n);
    const before = await count();
    for (const [body, status, name, issue] of cases) {
      const res = await api(f, "POST", "/api/funds", body);
      assert.equal(res.status, status, JSON.stringify(body));
      const record = await res.json() as { name: string; details: unknown[] };
      assert.equal(record.name, name, JSON.stringify(body));
      assert.deepEqual(record.details, [{
        Issue: issue,
        Field: "disbursement_uuid",
        Location: "body",
      }]);
    }
    assert.equal(await count(), before, "nothing was funded");
    assert.equal(await payeeStatus(f, "D-wait"), "PendingFunds");
  });
});

Deno.test("GET /api/funds pages newest first with limit and starting_after, filters by ?line=, and shows only the company's own", async () => {
  await withHttpFixture(async (f) => {
    for (const uuid of ["F-1", "F-2", "F-3"]) {
      assert.equal(
        (await api(f, "POST", "/api/funds", { ...ach, funding_uuid: uuid })).status,
        201,
      );
      f.clock.advance(1_000);
    }
    const page = async (query: string) => {
      const res = await api(f, "GET", `/api/funds${query}`);
      assert.equal(res.status, 200, query);
      const body = await res.json() as { data: { funding_uuid: string }[]; has_more: boolean };
      return [body.data.map((d) => d.funding_uuid), body.has_more];
    };
    assert.deepEqual(await page("?limit=2"), [["F-3", "F-2"], true]);
    assert.deepEqual(await page("?limit=2&starting_after=F-2"), [["F-1"], false]);
    assert.deepEqual(await page("?line=auto"), [["F-3", "F-2", "F-1"], false]);
    const errors: [string, string, string][] = [
      ["?limit=0", "limit", "limit must be at least 1"],
      ["?limit=101", "limit", "limit must be at most 100"],
      ["?starting_after=F-9", "starting_after", 'no funding "F-9" to start after'],
      ["?line=marine", "line", 'the company has no line "marine"'],
    ];
    for (const [query, field, issue] of errors) {
      const res = await api(f, "GET", `/api/funds${query}`);
      assert.equal(res.status, 400, query);
      assert.deepEqual((await res.json() as { details: unknown[] }).details, [
        { Issue: issue, Field: field, Location: "query" },
      ]);
    }
    const login = await f.app.request("/api/authenticate", {
      method: "POST",
      headers: { Authorization: basic(f.cast.beacon.tin, f.cast.bob.keyTest) },
    });
    const { access_token } = await login.json() as { access_token: string };
    const beacon = await f.app.request("/api/funds", {
      headers: { Authorization: `Bearer ${access_token}` },
    });
    assert.deepEqual(await beacon.json(), { object: "list", data: [], has_more: false });
  });
});

Deno.test("an ACH funding's expected_available_at is estimated at once from the next cutoff, and corrected when its file is built", async () => {
  await withHttpFixture(async (f) => {
    const fund = async (amount: number) =>
      await (await api(f, "POST", "/api/funds", { ...ach, amount })).json() as Record<
        string,
        unknown
      >;
    const read = async (uuid: unknown) =>
      ((await (await api(f, "GET", "/api/funds")).json() as { data: Record<string, unknown>[] })
        .data.find((funding) => funding.funding_uuid === uuid))!.expected_available_at;
    // Over $1,000,000.00 an entry waits for the next-day cutoff: 17:00 Monday, effective Tuesday.
    const large = await fund(1_500_000);
    assert.equal(large.expected_available_at, "2026-01-08T22:00:00.000Z");
    // Friday 2026-01-09 after the last cutoff: the next is Monday 10:30 (effective Monday).
    await api(f, "POST", "/api/sandbox/clock/advance", {
      seconds: (Date.UTC(2026, 0, 9, 23) - Date.UTC(2026, 0, 5, 15)) / 1000,
    });
    const weekend = await fund(10);
    assert.equal(weekend.expected_available_at, "2026-01-14T22:00:00.000Z");
    // Built at Monday's 10:30 cutoff: the file confirms the estimate.
    await api(f, "POST", "/api/sandbox/clock/advance", {
      seconds: (Date.UTC(2026, 0, 12, 15, 31) - Date.UTC(2026, 0, 9, 23)) / 1000,
    });
    assert.equal(await read(weekend.funding_uuid), "2026-01-14T22:00:00.000Z");
  });
});
