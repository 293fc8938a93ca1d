/** Surface B payees and disbursements through app.request: exact bodies, every bad field, isolation. */
import assert from "node:assert/strict";
import { fundAcmeAuto, type HttpFixture, withHttpFixture } from "./http_fixture.ts";

const NO_LIMIT = { RATE_LIMIT_RPS: "0" };

function call(
  f: HttpFixture,
  method: string,
  path: string,
  body?: unknown,
  options: { key?: string; idempotencyKey?: string } = {},
) {
  return f.app.request(path, {
    method,
    headers: {
      Authorization: `Bearer ${options.key ?? f.cast.acmeAutoKeyTest}`,
      "Content-Type": "application/json",
      ...(options.idempotencyKey ? { "Idempotency-Key": options.idempotencyKey } : {}),
    },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
}

const created = new Date(Date.UTC(2026, 0, 5, 15)).toISOString();

Deno.test("POST /v1/payees: 201 created, 200 unchanged, 200 updated with a payee.updated event", async () => {
  await withHttpFixture(async (f) => {
    const first = await call(f, "POST", "/v1/payees", {
      id: "claimant-7",
      name: "Pat Doe",
      email: "pat@example.test",
    });
    assert.equal(first.status, 201);
    assert.deepEqual(await first.json(), {
      id: "claimant-7",
      object: "payee",
      name: "Pat Doe",
      email: "pat@example.test",
      phone: null,
      language: "en",
      contact_channel: "email",
      modality_defaults: [],
      address: null,
      type: "individual",
      line: "auto",
      livemode: false,
      created,
      updated: created,
    });
    const same = await call(f, "POST", "/v1/payees", {
      id: "claimant-7",
      email: "pat@example.test",
    });
    assert.equal(same.status, 200);
    const updated = await call(f, "POST", "/v1/payees", {
      id: "claimant-7",
      phone: "+15555550100",
      contact_channel: "sms",
      modality_defaults: ["instant", "ach"],
    });
    assert.equal(updated.status, 200);
    const body = await updated.json() as Record<string, unknown>;
    assert.deepEqual([body.name, body.phone, body.contact_channel, body.modality_defaults], [
      "Pat Doe",
      "+15555550100",
      "sms",
      ["instant_deposit", "ach"],
    ]);
    const { rows } = await f.deps.databases.test.readClient.execute(
      "SELECT type, data FROM events WHERE type = 'payee.updated'",
    );
    assert.deepEqual(rows.map((r) => [r.type, JSON.parse(String(r.data))]), [
      ["payee.updated", {
        payee_id: "claimant-7",
        changed: ["phone", "contact_channel", "modality_defaults"],
      }],
    ]);
    const fetched = await call(f, "GET", "/v1/payees/claimant-7");
    assert.equal(fetched.status, 200);
    assert.equal((await fetched.json() as { phone: string }).phone, "+15555550100");
  }, NO_LIMIT);
});

Deno.test("POST /v1/payees: every bad field is a 400 naming it; nothing is stored", async () => {
  await withHttpFixture(async (f) => {
    const cases: [unknown, string, string][] = [
      [{}, "id", "id is required"],
      [{ id: "" }, "id", "id must not be empty"],
      [{ id: "x".repeat(256) }, "id", "id is at most 255 characters"],
      [{ id: "has space" }, "id", "id may hold letters, digits and _ . + @ : -"],
      [{ id: "p1", email: "nope" }, "email", "email is not a valid e-mail address"],
      [
        { id: "p1", phone: "12" },
        "phone",
        "phone must be a phone number: 10 digits such as (512) 555-0100, or + and a country code",
      ],
      [{ id: "p1", language: "fr" }, "language", "language must be en or es"],
      [
        { id: "p1", contact_channel: "fax" },
        "contact_channel",
        "contact_channel must be email or sms",
      ],
      [
        { id: "p1", modality_defaults: ["cash"] },
        "modality_defaults.0",
        "each modality must be one of ach, check, vcc, instant_deposit, instant, digital_check, venmo, paypal",
      ],
      [
        {
          id: "p1",
          address: { line1: "1 Main", city: "Springfield", state: "Ill", postal_code: "62701" },
        },
        "address.state",
        "address.state is a two-letter code such as TX",
      ],
      [{ id: "p1", name: "n".repeat(256) }, "name", "name is at most 255 characters"],
    ];
    for (const [body, param, message] of cases) {
      const res = await call(f, "POST", "/v1/payees", body);
      assert.equal(res.status, 400, JSON.stringify(body));
      const problem = await res.json() as {
        code: string;
        errors: { param: string; message: string }[];
      };
      assert.equal(problem.code, "validation_error");
      assert.deepEqual(problem.errors[0], { param, message }, JSON.stringify(body));
    }
    const sms = await call(f, "POST", "/v1/payees", {
      id: "p1",
      email: "p@x.test",
      contact_channel: "sms",
    });
    assert.equal(sms.status, 400);
    assert.deepEqual((await sms.json() as { errors: unknown }).errors, [{
      param: "phone",
      message: "required when contact_channel is sms",
    }]);
    const { rows } = await f.deps.databases.test.readClient.execute(
      "SELECT count(*) AS n FROM payees",
    );
    assert.equal(Number(rows[0].n), 0);
  }, NO_LIMIT);
});

Deno.test("POST /v1/disbursements: 201 with the disbursement object and a balanced hold", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 100_000);
    await call(f, "POST", "/v1/payees", { id: "noaction", email: "noaction@example.test" });
    const res = await call(f, "POST", "/v1/disbursements", {
      amount: 250.5,
      claim_id: "CLM-1",
      payee: { id: "noaction" },
      modalities: ["ach", "instant", "ach"],
      metadata: { adjuster: "A-9" },
    });
    assert.equal(res.status, 201);
    const body = await res.json() as Record<string, unknown>;
    assert.match(String(body.id), /^dsb_/);
    assert.deepEqual({ ...body, id: "dsb" }, {
      id: "dsb",
      object: "disbursement",
      status: "created",
      amount: 250.5,
      currency: "USD",
      claim_id: "CLM-1",
      payee: { id: "noaction" },
      modalities: ["ach", "instant_deposit"],
      modality: null,
      metadata: { adjuster: "A-9" },
      // The fixture's companies predate the deadline setting: no default pay_by.
      pay_by: null,
      network: null,
      line: "auto",
      livemode: false,
      created,
      payee_url: `http://127.0.0.1:8000/pay/${body.id}`,
      timeline: [{ status: "created", at: created }],
    });
    const balance = await (await call(f, "GET", "/v1/ledgers/auto/balance")).json() as Record<
      string,
      number
    >;
    assert.deepEqual([balance.available, balance.reserved], [749.5, 250.5]);
    const fetched = await call(f, "GET", `/v1/disbursements/${body.id}`);
    assert.deepEqual(await fetched.json(), body);
  }, NO_LIMIT);
});

