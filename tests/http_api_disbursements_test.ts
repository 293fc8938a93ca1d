import assert from "node:assert/strict";
import { PDFDocument } from "pdf-lib";
import { readLineBalances } from "../lib/ledger/store.ts";
import { api, parties, payee } from "./api_helpers.ts";
import { fundAcmeAuto, withHttpFixture } from "./http_fixture.ts";

Deno.test("three payees, one needing two parties: statuses per payee, holds, record shape", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 1_000_000);
    const body = {
      disbursement_uuid: "CLM-100",
      large_disbursement: false,
      payees: [
        payee("p-a", 1000),
        payee("p-b", 250.25, { permission_required_from: ["lienholder", "co-owner"] }),
        payee("p-c", 99.99, {
          field_values: [{ name: "policy", value: "AU-1" }],
          payment_method_settings: { check_postage_type: "PR" },
        }),
      ],
      authorization_parties: parties,
    };
    const res = await api(f, "POST", "/api/disbursements", body);
    assert.equal(res.status, 201);
    const record = await res.json() as Record<string, unknown> & {
      payees: Record<string, unknown>[];
      authorization_parties: Record<string, unknown>[];
    };
    assert.deepEqual(Object.keys(record), [
      "disbursement_uuid",
      "payor_email",
      "authorization_parties",
      "payees",
      "pay_by",
      "created_at",
    ]);
    assert.equal(record.payor_email, "alice@acme.test");
    // An extension; the fixture's companies predate the deadline setting, so there is no default.
    assert.equal((record as Record<string, unknown>).pay_by, null);
    assert.equal(record.created_at, "2026-01-05 15:00:00");
    assert.deepEqual(record.authorization_parties[0], {
      party_uuid: "lienholder",
      title: "Lienholder",
      email: "lien@example.test",
      first_name: "Lee",
      last_name: "Holder",
      phone: "+15555550101",
    }, "no party_type nor Company_name in the record; the phone in E.164");
    assert.deepEqual(record.payees.map((p) => [p.payee_uuid, p.amount, p.status]), [
      ["p-a", 1000, "Created"],
      ["p-b", 250.25, "PendingAuthorizationPartiesPermission"],
      ["p-c", 99.99, "Created"],
    ]);
    assert.deepEqual(record.payees[2].field_values, [{ name: "policy", value: "AU-1" }]);
    assert.equal(record.payees[2].payment_method_settings, undefined);
    const balances = await readLineBalances(
      f.deps.databases.test.readClient,
      f.cast.acme.autoLineId,
    );
    assert.deepEqual([balances.available, balances.reserved], [1_000_000 - 135_024, 135_024]);

    await api(f, "POST", "/api/sandbox/clock/advance", { seconds: 1 });
    const fetched = await (await api(f, "GET", "/api/disbursements/CLM-100")).json() as {
      payees: { status: string }[];
    };
    assert.deepEqual(fetched.payees.map((p) => p.status), [
      "PendingPaymentMethodSelection",
      "PendingAuthorizationPartiesPermission",
      "PendingPaymentMethodSelection",
    ]);

    // Canceling one payee returns exactly its amount to available.
    const canceled = await api(f, "POST", "/api/disbursements/CLM-100/payees/p-c/cancel");
    assert.equal(canceled.status, 200);
    assert.equal((await canceled.json() as { status: string }).status, "Canceled");
    const after = await readLineBalances(f.deps.databases.test.readClient, f.cast.acme.autoLineId);
    assert.deepEqual([after.available - balances.available, after.reserved], [
      9_999,
      135_024 - 9_999,
    ]);
    const again = await api(f, "POST", "/api/disbursements/CLM-100/payees/p-c/cancel");
    assert.equal(again.status, 409);
    assert.equal((await again.json() as { name: string }).name, "CONFLICT");
    const onePayee = await api(f, "GET", "/api/disbursements/CLM-100/payees/p-a");
    assert.equal((await onePayee.json() as { payee_uuid: string }).payee_uuid, "p-a");
  });
});

