/**
 * Surface A checks (issue 19): GET /api/checks with its filters and pages, GET /api/checks/{number},
 * POST /api/checks/{number}/void (audited; a paid check is a 400 with nothing written), GET
 * /api/check-files and GET /api/check-files/{id}. No response carries an account number; another
 * company's check or file is a 404.
 */
import assert from "node:assert/strict";
import { SANDBOX_CHECK_ACCOUNT_NUMBER } from "../lib/checks/account.ts";
import { api, asBeacon } from "./api_helpers.ts";
import { acmeChecks } from "./checks_http_helpers.ts";
import { fundAcmeAuto, type HttpFixture, withHttpFixture } from "./http_fixture.ts";

const DAY_SECONDS = 86_400;

async function json(f: HttpFixture, method: string, path: string, body?: unknown) {
  const response = await api(f, method, path, body);
  const text = await response.text();
  assert.doesNotMatch(text, new RegExp(SANDBOX_CHECK_ACCOUNT_NUMBER), `${path} shows no account`);
  return { status: response.status, body: JSON.parse(text) };
}

const rows = async (f: HttpFixture, sql: string, ...args: (string | number)[]) =>
  (await f.deps.databases.test.readClient.execute({ sql, args })).rows.map((row) => ({ ...row }));

Deno.test("GET /api/checks: the register in number order, filtered by status, number and issue date, in pages", async () => {
  await withHttpFixture(async (f) => {
    const ids = await acmeChecks(f, "D-CHK-1", [
      { amount: 100, method: 2 },
      { amount: 200.5, method: 2 },
      { amount: 300, method: 5 },
    ]);
    const all = await json(f, "GET", "/api/checks");
    assert.equal(all.status, 200);
    assert.equal(all.body.has_more, false);
    assert.deepEqual(all.body.data[0], {
      object: "check",
      number: 1001,
      environment: "test",
      kind: "postal",
      amount: 100,
      status: "issued",
      payout_id: ids[0],
      payee_name: "Pat Doe",
      memo: "D-CHK-1",
      postage_code: "FC",
      issue_date: "2026-01-05",
      paid_date: null,
      paid_amount: null,
      voided_at: null,
      void_reason: null,
      stale_at: null,
    });
    assert.deepEqual(
      all.body.data.map((c: Record<string, unknown>) => [c.number, c.kind, c.amount]),
      [[1001, "postal", 100], [1002, "postal", 200.5], [1003, "digital", 300]],
    );

    const page = await json(f, "GET", "/api/checks?limit=2");
    assert.deepEqual([page.body.data.length, page.body.has_more], [2, true]);
    const next = await json(f, "GET", "/api/checks?limit=2&starting_after=1002");
    assert.deepEqual(next.body.data.map((c: { number: number }) => c.number), [1003]);
    assert.equal(next.body.has_more, false);
    const one = await json(f, "GET", "/api/checks?number=1002");
    assert.deepEqual(one.body.data.map((c: { number: number }) => c.number), [1002]);
    const day = await json(f, "GET", "/api/checks?from=2026-01-05&to=2026-01-05&status=issued");
    assert.equal(day.body.data.length, 3);
    const none = await json(f, "GET", "/api/checks?from=2026-01-06");
    assert.deepEqual(none.body.data, []);

    const bad: [string, string][] = [
      ["/api/checks?status=cashed", "status"],
      ["/api/checks?number=0", "number"],
      ["/api/checks?from=2026-02-30", "from"],
      ["/api/checks?from=2026-01-06&to=2026-01-05", "to"],
      ["/api/checks?limit=101", "limit"],
      ["/api/checks?starting_after=9999", "starting_after"],
    ];
    for (const [path, field] of bad) {
      const refused = await json(f, "GET", path);
      assert.equal(refused.status, 400, path);
      assert.equal(refused.body.name, "VALIDATION_ERROR");
      assert.deepEqual(
        refused.body.details.map((d: { Field: string; Location: string }) => [d.Field, d.Location]),
        [[field, "query"]],
        path,
      );
    }

    const check = await json(f, "GET", "/api/checks/1003");
    assert.deepEqual([check.status, check.body.kind, check.body.postage_code], [
      200,
      "digital",
      null,
    ]);
    assert.equal((await json(f, "GET", "/api/checks/4242")).status, 404);
    const notNumber = await json(f, "GET", "/api/checks/12a");
    assert.deepEqual([notNumber.status, notNumber.body.details[0].Field], [400, "number"]);
    // Beacon's user sees none of Acme's checks; a live token sees the live register (empty).
    const beacon = await api(f, "GET", "/api/checks/1001", undefined, asBeacon(f));
    assert.equal(beacon.status, 404);
    const live = await api(f, "GET", "/api/checks", undefined, {
      key: f.cast.alice.keyLive,
      tin: f.cast.acme.tin,
    });
    assert.deepEqual((await live.json()).data, []);
  });
});