Deno.test("POST /v1/disbursements answers exactly what a GET then reads: pay_by, metadata, and a payout a rule held", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 100_000);
    await call(f, "POST", "/v1/payees", { id: "noaction", email: "noaction@example.test" });
    const answerAndRead = async (body: Record<string, unknown>) => {
      const res = await call(f, "POST", "/v1/disbursements", {
        payee: { id: "noaction" },
        ...body,
      });
      assert.equal(res.status, 201);
      const answer = await res.text();
      const id = (JSON.parse(answer) as { id: string }).id;
      const read = await (await call(f, "GET", `/v1/disbursements/${id}`)).text();
      assert.equal(read, answer, "the same object, in the same order");
      return JSON.parse(answer) as Record<string, unknown>;
    };
    const answered = await answerAndRead({
      amount: 12,
      claim_id: "CLM-2",
      modalities: ["check"],
      metadata: { z: "last", a: "first" },
      pay_by: "2026-03-31",
    });
    assert.deepEqual(
      [answered.status, answered.metadata, answered.pay_by, answered.timeline],
      ["created", { z: "last", a: "first" }, "2026-03-31", [{ status: "created", at: created }]],
    );

    await f.deps.databases.test.writer.write((tx) =>
      tx.execute({
        sql: `INSERT INTO payment_approval_rules (id, company_id, threshold_cents, created_at)
              VALUES ('par_1', ?, 1000, ?)`,
        args: [f.cast.acme.id, f.clock.now()],
      })
    );
    const held = await answerAndRead({ amount: 10.01, claim_id: "CLM-3", modalities: ["ach"] });
    assert.deepEqual([held.status, held.timeline], ["pending_approval", [
      { status: "created", at: created },
      {
        status: "pending_approval",
        at: created,
        detail: "over the approval threshold of 1000 cents",
      },
    ]]);
  }, NO_LIMIT);
});