Deno.test("the same disbursement_uuid: same body → 200 same record, other body → 409; nothing held twice", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 100_000);
    const body = {
      disbursement_uuid: "CLM-7",
      large_disbursement: false,
      payees: [payee("p-a", 10)],
    };
    const first = await api(f, "POST", "/api/disbursements", body);
    assert.equal(first.status, 201);
    const firstRecord = await first.json();
    const again = await api(f, "POST", "/api/disbursements", body);
    assert.equal(again.status, 200);
    assert.deepEqual(await again.json(), firstRecord);
    const other = await api(f, "POST", "/api/disbursements", {
      ...body,
      payees: [payee("p-a", 11)],
    });
    assert.equal(other.status, 409);
    assert.deepEqual(await other.json(), {
      name: "CONFLICT",
      message: "disbursement_uuid CLM-7 already exists with a different request",
      details: [{ Issue: "already used", Field: "disbursement_uuid", Location: "body" }],
    });
    const balances = await readLineBalances(
      f.deps.databases.test.readClient,
      f.cast.acme.autoLineId,
    );
    assert.equal(balances.reserved, 1_000);
  });
});

Deno.test("every bad field is a 400 naming it; the limits and one past them", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 200_000_000);
    const base = { disbursement_uuid: "X", large_disbursement: false, payees: [payee("p", 1)] };
    const cases: [unknown, string, string][] = [
      [
        { ...base, payees: [payee("p", 1, { payee_type_id: 5 })] },
        "payees.0.payee_type_id",
        "payee_type_id must be at most 4",
      ],
      [
        { ...base, payees: [payee("p", 1, { allowed_payment_method_ids: [8] })] },
        "payees.0.allowed_payment_method_ids.0",
        "each payment method id must be at most 7",
      ],
      [
        {
          ...base,
          payees: [payee("p", 1, { payment_method_settings: { check_postage_type: "XX" } })],
        },
        "payees.0.payment_method_settings.check_postage_type",
        "check_postage_type must be one of FC, PR, PRS, SC, FSO, USPSIDAY, USPSCERT, FPO, FFO, FSD",
      ],
      [
        { ...base, payees: [payee("p", 1, { state: "Tex" })] },
        "payees.0.state",
        "state is a two-letter code such as TX",
      ],
      [
        { ...base, payees: [payee("p", 1, { email: "nope" })] },
        "payees.0.email",
        "email is not a valid e-mail address",
      ],
      [
        { ...base, payees: [payee("p", 1, { first_name: undefined })] },
        "payees.0.first_name",
        "payee.first_name is required",
      ],
      [
        { ...base, payees: [payee("p", 10.005)] },
        "payees.0.amount",
        "amount must be dollars with at most two decimals and no exponent, got 10.005",
      ],
      [
        { ...base, payees: [payee("p", 1, { permission_required_from: ["ghost"] })] },
        "payees.0.permission_required_from.0",
        "party_uuid ghost is not among authorization_parties",
      ],
      [
        { ...base, payees: [payee("p", 1), payee("p", 2)] },
        "payees.1.payee_uuid",
        "payee_uuid p is listed twice",
      ],
      [
        { ...base, payees: [payee("p", 1, { email: null })] },
        "payees.0.email",
        "email is required when delivery_options.email is true",
      ],
      [
        { ...base, payees: Array.from({ length: 501 }, (_, i) => payee(`p${i}`, 1)) },
        "payees",
        "at most 500 payees",
      ],
      [
        {
          ...base,
          authorization_parties: Array.from(
            { length: 21 },
            (_, i) => ({ ...parties[0], party_uuid: `x${i}` }),
          ),
        },
        "authorization_parties",
        "at most 20 authorization parties",
      ],
      [{ ...base, payees: [] }, "payees", "payees needs at least one payee"],
      [
        { ...base, payees: [payee("p", 1, { first_name: "x".repeat(256) })] },
        "payees.0.first_name",
        "first_name is at most 255 characters",
      ],
      [
        { ...base, payees: [payee("p", 1_000_000.01)] },
        "payees.0.amount",
        "amount must be at most $1,000,000.00",
      ],
      [{ ...base, payees: [payee("p", 0)] }, "payees.0.amount", "amount must be at least $0.01"],
      [
        { large_disbursement: false, payees: [payee("p", 1)] },
        "disbursement_uuid",
        "disbursement_uuid is required",
      ],
    ];
    for (const [body, field, issue] of cases) {
      const res = await api(f, "POST", "/api/disbursements", body);
      assert.equal(res.status, 400, field);
      const record = await res.json() as { name: string; details: unknown[] };
      assert.equal(record.name, "VALIDATION_ERROR", field);
      assert.deepEqual(record.details[0], { Issue: issue, Field: field, Location: "body" }, field);
    }
    const atLimits = await api(f, "POST", "/api/disbursements", {
      ...base,
      payees: Array.from({ length: 500 }, (_, i) => payee(`p${i}`, 1)),
      authorization_parties: Array.from(
        { length: 20 },
        (_, i) => ({ ...parties[0], party_uuid: `x${i}` }),
      ),
    });
    assert.equal(atLimits.status, 201, "500 payees and 20 parties are accepted");
    const largest = await api(f, "POST", "/api/disbursements", {
      ...base,
      disbursement_uuid: "MAX",
      payees: [payee("p", 1_000_000, { first_name: "x".repeat(255) })],
    });
    assert.equal(largest.status, 201, "1,000,000.00 and 255 characters are accepted");
    const { rows } = await f.deps.databases.test.readClient.execute(
      "SELECT count(*) AS n FROM payouts",
    );
    assert.equal(Number(rows[0].n), 501);
  });
});