Deno.test("POST /api/checks/{number}/void: voided with its reason and audited once; a paid check is a 400 naming number with nothing written", async () => {
  await withHttpFixture(async (f) => {
    await acmeChecks(f, "D-CHK-2", [{ amount: 100, method: 2 }, { amount: 200, method: 2 }]);
    const voided = await json(f, "POST", "/api/checks/1002/void", { reason: "payee moved" });
    assert.equal(voided.status, 200, JSON.stringify(voided.body));
    assert.deepEqual(
      [voided.body.number, voided.body.status, voided.body.void_reason],
      [1002, "voided", "payee moved"],
    );
    assert.ok(voided.body.voided_at);
    const again = await json(f, "POST", "/api/checks/1002/void", { reason: "again" });
    assert.deepEqual([again.status, again.body.void_reason], [200, "payee moved"]);
    const audit = await rows(
      f,
      "SELECT action, object_type, operator_id, origin, company_id FROM audit_log WHERE action = 'checks:void'",
    );
    assert.deepEqual(audit, [{
      action: "checks:void",
      object_type: "check",
      operator_id: null,
      origin: `api user ${f.cast.alice.id}`,
      company_id: f.cast.acme.id,
    }]);

    for (
      const [body, field] of [
        [{}, "reason"],
        [{ reason: "  " }, "reason"],
        [{ reason: "x".repeat(501) }, "reason"],
        [{ reason: "ok", extra: 1 }, "extra"],
      ] as const
    ) {
      const refused = await json(f, "POST", "/api/checks/1001/void", body);
      assert.equal(refused.status, 400, JSON.stringify(body));
      assert.equal(refused.body.details[0].Field, field, JSON.stringify(refused.body));
    }
    assert.equal((await json(f, "POST", "/api/checks/7777/void", { reason: "x" })).status, 404);
    const beacon = await api(f, "POST", "/api/checks/1001/void", { reason: "x" }, asBeacon(f));
    assert.equal(beacon.status, 404);

    // Five days on, the sandbox bank has paid 1001: it cannot be voided.
    await api(f, "POST", "/api/sandbox/clock/advance", { seconds: 6 * DAY_SECONDS });
    assert.deepEqual(await rows(f, "SELECT status FROM checks WHERE check_number = 1001"), [
      { status: "paid" },
    ]);
    const auditBefore = await rows(f, "SELECT count(*) AS n FROM audit_log");
    const paid = await json(f, "POST", "/api/checks/1001/void", { reason: "too late" });
    assert.equal(paid.status, 400);
    assert.equal(paid.body.name, "VALIDATION_ERROR");
    assert.deepEqual(
      paid.body.details.map((d: { Field: string; Location: string }) => [d.Field, d.Location]),
      [["number", "path"]],
    );
    assert.match(paid.body.message, /a paid check cannot be voided/);
    assert.deepEqual(
      await rows(f, "SELECT status, void_reason FROM checks WHERE check_number = 1001"),
      [
        { status: "paid", void_reason: null },
      ],
    );
    assert.deepEqual(await rows(f, "SELECT count(*) AS n FROM audit_log"), auditBefore);
  });
});

Deno.test("GET /api/check-files and /api/check-files/{id}: metadata only, the company's own", async () => {
  await withHttpFixture(async (f) => {
    await acmeChecks(f, "D-CHK-3", [{ amount: 100, method: 2 }, { amount: 50, method: 5 }]);
    const listed = await json(f, "GET", "/api/check-files");
    assert.equal(listed.status, 200);
    const byKind = Object.fromEntries(
      listed.body.data.map((file: Record<string, unknown>) => [file.kind, file]),
    );
    assert.deepEqual(Object.keys(byKind).sort(), ["positive_pay", "print"]);
    const positivePay = byKind.positive_pay;
    assert.deepEqual(
      [positivePay.object, positivePay.status, positivePay.issue_count, positivePay.void_count],
      ["check_file", "transmitted", 2, 0],
    );
    assert.equal(positivePay.total, 150);
    assert.equal(byKind.print.positive_pay_file_id, positivePay.id);
    assert.equal(byKind.print.issue_count, 1);
    const kind = await json(f, "GET", "/api/check-files?kind=print");
    assert.deepEqual(kind.body.data.map((file: { id: string }) => file.id), [byKind.print.id]);
    const one = await json(f, "GET", `/api/check-files/${positivePay.id}`);
    assert.deepEqual(one.body, positivePay);
    assert.equal((await json(f, "GET", "/api/check-files/rbt_nope")).status, 404);
    const beacon = await api(
      f,
      "GET",
      `/api/check-files/${positivePay.id}`,
      undefined,
      asBeacon(f),
    );
    assert.equal(beacon.status, 404);
    const badKind = await json(f, "GET", "/api/check-files?kind=nacha");
    assert.deepEqual([badKind.status, badKind.body.details[0].Field], [400, "kind"]);
    const badCursor = await json(f, "GET", "/api/check-files?starting_after=rbt_nope");
    assert.deepEqual([badCursor.status, badCursor.body.details[0].Field], [400, "starting_after"]);
  });
});

Deno.test("a check for a /v1 disbursement prints its claim_id as memo and claim, not the internal id", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 100_000_00);
    const v1 = (path: string, body: unknown) =>
      f.app.request(path, {
        method: "POST",
        headers: {
          Authorization: `Bearer ${f.cast.acmeAutoKeyTest}`,
          "Content-Type": "application/json",
        },
        body: JSON.stringify(body),
      });
    const payee = await v1("/v1/payees", {
      id: "success+check",
      name: "Pat Doe",
      email: "pat@example.test",
      address: { line1: "12 Elm Street", city: "Austin", state: "TX", postal_code: "73301" },
    });
    assert.ok(payee.status === 201 || payee.status === 200, await payee.clone().text());
    const created = await v1("/v1/disbursements", {
      amount: 125,
      claim_id: "CLM-V1-CHK",
      payee: { id: "success+check" },
      modalities: ["check"],
    });
    assert.equal(created.status, 201, await created.clone().text());
    const { id } = await created.json() as { id: string };
    await api(f, "POST", "/api/sandbox/clock/advance", { seconds: 60 });
    const checks = await json(f, "GET", "/api/checks");
    assert.deepEqual(
      checks.body.data.map((c: Record<string, unknown>) => [c.payee_name, c.memo]),
      [["Pat Doe", "CLM-V1-CHK"]],
    );
    assert.notEqual(checks.body.data[0].memo, id);
  });
});