Deno.test("POST /v1/disbursements without modalities uses the payee's modality_defaults; 400 naming modalities when both are missing", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 100_000);
    await call(f, "POST", "/v1/payees", {
      id: "noaction",
      email: "noaction@example.test",
      modality_defaults: ["check", "instant", "check"],
    });
    await call(f, "POST", "/v1/payees", { id: "bare", email: "bare@example.test" });
    const create = (payee: string, extra: Record<string, unknown> = {}) =>
      call(f, "POST", "/v1/disbursements", {
        amount: 10,
        claim_id: "CLM-D",
        payee: { id: payee },
        ...extra,
      });

    const byDefault = await create("noaction");
    assert.equal(byDefault.status, 201);
    const body = await byDefault.json() as { id: string; modalities: string[] };
    assert.deepEqual(body.modalities, ["check", "instant_deposit"]);
    const fetched = await call(f, "GET", `/v1/disbursements/${body.id}`);
    assert.deepEqual((await fetched.json() as { modalities: string[] }).modalities, [
      "check",
      "instant_deposit",
    ]);
    const named = await create("noaction", { modalities: ["ach"] });
    assert.equal(named.status, 201);
    assert.deepEqual((await named.json() as { modalities: string[] }).modalities, ["ach"]);

    const read = f.deps.databases.test.readClient;
    const count = async () =>
      Number((await read.execute("SELECT count(*) AS n FROM payouts")).rows[0].n);
    const before = await count();
    const balance = async () => await (await call(f, "GET", "/v1/ledgers/auto/balance")).json();
    const held = await balance();
    const missing = await create("bare");
    assert.equal(missing.status, 400);
    assert.deepEqual(await missing.json(), {
      type: "/docs/errors#validation_error",
      title: "Bad Request",
      status: 400,
      detail: "modalities is required: payee bare has no modality_defaults",
      code: "validation_error",
      errors: [{
        param: "modalities",
        message: "modalities is required: payee bare has no modality_defaults",
      }],
    });
    assert.equal(await count(), before, "nothing was created");
    assert.deepEqual(await balance(), held, "nothing was held");
    // Defaults emptied later are missing too; an explicit empty list stays a 400 of its own.
    await call(f, "POST", "/v1/payees", { id: "noaction", modality_defaults: [] });
    assert.equal((await create("noaction")).status, 400);
    const empty = await create("noaction", { modalities: [] });
    assert.deepEqual((await empty.json() as { errors: unknown[] }).errors, [{
      param: "modalities",
      message: "modalities needs at least one modality",
    }]);
  }, NO_LIMIT);
});