Deno.test("another company's disbursement and payee are 404, never 403", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 10_000);
    await api(f, "POST", "/api/disbursements", {
      disbursement_uuid: "CLM-1",
      large_disbursement: false,
      payees: [payee("p-a", 1)],
    });
    const bob = { key: f.cast.bob.keyTest, tin: f.cast.beacon.tin };
    for (
      const [method, path] of [["GET", "/api/disbursements/CLM-1"], [
        "GET",
        "/api/disbursements/CLM-1/payees/p-a",
      ], ["POST", "/api/disbursements/CLM-1/payees/p-a/cancel"]]
    ) {
      const res = await api(f, method, path, undefined, bob);
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.equal((await res.json() as { name: string }).name, "RESOURCE_NOT_FOUND");
    }
  });
});

Deno.test("cancel: 409 once a method was selected; with an Idempotency-Key a retried cancel replays 200", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 100_000);
    await api(f, "POST", "/api/disbursements", {
      disbursement_uuid: "CLM-X",
      large_disbursement: false,
      payees: [payee("success+ach", 10), payee("p-b", 20)],
    });
    // To the 10:30 New York cutoff: the test payee's ACH file goes.
    await api(f, "POST", "/api/sandbox/clock/advance", { seconds: 30 * 60 });
    const selected = await api(f, "POST", "/api/disbursements/CLM-X/payees/success+ach/cancel");
    assert.equal(selected.status, 409);
    assert.deepEqual(await selected.json(), {
      name: "CONFLICT",
      message:
        "payee success+ach is Processing: a payee can be canceled only before a payment method is selected, or after a failure",
      details: [],
    });
    const headers = { "Idempotency-Key": "cancel-p-b" };
    const path = "/api/disbursements/CLM-X/payees/p-b/cancel";
    const first = await api(f, "POST", path, undefined, undefined, headers);
    const retried = await api(f, "POST", path, undefined, undefined, headers);
    assert.deepEqual([first.status, retried.status], [200, 200]);
    assert.equal(retried.headers.get("Idempotent-Replayed"), "true");
    assert.deepEqual(await retried.json(), await first.json());
    const balances = await readLineBalances(
      f.deps.databases.test.readClient,
      f.cast.acme.autoLineId,
    );
    assert.deepEqual(
      [balances.available, balances.reserved + balances.in_transit],
      [100_000 - 1_000, 1_000],
      "p-b's 20.00 returned once; success+ach's 10.00 is on its way",
    );
    const badKey = await api(f, "POST", path, undefined, undefined, { "Idempotency-Key": "" });
    assert.equal(badKey.status, 400);
    const record = await badKey.json() as { details: { Field: string; Location: string }[] };
    assert.deepEqual(
      [record.details[0].Field, record.details[0].Location],
      ["Idempotency-Key", "header"],
    );
  });
});

