import assert from "node:assert/strict";
import { fundAcmeAuto, type HttpFixture, withHttpFixture } from "./http_fixture.ts";
import { api, asBeacon, payee } from "./api_helpers.ts";
import { insertAchFile } from "./ach_file_rows.ts";

const DAY_MS = 86_400_000;

/** Two payees of an /api disbursement and an ACH funding of Acme, in test. */
async function acmeMoney(f: HttpFixture) {
  await fundAcmeAuto(f, 1_000_000);
  const created = await api(f, "POST", "/api/disbursements", {
    disbursement_uuid: "D-1",
    large_disbursement: false,
    payees: [payee("P-1", 125.5), payee("P-2", 40)],
  });
  assert.equal(created.status, 201);
  const funded = await api(f, "POST", "/api/funds", {
    payment_method: "ACH",
    amount: 300,
    description: "top-up",
    large_disbursement: false,
    funding_uuid: "F-1",
  });
  assert.equal(funded.status, 201);
  const { rows } = await f.deps.databases.test.readClient.execute(
    "SELECT p.id AS payout, p.payee_uuid, (SELECT id FROM fundings WHERE funding_uuid = 'F-1') AS funding FROM payouts p ORDER BY p.payee_uuid",
  );
  return {
    p1: String(rows[0].payout),
    p2: String(rows[1].payout),
    funding: String(rows[0].funding),
  };
}

/** Acme's files in test (two), one of Beacon in test and one of Acme in live. */
async function files(f: HttpFixture) {
  const money = await acmeMoney(f);
  const t0 = f.clock.now();
  const transmitted = await insertAchFile(f.deps.databases.test, {
    companyId: f.cast.acme.id,
    status: "transmitted",
    effectiveDate: "2026-01-06",
    createdAt: t0,
    transmittedAt: t0 + 60_000,
    sha256: "1f".repeat(32),
    entries: [
      { payoutId: money.p1, amountCents: 12_550, trace: "021000020000001", lastFour: "6789" },
      {
        payoutId: money.p2,
        amountCents: 4_000,
        trace: "021000020000002",
        lastFour: "1116",
        status: "failed",
        returnCode: "R03",
      },
      { fundingId: money.funding, amountCents: 30_000, trace: "021000020000003", lastFour: "4321" },
    ],
  });
  const built = await insertAchFile(f.deps.databases.test, {
    companyId: f.cast.acme.id,
    status: "built",
    effectiveDate: "2026-01-07",
    createdAt: t0 + DAY_MS,
    entries: [],
  });
  const beacon = await insertAchFile(f.deps.databases.test, {
    companyId: f.cast.beacon.id,
    status: "built",
    effectiveDate: "2026-01-07",
    createdAt: t0 + DAY_MS,
    entries: [],
  });
  const live = await insertAchFile(f.deps.databases.live, {
    companyId: f.cast.acme.id,
    status: "built",
    effectiveDate: "2026-01-07",
    createdAt: t0 + DAY_MS,
    entries: [],
  });
  return { transmitted, built, beacon, live, t0 };
}

const summary = (id: string, fields: Record<string, unknown>) => ({
  object: "ach_file",
  id,
  environment: "test",
  entry_count: 0,
  credit_total: 0,
  debit_total: 0,
  sha256: "ab".repeat(32),
  transmitted_at: null,
  ...fields,
});

Deno.test("GET /api/ach/files: the company's files of the token's environment, newest first, metadata only", async () => {
  await withHttpFixture(async (f) => {
    const ids = await files(f);
    const res = await api(f, "GET", "/api/ach/files");
    assert.equal(res.status, 200);
    const transmittedSummary = summary(ids.transmitted, {
      created_at: new Date(ids.t0).toISOString(),
      effective_date: "2026-01-06",
      entry_count: 3,
      credit_total: 165.5,
      debit_total: 300,
      status: "transmitted",
      sha256: "1f".repeat(32),
      transmitted_at: new Date(ids.t0 + 60_000).toISOString(),
    });
    const builtSummary = summary(ids.built, {
      created_at: new Date(ids.t0 + DAY_MS).toISOString(),
      effective_date: "2026-01-07",
      status: "built",
    });
    assert.deepEqual(await res.json(), {
      object: "list",
      data: [builtSummary, transmittedSummary],
      has_more: false,
    });

    const byDate = await api(f, "GET", "/api/ach/files?date=2026-01-06");
    assert.deepEqual((await byDate.json() as { data: unknown[] }).data, [transmittedSummary]);
    const byStatus = await api(f, "GET", "/api/ach/files?status=built");
    assert.deepEqual((await byStatus.json() as { data: unknown[] }).data, [builtSummary]);
    const none = await api(f, "GET", "/api/ach/files?status=in_doubt&date=2026-01-06");
    assert.deepEqual(await none.json(), { object: "list", data: [], has_more: false });

    const first = await api(f, "GET", "/api/ach/files?limit=1");
    assert.deepEqual(await first.json(), { object: "list", data: [builtSummary], has_more: true });
    const second = await api(f, "GET", `/api/ach/files?limit=1&starting_after=${ids.built}`);
    assert.deepEqual(await second.json(), {
      object: "list",
      data: [transmittedSummary],
      has_more: false,
    });

    // Beacon sees its own file only; Acme's live token sees its live file only.
    const beacon = await api(f, "GET", "/api/ach/files", undefined, asBeacon(f));
    assert.deepEqual(
      (await beacon.json() as { data: { id: string }[] }).data.map((file) => file.id),
      [ids.beacon],
    );
    const live = await api(f, "GET", "/api/ach/files", undefined, {
      key: f.cast.alice.keyLive,
      tin: f.cast.acme.tin,
    });
    const liveBody = await live.json() as { data: { id: string; environment: string }[] };
    assert.deepEqual(liveBody.data.map((file) => [file.id, file.environment]), [[
      ids.live,
      "live",
    ]]);
  });
});