Deno.test("POST /v1/disbursements: every bad field is a 400 naming it; refusals by rule are 400/409", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 10_000);
    await call(f, "POST", "/v1/payees", { id: "p1", email: "p1@example.test" });
    const valid = { amount: 10, claim_id: "C", payee: { id: "p1" }, modalities: ["ach"] };
    const cases: [string, string, string][] = [
      [
        '{"amount": 10.005, "claim_id": "C", "payee": {"id": "p1"}, "modalities": ["ach"]}',
        "amount",
        "amount must be dollars with at most two decimals and no exponent, got 10.005",
      ],
      [
        '{"amount": 1e2, "claim_id": "C", "payee": {"id": "p1"}, "modalities": ["ach"]}',
        "amount",
        "amount must be dollars with at most two decimals and no exponent, got 1e2",
      ],
      [JSON.stringify({ ...valid, amount: 0 }), "amount", "amount must be at least $0.01"],
      [
        JSON.stringify({ ...valid, amount: -5 }),
        "amount",
        "amount must be positive: at least $0.01, got -5",
      ],
      [
        JSON.stringify({ ...valid, amount: 1000000.01 }),
        "amount",
        "amount must be at most $1,000,000.00",
      ],
      [JSON.stringify({ ...valid, amount: "10" }), "amount", "amount must be a number"],
      [JSON.stringify({ ...valid, claim_id: "" }), "claim_id", "claim_id must not be empty"],
      [
        JSON.stringify({ ...valid, claim_id: "c".repeat(256) }),
        "claim_id",
        "claim_id is at most 255 characters",
      ],
      [JSON.stringify({ ...valid, payee: "p1" }), "payee", "payee must be an object"],
      [JSON.stringify({ ...valid, payee: {} }), "payee.id", "payee.id is required"],
      [
        JSON.stringify({ amount: 1, payee: { id: "p1" }, modalities: ["ach"] }),
        "claim_id",
        "claim_id is required",
      ],
      [
        JSON.stringify({ ...valid, modalities: [] }),
        "modalities",
        "modalities needs at least one modality",
      ],
      [
        JSON.stringify({ ...valid, modalities: ["wire"] }),
        "modalities.0",
        "each modality must be one of ach, check, vcc, instant_deposit, instant, digital_check, venmo, paypal",
      ],
      [
        JSON.stringify({
          ...valid,
          metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"])),
        }),
        "metadata",
        "metadata has at most 50 keys",
      ],
      [
        JSON.stringify({ ...valid, metadata: { ["k".repeat(41)]: "v" } }),
        `metadata.${"k".repeat(41)}`,
        "metadata keys are at most 40 characters",
      ],
      [
        JSON.stringify({ ...valid, metadata: { k: "v".repeat(501) } }),
        "metadata.k",
        "metadata values are at most 500 characters",
      ],
      [
        JSON.stringify({ ...valid, metadata: { k: 5 } }),
        "metadata.k",
        "metadata values must be strings",
      ],
      ["[]", "body", "the body must be a JSON object"],
    ];
    for (const [body, param, message] of cases) {
      const res = await call(f, "POST", "/v1/disbursements", body);
      assert.equal(res.status, 400, body.slice(0, 80));
      assert.deepEqual(
        (await res.json() as { errors: unknown[] }).errors[0],
        { param, message },
        body.slice(0, 80),
      );
    }
    const atLimits = await call(f, "POST", "/v1/disbursements", {
      ...valid,
      amount: 0.01,
      metadata: Object.fromEntries(
        Array.from(
          { length: 50 },
          (_, i) => [`k${"x".repeat(38)}${String(i).padStart(2, "0")}`.slice(-40), "v".repeat(500)],
        ),
      ),
    });
    assert.equal(
      atLimits.status,
      201,
      "0.01, 50 keys of 40 and values of 500 characters are accepted",
    );
    const unknownPayee = await call(f, "POST", "/v1/disbursements", {
      ...valid,
      payee: { id: "ghost" },
    });
    assert.equal(unknownPayee.status, 400);
    assert.equal((await unknownPayee.json() as { code: string }).code, "payee_not_found");
    const short = await call(f, "POST", "/v1/disbursements", { ...valid, amount: 200 });
    assert.equal(short.status, 409);
    assert.deepEqual(await short.json(), {
      type: "/docs/errors#insufficient_funds",
      title: "Conflict",
      status: 409,
      detail: "available is $99.99; this disbursement needs $200.00 (short by $100.01)",
      code: "insufficient_funds",
    });
  }, NO_LIMIT);
});