Deno.test("short funds: a normal disbursement is 409 naming the shortfall; a large one waits in PendingFunds until a wire", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 5_000);
    const body = {
      disbursement_uuid: "CLM-BIG",
      large_disbursement: false,
      payees: [payee("p-a", 40), payee("p-b", 20)],
    };
    const refused = await api(f, "POST", "/api/disbursements", body);
    assert.equal(refused.status, 409);
    assert.deepEqual(await refused.json(), {
      name: "CONFLICT",
      message: "available is $50.00; this disbursement needs $60.00 (short by $10.00)",
      details: [],
    });
    const waiting = await api(f, "POST", "/api/disbursements", {
      ...body,
      large_disbursement: true,
    });
    assert.equal(waiting.status, 201);
    const record = await waiting.json() as { payees: { status: string }[] };
    assert.deepEqual(record.payees.map((p) => p.status), ["PendingFunds", "PendingFunds"]);
    const before = await readLineBalances(f.deps.databases.test.readClient, f.cast.acme.autoLineId);
    assert.deepEqual([before.available, before.reserved], [5_000, 0], "nothing held while waiting");
    const wire = await api(f, "POST", "/api/funds", {
      payment_method: "WireTransfer",
      description: "wire for CLM-BIG",
      large_disbursement: true,
      amount: 10,
    });
    assert.equal(wire.status, 201);
    const after = await (await api(f, "GET", "/api/disbursements/CLM-BIG")).json() as {
      payees: { status: string }[];
    };
    assert.deepEqual(after.payees.map((p) => p.status), ["Created", "Created"]);
    const held = await readLineBalances(f.deps.databases.test.readClient, f.cast.acme.autoLineId);
    assert.deepEqual([held.available, held.reserved], [0, 6_000]);
  });
});