Deno.test("GET /api/ach/files: bad filters and an unknown or foreign cursor are 400 naming the field", async () => {
  await withHttpFixture(async (f) => {
    const ids = await files(f);
    const cases: [string, string, string][] = [
      [
        "status=sent",
        "status",
        "status must be one of built, transmitting, transmitted, in_doubt, voided",
      ],
      [
        "date=2026-02-30",
        "date",
        "date must be a calendar date YYYY-MM-DD (the effective entry date)",
      ],
      [
        "date=9999-99-99",
        "date",
        "date must be a calendar date YYYY-MM-DD (the effective entry date)",
      ],
      ["limit=0", "limit", "limit must be at least 1"],
      ["limit=101", "limit", "limit must be at most 100"],
      [
        `starting_after=${ids.beacon}`,
        "starting_after",
        `no ACH file "${ids.beacon}" to start after`,
      ],
      ["starting_after=rbt_nope", "starting_after", 'no ACH file "rbt_nope" to start after'],
    ];
    for (const [query, field, issue] of cases) {
      const res = await api(f, "GET", `/api/ach/files?${query}`);
      assert.equal(res.status, 400, query);
      const body = await res.json() as { name: string; details: unknown[] };
      assert.equal(body.name, "VALIDATION_ERROR", query);
      assert.deepEqual(body.details, [{ Issue: issue, Field: field, Location: "query" }], query);
    }
  });
});

Deno.test("GET /api/ach/files/{id}: masked entries by the ids the company knows; another company's file is a 404 like a missing one", async () => {
  await withHttpFixture(async (f) => {
    const ids = await files(f);
    const res = await api(f, "GET", `/api/ach/files/${ids.transmitted}`);
    assert.equal(res.status, 200);
    const text = await res.text();
    const body = JSON.parse(text) as Record<string, unknown> & { entries: unknown[] };
    const { rows } = await f.deps.databases.test.readClient.execute(
      "SELECT id FROM payouts ORDER BY payee_uuid",
    );
    assert.deepEqual(body.entries, [
      {
        trace: "021000020000001",
        direction: "credit",
        amount: 125.5,
        payout_id: rows[0].id,
        disbursement_uuid: "D-1",
        payee_uuid: "P-1",
        simple_payment_uuid: null,
        v1_disbursement_id: null,
        funding_uuid: null,
        account_last_four: "6789",
        status: "batched",
        return_code: null,
      },
      {
        trace: "021000020000002",
        direction: "credit",
        amount: 40,
        payout_id: rows[1].id,
        disbursement_uuid: "D-1",
        payee_uuid: "P-2",
        simple_payment_uuid: null,
        v1_disbursement_id: null,
        funding_uuid: null,
        account_last_four: "1116",
        status: "failed",
        return_code: "R03",
      },
      {
        trace: "021000020000003",
        direction: "debit",
        amount: 300,
        payout_id: null,
        disbursement_uuid: null,
        payee_uuid: null,
        simple_payment_uuid: null,
        v1_disbursement_id: null,
        funding_uuid: "F-1",
        account_last_four: "4321",
        status: "batched",
        return_code: null,
      },
    ]);
    assert.equal(body.status, "transmitted");
    assert.equal(body.entry_count, 3);
    assert.ok(!("content" in body), "never the content");

    const foreign = await api(f, "GET", `/api/ach/files/${ids.beacon}`);
    const missing = await api(f, "GET", "/api/ach/files/rbt_missing");
    const live = await api(f, "GET", `/api/ach/files/${ids.live}`);
    for (
      const [res, id] of [[foreign, ids.beacon], [missing, "rbt_missing"], [
        live,
        ids.live,
      ]] as const
    ) {
      assert.equal(res.status, 404);
      assert.deepEqual(await res.json(), {
        name: "RESOURCE_NOT_FOUND",
        message: `no ACH file "${id}" for this company in test`,
        details: [],
      });
    }
    const post = await api(f, "POST", "/api/ach/files", {});
    assert.equal(post.status, 405);
    assert.equal(post.headers.get("Allow"), "GET, HEAD");
  });
});