Deno.test("cancel returns the money before selection; 409 not_cancelable once a modality is selected", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 100_000);
    await call(f, "POST", "/v1/payees", { id: "noaction", email: "n@example.test" });
    await call(f, "POST", "/v1/payees", { id: "success+ach", email: "sa@example.test" });
    const make = async (payee: string) =>
      (await (await call(f, "POST", "/v1/disbursements", {
        amount: 100,
        claim_id: "C",
        payee: { id: payee },
        modalities: ["ach"],
      })).json() as { id: string }).id;
    const quiet = await make("noaction");
    const eager = await make("success+ach");
    const canceled = await call(f, "POST", `/v1/disbursements/${quiet}/cancel`);
    assert.equal(canceled.status, 200);
    const body = await canceled.json() as { status: string; timeline: { status: string }[] };
    assert.equal(body.status, "canceled");
    assert.deepEqual(body.timeline.map((t) => t.status), ["created", "canceled"]);
    const again = await call(f, "POST", `/v1/disbursements/${quiet}/cancel`);
    assert.equal(again.status, 409);
    assert.equal((await again.json() as { code: string }).code, "not_cancelable");

    // The test payee selects ACH at once when offered: then it can no longer be canceled. Its
    // file goes at the 10:30 New York cutoff.
    await call(f, "POST", "/v1/sandbox/clock/advance", { seconds: 30 * 60 });
    const sent = await (await call(f, "GET", `/v1/disbursements/${eager}`)).json() as {
      status: string;
      modality: string;
    };
    assert.deepEqual([sent.status, sent.modality], ["funds_sent", "ach"]);
    const late = await call(f, "POST", `/v1/disbursements/${eager}/cancel`);
    assert.equal(late.status, 409);
    assert.equal(
      (await late.json() as { detail: string }).detail,
      `disbursement ${eager} is funds_sent: it can be canceled only before a modality is selected, or after a failure`,
    );
    const balance = await (await call(f, "GET", "/v1/ledgers/auto/balance")).json() as Record<
      string,
      number
    >;
    assert.deepEqual([balance.available, balance.reserved, balance.in_transit], [900, 0, 100]);
    await call(f, "POST", "/v1/sandbox/clock/advance", { seconds: 3 * 86_400 });
    const done = await (await call(f, "GET", `/v1/disbursements/${eager}`)).json() as {
      status: string;
      timeline: { status: string }[];
    };
    assert.equal(done.status, "completed");
    assert.deepEqual(done.timeline.map((t) => t.status), [
      "created",
      "modality_offered",
      "modality_selected",
      "funds_sent",
      "completed",
    ]);
  }, NO_LIMIT);
});

Deno.test("GET /v1/disbursements pages newest first with limit and starting_after", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 100_000);
    await call(f, "POST", "/v1/payees", { id: "noaction", email: "n@example.test" });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await call(f, "POST", "/v1/disbursements", {
        amount: 1,
        claim_id: `C${i}`,
        payee: { id: "noaction" },
        modalities: ["ach"],
      });
      ids.push((await res.json() as { id: string }).id);
    }
    const first = await (await call(f, "GET", "/v1/disbursements?limit=2")).json() as {
      object: string;
      data: { id: string }[];
      has_more: boolean;
    };
    assert.equal(first.object, "list");
    assert.deepEqual(first.data.map((d) => d.id), [ids[2], ids[1]]);
    assert.equal(first.has_more, true);
    const second =
      await (await call(f, "GET", `/v1/disbursements?limit=2&starting_after=${ids[1]}`)).json() as {
        data: { id: string }[];
        has_more: boolean;
      };
    assert.deepEqual(second.data.map((d) => d.id), [ids[0]]);
    assert.equal(second.has_more, false);
    for (
      const [query, param] of [["limit=0", "limit"], ["limit=101", "limit"], ["limit=x", "limit"], [
        "starting_after=dsb_nope",
        "starting_after",
      ]]
    ) {
      const res = await call(f, "GET", `/v1/disbursements?${query}`);
      assert.equal(res.status, 400, query);
      assert.equal(
        (await res.json() as { errors: { param: string }[] }).errors[0].param,
        param,
        query,
      );
    }
    const beacon =
      await (await call(f, "GET", "/v1/disbursements", undefined, { key: f.cast.beaconKeyTest }))
        .json() as { data: unknown[] };
    assert.deepEqual(beacon.data, [], "another company's key sees none");
  }, NO_LIMIT);
});