Deno.test("Surface A free text: controls, bidi overrides and lone surrogates are 400s naming the field, on every body; nothing stored", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 100_000);
    const rule =
      "must not hold control characters (tab aside), bidirectional overrides or lone surrogates";
    const base = { disbursement_uuid: "CLM-T", large_disbursement: false };
    const refused = await api(f, "POST", "/api/disbursements", {
      ...base,
      payees: [payee("p-a", 10, { first_name: "Pat\u0000" })],
    });
    assert.equal(refused.status, 400);
    const issue = `first_name ${rule}: U+0000 (a control character) at character 4`;
    assert.deepEqual(await refused.json(), {
      name: "VALIDATION_ERROR",
      message: `the request is not valid: payees.0.first_name: ${issue}`,
      details: [{ Issue: issue, Field: "payees.0.first_name", Location: "body" }],
    });
    const cases: [string, unknown, string, string][] = [
      [
        "/api/disbursements",
        { ...base, disbursement_uuid: "CLM\u202E-1", payees: [payee("p-a", 10)] },
        "disbursement_uuid",
        `disbursement_uuid ${rule}: U+202E (a bidirectional override) at character 4`,
      ],
      [
        "/api/disbursements",
        { ...base, payees: [payee("p-\uD800", 10, { email: "p@example.test" })] },
        "payees.0.payee_uuid",
        `payee_uuid ${rule}: U+D800 (a lone surrogate) at character 3`,
      ],
      [
        "/api/disbursements",
        { ...base, payees: [payee("p-a", 10, { address_one: "1 Main\r\nSt" })] },
        "payees.0.address_one",
        `address_one ${rule}: U+000D (a control character) at character 7`,
      ],
      [
        "/api/disbursements",
        {
          ...base,
          payees: [payee("p-a", 10, { field_values: [{ name: "policy", value: "AU\u001b1" }] })],
        },
        "payees.0.field_values.0.value",
        `value ${rule}: U+001B (a control character) at character 3`,
      ],
      [
        "/api/disbursements",
        {
          ...base,
          payees: [payee("p-a", 10)],
          authorization_parties: [{ ...parties[0], Company_name: "First \u2067Bank" }],
        },
        "authorization_parties.0.Company_name",
        `Company_name ${rule}: U+2067 (a bidirectional override) at character 7`,
      ],
      [
        "/api/funds",
        {
          payment_method: "ACH",
          description: "top-up\u0000",
          large_disbursement: false,
          amount: 10,
        },
        "description",
        `description ${rule}: U+0000 (a control character) at character 7`,
      ],
      [
        "/api/simple-payments",
        {
          simple_payment_uuid: "SP-1",
          amount: 10,
          first_name: "Sam",
          last_name: "Payee",
          email: "sam@example.test",
          memo: "Refund\u202Dof premium",
          allowed_payment_method_ids: [7],
        },
        "memo",
        `memo ${rule}: U+202D (a bidirectional override) at character 7`,
      ],
      [
        "/api/documents",
        { doc_type_id: 4, name: "Release\u0008", pdf_base64: btoa("%PDF-1.7 x") },
        "name",
        `name ${rule}: U+0008 (a control character) at character 8`,
      ],
      [
        "/api/webhooks",
        { url: "http://127.0.0.1:9/hook", description: "\uDC00ops" },
        "description",
        `description ${rule}: U+DC00 (a lone surrogate) at character 1`,
      ],
    ];
    for (const [path, body, field, message] of cases) {
      const res = await api(f, "POST", path, body);
      assert.equal(res.status, 400, field);
      assert.deepEqual(
        (await res.json() as { details: unknown }).details,
        [{ Issue: message, Field: field, Location: "body" }],
        field,
      );
    }
    const read = f.deps.databases.test.readClient;
    const count = async (table: string) =>
      Number((await read.execute(`SELECT count(*) AS n FROM ${table}`)).rows[0].n);
    assert.deepEqual(
      [
        await count("payouts"),
        await count("documents"),
        await count("webhook_endpoints"),
        await count("fundings"),
      ],
      [0, 0, 0, 1],
      "nothing was stored (the one funding is the fixture's)",
    );
    const accented = await api(f, "POST", "/api/disbursements", {
      ...base,
      payees: [payee("p-a", 10, { first_name: "José", last_name: "Núñez\tJr" })],
    });
    assert.equal(accented.status, 201, "accents and a tab are text");
  });
});

Deno.test("payee fields as the seed types them: usual phone formats stored E.164, blanks not needed are absent, state uppercased, null settings", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 100_000);
    const sms = { email: false, sms: true };
    const res = await api(f, "POST", "/api/disbursements", {
      disbursement_uuid: "CLM-SEED",
      large_disbursement: false,
      payees: [
        payee("p-1", 10, { phone: "512-555-0100", delivery_options: { email: true, sms: true } }),
        payee("p-2", 10, {
          phone: "(512) 555-0101",
          email: "",
          state: "tx",
          zip_code: "",
          delivery_options: sms,
        }),
        payee("p-3", 10, {
          phone: "+1 512 555 0102",
          state: "",
          payment_method_settings: null,
          delivery_options: sms,
          permission_required_from: ["lien"],
        }),
        payee("p-4", 10, { phone: "", zip_code: " ", payment_method_settings: null }),
        payee("p-5", 10, { phone: "+44 20 7946 0958", delivery_options: sms }),
        payee("p-6", 10, { phone: "1.512.555.0103", delivery_options: sms }),
      ],
      authorization_parties: [{
        party_uuid: "lien",
        party_type: "INDIVIDUAL",
        title: "Lienholder",
        Company_name: "First Bank",
        email: "",
        first_name: "Lee",
        last_name: "Holder",
        phone: "(512) 555-0199",
      }],
    });
    assert.equal(res.status, 201, await res.clone().text());
    const record = await res.json() as {
      payees: Record<string, unknown>[];
      authorization_parties: Record<string, unknown>[];
    };
    assert.deepEqual(
      record.payees.map((p) => [p.payee_uuid, p.phone, p.email, p.state, p.zip_code]),
      [
        ["p-1", "+15125550100", "p-1@example.test", "TX", "73301"],
        ["p-2", "+15125550101", null, "TX", null],
        ["p-3", "+15125550102", "p-3@example.test", null, "73301"],
        ["p-4", null, "p-4@example.test", "TX", null],
        ["p-5", "+442079460958", "p-5@example.test", "TX", "73301"],
        ["p-6", "+15125550103", "p-6@example.test", "TX", "73301"],
      ],
    );
    assert.deepEqual(record.authorization_parties, [{
      party_uuid: "lien",
      title: "Lienholder",
      email: null,
      first_name: "Lee",
      last_name: "Holder",
      phone: "+15125550199",
    }]);
    const { rows } = await f.deps.databases.test.readClient.execute(
      "SELECT payee_uuid, payment_method_settings FROM payouts WHERE payee_uuid IN ('p-3', 'p-4')",
    );
    assert.deepEqual(rows.map((row) => String(row.payment_method_settings)), ["{}", "{}"]);
    await api(f, "POST", "/api/sandbox/clock/advance", { seconds: 1 });
    const sent = await f.deps.databases.test.readClient.execute(
      "SELECT recipient FROM notifications WHERE channel = 'sms' ORDER BY recipient",
    );
    assert.deepEqual(
      sent.rows.map((row) => row.recipient),
      ["+15125550100", "+15125550101", "+15125550102", "+15125550103", "+442079460958"],
      "SMS go to the normalized numbers",
    );
  });
});