Deno.test("isolation: another company's key and the other environment's key get 404 for every id", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 10_000);
    await call(f, "POST", "/v1/payees", { id: "noaction", email: "n@example.test" });
    const { id } = await (await call(f, "POST", "/v1/disbursements", {
      amount: 1,
      claim_id: "C",
      payee: { id: "noaction" },
      modalities: ["ach"],
    })).json() as { id: string };
    for (const key of [f.cast.beaconKeyTest, f.cast.acmeAutoKeyLive]) {
      for (
        const [method, path] of [["GET", `/v1/disbursements/${id}`], [
          "POST",
          `/v1/disbursements/${id}/cancel`,
        ], ["GET", "/v1/payees/noaction"]]
      ) {
        const res = await call(f, method, path, undefined, { key });
        assert.equal(res.status, 404, `${method} ${path}`);
        assert.equal((await res.json() as { code: string }).code, "not_found");
      }
    }
    const still = await (await call(f, "GET", `/v1/disbursements/${id}`)).json() as {
      status: string;
    };
    assert.equal(still.status, "created", "nothing was canceled by the other keys");
  }, NO_LIMIT);
});

Deno.test("idempotent create: the same key and body replay the first response; another body is 422", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 10_000);
    await call(f, "POST", "/v1/payees", { id: "noaction", email: "n@example.test" });
    const body = { amount: 12.34, claim_id: "C", payee: { id: "noaction" }, modalities: ["ach"] };
    const first = await call(f, "POST", "/v1/disbursements", body, { idempotencyKey: "create-1" });
    const firstText = await first.text();
    const replay = await call(f, "POST", "/v1/disbursements", { ...body }, {
      idempotencyKey: "create-1",
    });
    assert.equal(replay.status, 201);
    assert.equal(replay.headers.get("idempotent-replayed"), "true");
    assert.equal(await replay.text(), firstText);
    const other = await call(f, "POST", "/v1/disbursements", { ...body, amount: 12.35 }, {
      idempotencyKey: "create-1",
    });
    assert.equal(other.status, 422);
    const { rows } = await f.deps.databases.test.readClient.execute(
      "SELECT count(*) AS n FROM payouts",
    );
    assert.equal(Number(rows[0].n), 1);
    const balance = await (await call(f, "GET", "/v1/ledgers/auto/balance")).json() as Record<
      string,
      number
    >;
    assert.equal(balance.reserved, 12.34, "held once");
  }, NO_LIMIT);
});

Deno.test("GET /v1/ledgers/{line}/tieouts/{date}: the day's tie-out; bad dates 400; other lines 404", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 50_000);
    const res = await call(f, "GET", "/v1/ledgers/auto/tieouts/2026-01-05");
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), {
      object: "tieout",
      line: "auto",
      date: "2026-01-05",
      currency: "USD",
      livemode: false,
      opening: 0,
      funded: 500,
      returned_funding: 0,
      returned: 0,
      disbursed: 0,
      fees: 0,
      closing: 500,
      difference: 0,
    });
    const bad = await call(f, "GET", "/v1/ledgers/auto/tieouts/2026-02-30");
    assert.equal(bad.status, 400);
    assert.deepEqual((await bad.json() as { errors: unknown }).errors, [
      { param: "date", message: 'date "2026-02-30" is not a calendar date YYYY-MM-DD' },
    ]);
    assert.equal((await call(f, "GET", "/v1/ledgers/home/tieouts/2026-01-05")).status, 404);
    assert.equal(
      (await call(f, "GET", "/v1/ledgers/auto/tieouts/2026-01-05", undefined, {
        key: f.cast.beaconKeyTest,
      })).status,
      404,
    );
  }, NO_LIMIT);
});

Deno.test("GET /v1/events lists the line's events newest first, by type; GET /v1/events/{id}", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 50_000);
    await call(f, "POST", "/v1/payees", { id: "noaction", email: "n@example.test" });
    const { id } = await (await call(f, "POST", "/v1/disbursements", {
      amount: 5,
      claim_id: "C",
      payee: { id: "noaction" },
      modalities: ["ach"],
    })).json() as { id: string };
    await call(f, "POST", `/v1/disbursements/${id}/cancel`);
    const list = await (await call(f, "GET", "/v1/events")).json() as {
      data: { id: string; type: string; data: Record<string, unknown> }[];
      has_more: boolean;
    };
    assert.deepEqual(list.data.map((e) => e.type), [
      "disbursement.canceled",
      "disbursement.created",
    ]);
    assert.equal(list.has_more, false);
    const created = await (await call(f, "GET", "/v1/events?type=disbursement.created")).json() as {
      data: { id: string }[];
    };
    assert.equal(created.data.length, 1);
    const one = await call(f, "GET", `/v1/events/${created.data[0].id}`);
    assert.equal(one.status, 200);
    const event = await one.json() as Record<string, unknown>;
    assert.deepEqual(Object.keys(event), [
      "id",
      "object",
      "type",
      "created",
      "data",
      "signature",
      "sequence",
    ]);
    assert.equal(event.type, "disbursement.created");
    assert.equal(
      (await call(f, "GET", `/v1/events/${created.data[0].id}`, undefined, {
        key: f.cast.beaconKeyTest,
      })).status,
      404,
    );
    const paged = await (await call(f, "GET", "/v1/events?limit=1")).json() as {
      data: { id: string }[];
      has_more: boolean;
    };
    assert.equal(paged.has_more, true);
    const rest =
      await (await call(f, "GET", `/v1/events?limit=1&starting_after=${paged.data[0].id}`))
        .json() as { data: { id: string }[]; has_more: boolean };
    assert.deepEqual([rest.data[0].id, rest.has_more], [created.data[0].id, false]);
    assert.equal((await call(f, "GET", "/v1/events?type=Bad Type")).status, 400);
  }, NO_LIMIT);
});

Deno.test("/v1 free text: reserved metadata keys, controls, bidi overrides and lone surrogates are 400s naming the field; nothing stored", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 10_000);
    assert.equal(
      (await call(f, "POST", "/v1/payees", { id: "p1", email: "p@x.test" })).status,
      201,
    );
    const rule =
      "must not hold control characters (tab aside), bidirectional overrides or lone surrogates";
    const valid = '"amount": 10, "payee": {"id": "p1"}, "modalities": ["ach"]';
    const reserved = await call(
      f,
      "POST",
      "/v1/disbursements",
      `{${valid}, "claim_id": "C", "metadata": {"adjuster": "A-9", "__proto__": "x"}}`,
    );
    assert.equal(reserved.status, 400);
    assert.equal(reserved.headers.get("Content-Type"), "application/problem+json");
    const message =
      "metadata key __proto__ is reserved: __proto__, constructor and prototype cannot be stored";
    assert.deepEqual(await reserved.json(), {
      type: "/docs/errors#validation_error",
      title: "Bad Request",
      status: 400,
      detail: `the request is not valid: metadata.__proto__: ${message}`,
      code: "validation_error",
      errors: [{ param: "metadata.__proto__", message }],
    });
    const cases: [string, string, string, string][] = [
      [
        "/v1/disbursements",
        `{${valid}, "claim_id": "C", "metadata": {"constructor": "x"}}`,
        "metadata.constructor",
        "metadata key constructor is reserved: __proto__, constructor and prototype cannot be stored",
      ],
      [
        "/v1/disbursements",
        `{${valid}, "claim_id": "C", "metadata": {"prototype": "x"}}`,
        "metadata.prototype",
        "metadata key prototype is reserved: __proto__, constructor and prototype cannot be stored",
      ],
      [
        "/v1/disbursements",
        `{${valid}, "claim_id": "CLM\\u0000-1"}`,
        "claim_id",
        `claim_id ${rule}: U+0000 (a control character) at character 4`,
      ],
      [
        "/v1/disbursements",
        `{${valid}, "claim_id": "C", "metadata": {"note": "paid \\u202Etxt.exe"}}`,
        "metadata.note",
        `metadata values ${rule}: U+202E (a bidirectional override) at character 6`,
      ],
      [
        "/v1/disbursements",
        `{${valid}, "claim_id": "C", "metadata": {"a": "1", "b\\u0007": "2"}}`,
        "metadata",
        `metadata keys ${rule}: key 2 has U+0007 (a control character) at character 2`,
      ],
      [
        "/v1/payees",
        '{"id": "p2", "name": "Pat \\ud800"}',
        "name",
        `name ${rule}: U+D800 (a lone surrogate) at character 5`,
      ],
      [
        "/v1/payees",
        '{"id": "p2", "address": {"line1": "1 Main\\nSt", "city": "Austin", "state": "TX", "postal_code": "73301"}}',
        "address.line1",
        `address.line1 ${rule}: U+000A (a control character) at character 7`,
      ],
      [
        "/v1/webhooks",
        '{"url": "http://127.0.0.1:9/hook", "description": "ops \\u2066hook"}',
        "description",
        `description ${rule}: U+2066 (a bidirectional override) at character 5`,
      ],
    ];
    for (const [path, body, param, issue] of cases) {
      const res = await call(f, "POST", path, body);
      assert.equal(res.status, 400, body);
      assert.deepEqual((await res.json() as { errors: unknown }).errors, [{
        param,
        message: issue,
      }]);
    }
    const read = f.deps.databases.test.readClient;
    const count = async (table: string) =>
      Number((await read.execute(`SELECT count(*) AS n FROM ${table}`)).rows[0].n);
    assert.deepEqual(
      [await count("payouts"), await count("payees"), await count("webhook_endpoints")],
      [0, 1, 0],
      "nothing was stored",
    );
    const tab = await call(f, "POST", "/v1/disbursements", {
      amount: 10,
      claim_id: "CLM-2",
      payee: { id: "p1" },
      modalities: ["ach"],
      metadata: { note: "a\tb", "naïve": "José 💸" },
    });
    assert.equal(tab.status, 201, "a tab, accents and emoji are text");
    assert.deepEqual((await tab.json() as { metadata: unknown }).metadata, {
      note: "a\tb",
      "naïve": "José 💸",
    });
  }, NO_LIMIT);
});