Deno.test("payee fields still refused where they are needed or are not what they claim, naming the field; nothing stored", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 100_000);
    const base = { disbursement_uuid: "CLM-N", large_disbursement: false };
    const phoneRule =
      "phone must be a phone number: 10 digits such as (512) 555-0100, or + and a country code";
    const cases: [unknown, string, string][] = [
      [
        { ...base, payees: [payee("p", 1, { email: "" })] },
        "payees.0.email",
        "email is required when delivery_options.email is true",
      ],
      [
        {
          ...base,
          payees: [payee("p", 1, { phone: "", delivery_options: { email: true, sms: true } })],
        },
        "payees.0.phone",
        "phone is required when delivery_options.sms is true",
      ],
      [{ ...base, payees: [payee("p", 1, { phone: "555-0100" })] }, "payees.0.phone", phoneRule],
      [
        { ...base, payees: [payee("p", 1, { phone: "512-555-0100 x12" })] },
        "payees.0.phone",
        phoneRule,
      ],
      [{ ...base, payees: [payee("p", 1, { phone: "call me" })] }, "payees.0.phone", phoneRule],
      [
        { ...base, payees: [payee("p", 1, { phone: "(112) 555-0100" })] },
        "payees.0.phone",
        phoneRule,
      ],
      [{ ...base, payees: [payee("p", 1, { phone: "+0 123 4567" })] }, "payees.0.phone", phoneRule],
      [
        { ...base, payees: [payee("p", 1, { state: "Texas" })] },
        "payees.0.state",
        "state is a two-letter code such as TX",
      ],
      [
        { ...base, payees: [payee("p", 1, { zip_code: "7330" })] },
        "payees.0.zip_code",
        "zip_code is a US ZIP code",
      ],
      [
        {
          ...base,
          payees: [payee("p", 1)],
          authorization_parties: [{ party_uuid: "x", phone: "12" }],
        },
        "authorization_parties.0.phone",
        phoneRule,
      ],
    ];
    for (const [body, field, issue] of cases) {
      const res = await api(f, "POST", "/api/disbursements", body);
      assert.equal(res.status, 400, field);
      assert.deepEqual(
        (await res.json() as { details: unknown[] }).details,
        [{ Issue: issue, Field: field, Location: "body" }],
        JSON.stringify(body).slice(0, 200),
      );
    }
    const { rows } = await f.deps.databases.test.readClient.execute(
      "SELECT count(*) AS n FROM payouts",
    );
    assert.equal(Number(rows[0].n), 0);
  });
});