Deno.test("POST /v1/payees: a phone in the usual formats is stored E.164, a lowercase state uppercased", async () => {
  await withHttpFixture(async (f) => {
    const res = await call(f, "POST", "/v1/payees", {
      id: "p-phone",
      phone: "(512) 555-0100",
      contact_channel: "sms",
      address: { line1: "1 Main St", city: "Austin", state: "tx", postal_code: "73301" },
    });
    assert.equal(res.status, 201, await res.clone().text());
    const body = await res.json() as { phone: string; address: { state: string } };
    assert.deepEqual([body.phone, body.address.state], ["+15125550100", "TX"]);
    const same = await call(f, "POST", "/v1/payees", { id: "p-phone", phone: "+1 512-555-0100" });
    assert.equal(same.status, 200);
    const { rows } = await f.deps.databases.test.readClient.execute(
      "SELECT count(*) AS n FROM events WHERE type = 'payee.updated'",
    );
    assert.equal(Number(rows[0].n), 0, "the same number written another way is no change");
  }, NO_LIMIT);
});

Deno.test("a /v1 payee of type business is paid in a CCD batch, a person in a PPD one; type is shown and defaults to individual", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 100_000);
    const business = await call(f, "POST", "/v1/payees", {
      id: "success+ach",
      name: "ACME GLASS LLC",
      email: "ap@acmeglass.test",
      type: "business",
    });
    assert.equal(business.status, 201);
    assert.equal((await business.json() as { type: string }).type, "business");
    const person = await call(f, "POST", "/v1/payees", { id: "pat", email: "pat@example.test" });
    assert.equal((await person.json() as { type: string }).type, "individual");
    const refused = await call(f, "POST", "/v1/payees", { id: "x", type: "company" });
    assert.equal(refused.status, 400);
    assert.equal(
      (await refused.json() as { errors: { param: string }[] }).errors[0].param,
      "type",
    );

    const created = await call(f, "POST", "/v1/disbursements", {
      amount: 250,
      claim_id: "CLM-GLASS",
      payee: { id: "success+ach" },
      modalities: ["ach"],
    });
    assert.equal(created.status, 201);
    const { id } = await created.json() as { id: string };
    // 10:00 New York: past the sandbox bank's 10:30 same-day cutoff, the file is built.
    const advanced = await call(f, "POST", "/v1/sandbox/clock/advance", { seconds: 3600 });
    assert.equal(advanced.status, 200);
    const { rows } = await f.deps.databases.test.readClient.execute({
      sql: `SELECT e.entry_class FROM rail_batch_entries e JOIN payouts p ON p.id = e.payout_id
            JOIN disbursements d ON d.id = p.disbursement_id WHERE d.external_uuid = ?`,
      args: [id],
    });
    assert.deepEqual(rows.map((row) => row.entry_class), ["CCD"]);
  }, NO_LIMIT);
});