Deno.test("a one-time document given to two payees of one create is a 409 naming the second payee's entry; nothing written", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 1_000_000);
    const pdf = await PDFDocument.create();
    pdf.addPage([612, 792]);
    const pdfBase64 = (await pdf.save()).toBase64();
    const upload = async (name: string, oneTimeUse: boolean) => {
      const res = await api(f, "POST", "/api/documents", {
        doc_type_id: 4,
        name,
        is_sign_required: true,
        one_time_use: oneTimeUse,
        pdf_base64: pdfBase64,
      });
      assert.equal(res.status, 201);
      return (await res.json() as { document_uuid: string }).document_uuid;
    };
    const settlement = await upload("Settlement offer", true);
    const release = await upload("Release", true);
    const shared = await upload("Privacy notice", false);
    const docs = (...uuids: string[]) => ({ custom_document_uuids: uuids });
    const balanceBefore = await readLineBalances(
      f.deps.databases.test.readClient,
      f.cast.acme.autoLineId,
    );
    const cases: [unknown[], string, string][] = [
      [
        [payee("p-a", 10, docs(settlement)), payee("p-b", 10, docs(settlement))],
        "payees.1.custom_document_uuids.0",
        `one-time document ${settlement} is for one payee and is already given to payee p-a in this request; payee p-b cannot have it too`,
      ],
      [
        [
          payee("p-a", 10, docs(settlement)),
          payee("p-b", 10, docs(shared, release)),
          payee("p-c", 10, docs(shared, release)),
        ],
        "payees.2.custom_document_uuids.1",
        `one-time document ${release} is for one payee and is already given to payee p-b in this request; payee p-c cannot have it too`,
      ],
    ];
    for (const [payees, field, issue] of cases) {
      const res = await api(f, "POST", "/api/disbursements", {
        disbursement_uuid: "CLM-ONCE",
        large_disbursement: false,
        payees,
      });
      assert.equal(res.status, 409, field);
      assert.deepEqual(await res.json(), {
        name: "CONFLICT",
        message: issue,
        details: [{ Issue: issue, Field: field, Location: "body" }],
      });
    }
    const read = f.deps.databases.test.readClient;
    const count = async (table: string) =>
      Number((await read.execute(`SELECT count(*) AS n FROM ${table}`)).rows[0].n);
    assert.deepEqual([await count("disbursements"), await count("payouts")], [0, 0]);
    assert.deepEqual(
      await readLineBalances(read, f.cast.acme.autoLineId),
      balanceBefore,
      "nothing held",
    );

    // A document that is not one-time may go to every payee; each one-time one to one payee.
    const fine = await api(f, "POST", "/api/disbursements", {
      disbursement_uuid: "CLM-ONCE",
      large_disbursement: false,
      payees: [payee("p-a", 10, docs(shared, settlement)), payee("p-b", 10, docs(shared, release))],
    });
    assert.equal(fine.status, 201, await fine.clone().text());
    const record = await fine.json() as { payees: { custom_document_uuids: string[] }[] };
    assert.deepEqual(record.payees.map((p) => p.custom_document_uuids), [
      [shared, settlement],
      [shared, release],
    ]);
  });
});

Deno.test("an authorization party keeps its Company_name: the create's answer leaves it out as the specification shows, GET shows it", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 100_000);
    const created = await api(f, "POST", "/api/disbursements", {
      disbursement_uuid: "CLM-PARTY",
      large_disbursement: false,
      authorization_parties: parties,
      payees: [payee("p-1", 10, { permission_required_from: ["lienholder"] })],
    });
    assert.equal(created.status, 201);
    const answer = await created.json() as { authorization_parties: Record<string, unknown>[] };
    assert.deepEqual(
      answer.authorization_parties.map((p) => ["Company_name" in p, "party_type" in p]),
      [[false, false], [false, false]],
    );
    const read = await (await api(f, "GET", "/api/disbursements/CLM-PARTY")).json() as {
      authorization_parties: Record<string, unknown>[];
    };
    assert.deepEqual(
      read.authorization_parties.map((p) => [p.party_uuid, p.party_type, p.Company_name]),
      [["lienholder", "INDIVIDUAL", "First Bank"], ["co-owner", "INDIVIDUAL", ""]],
    );
  });
});
