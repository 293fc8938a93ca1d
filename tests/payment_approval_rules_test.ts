/**
 * Payment approval rules: a payout over a company's threshold waits in pending_approval before
 * its payee is offered it; any clerk or admin of the company approves (it goes on) or rejects it
 * (canceled, its hold released); a viewer cannot; a live rule change waits for a second admin;
 * both surfaces and the events show the wait and the decision.
 */
import assert from "node:assert/strict";
import { createApp } from "../routes/app.ts";
import { ruleHolding } from "../lib/payouts/approval_rules.ts";
import { eventCatalogue, surfaceAStatus, surfaceBStatus } from "../lib/payouts/states.ts";
import { verifyLedger } from "../lib/ledger/reports.ts";
import { withHttpFixture } from "./http_fixture.ts";
import { ADMIN_TOKEN, adminCall, makeOperator } from "./operator_helpers.ts";
import { consoleAs, createPayout, fundLine, lineBalances, v1Call } from "./console_helpers.ts";

Deno.test("the rule that holds a payout: its line and an allowed method, over (not at) the lowest threshold", () => {
  const rule = (
    id: string,
    thresholdCents: number,
    lineId: string | null = null,
    paymentMethodId: number | null = null,
  ) => ({ id, companyId: "co", lineId, paymentMethodId, thresholdCents, createdAt: 0 });
  const rules = [
    rule("every", 100_000),
    rule("auto", 50_000, "ln_auto"),
    rule("check", 10_000, null, 2),
  ];
  const payout = (amountCents: number, lineId = "ln_home", methods = [1]) => ({
    lineId,
    amountCents,
    allowedPaymentMethodIds: methods,
  });
  const cases: [ReturnType<typeof payout>, string | null][] = [
    [payout(100_000), null],
    [payout(100_001), "every"],
    [payout(50_001, "ln_auto"), "auto"],
    [payout(50_000, "ln_auto"), null],
    [payout(10_001, "ln_home", [1, 2]), "check"],
    [payout(10_001, "ln_home", [1]), null],
    [payout(200_000, "ln_auto", [2]), "check"],
  ];
  for (const [input, expected] of cases) {
    assert.equal(ruleHolding(rules, input)?.id ?? null, expected, JSON.stringify(input));
  }
  assert.deepEqual(surfaceAStatus.pending_approval, { name: "PendingApproval", id: 11 });
  assert.equal(surfaceBStatus.pending_approval, "pending_approval");
  assert.deepEqual(
    [
      eventCatalogue.pending_approval.id,
      eventCatalogue.payment_approved.id,
      eventCatalogue.payment_rejected.id,
    ],
    [13, 14, 15],
  );
});

Deno.test("a payout over the rule waits in pending_approval; a clerk approves one and rejects another; a viewer cannot", async () => {
  await withHttpFixture(async (f) => {
    const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
    const now = f.clock.now();
    const admin = await makeOperator(f.deps, { email: "admin@ops.test", role: "admin" }, now);
    const clerk = await makeOperator(f.deps, { email: "clerk@ops.test", role: "clerk" }, now);
    const viewer = await makeOperator(f.deps, { email: "viewer@ops.test", role: "viewer" }, now);
    const line = { companyId: f.cast.acme.id, lineId: f.cast.acme.autoLineId };
    await fundLine(f, line, 1_000_000);

    const set = await adminCall(app, admin.token)("payment-rule:set", {
      tin: f.cast.acme.tin,
      threshold: "1000.00",
      environment: "test",
    });
    assert.deepEqual(set.body.result, {
      environment: "test",
      rule: {
        line_id: null,
        payment_method_id: null,
        threshold_cents: 100_000,
        threshold: "$1,000.00",
      },
      removed: false,
    });

    const at = await createPayout(f, {
      key: f.cast.acmeAutoKeyTest,
      payeeId: "payee-at",
      email: "at@example.test",
      claimId: "CLM-AT",
      amount: 1000,
    });
    const over = await createPayout(f, {
      key: f.cast.acmeAutoKeyTest,
      payeeId: "payee-over",
      email: "over@example.test",
      claimId: "CLM-OVER",
      amount: 2500,
    });
    const status = async (id: string) =>
      (await (await v1Call(f, f.cast.acmeAutoKeyTest, "GET", `/v1/disbursements/${id}`)).json())
        .status;
    assert.equal(await status(at.disbursementId), "created", "at the threshold it goes on");
    assert.equal(await status(over.disbursementId), "pending_approval");
    await v1Call(f, f.cast.acmeAutoKeyTest, "POST", "/v1/payees", {
      id: "p2",
      email: "p2@e.test",
      name: "P Two",
    });
    const answered = await v1Call(f, f.cast.acmeAutoKeyTest, "POST", "/v1/disbursements", {
      amount: 1000.01,
      claim_id: "CLM-ANSWER",
      payee: { id: "p2" },
      modalities: ["ach"],
    });
    assert.equal((await answered.json()).status, "pending_approval", "the create's own answer");
    const offers = async (payoutId: string) =>
      Number(
        (await f.deps.databases.test.readClient.execute({
          sql:
            "SELECT count(*) AS n FROM scheduled_jobs WHERE kind = 'payout.offer' AND subject_id = ?",
          args: [payoutId],
        })).rows[0].n,
      );
    assert.equal(await offers(over.payoutId), 0, "its payee is not told");

    const listed = await adminCall(app, viewer.token)("payouts:pending-approval", {
      environment: "test",
    });
    const pendingIds = listed.body.result.payouts.map((p: { id: string }) => p.id);
    assert.deepEqual([pendingIds.length, pendingIds[0]], [2, over.payoutId], "oldest first");
    const byViewer = await adminCall(app, viewer.token)("payouts:approve", {
      payout: over.payoutId,
      environment: "test",
    });
    assert.deepEqual([byViewer.status, byViewer.body.error.code], [403, "role_insufficient"]);
    const approved = await adminCall(app, clerk.token)("payouts:approve", {
      payout: over.payoutId,
      environment: "test",
    });
    assert.deepEqual(approved.body, {
      result: { environment: "test", payout_id: over.payoutId, status: "created" },
    });
    assert.equal(await offers(over.payoutId), 1, "approved, its offer is scheduled");
    const again = await adminCall(app, clerk.token)("payouts:approve", {
      payout: over.payoutId,
      environment: "test",
    });
    assert.deepEqual([again.status, again.body.error.code], [409, "payout_not_pending_approval"]);

    const before = await lineBalances(f, line.lineId);
    const rejectedOne = await createPayout(f, {
      key: f.cast.acmeAutoKeyTest,
      payeeId: "payee-no",
      email: "no@example.test",
      claimId: "CLM-NO",
      amount: 5000,
    });
    assert.equal(await status(rejectedOne.disbursementId), "pending_approval");
    const rejected = await adminCall(app, clerk.token)("payouts:reject", {
      payout: rejectedOne.payoutId,
      reason: "not this claim",
      environment: "test",
    });
    assert.equal(rejected.body.result.status, "canceled");
    assert.equal(await status(rejectedOne.disbursementId), "canceled");
    assert.deepEqual(await lineBalances(f, line.lineId), before, "its hold is released");
    assert.deepEqual(await verifyLedger(f.deps.databases.test.readClient), []);

    const { rows } = await f.deps.databases.test.readClient.execute({
      sql: `SELECT e.event_type_id FROM events e JOIN payouts p ON p.id = e.payout_id
             WHERE p.id IN (?, ?) ORDER BY e.rowid`,
      args: [over.payoutId, rejectedOne.payoutId],
    });
    assert.deepEqual(rows.map((row) => Number(row.event_type_id)), [1, 13, 14, 1, 13, 15, 9]);
    const audit = await f.deps.databases.test.readClient.execute(
      "SELECT action, operator_email FROM audit_log WHERE action LIKE 'payout:%' ORDER BY seq",
    );
    assert.deepEqual(audit.rows.map((row) => [row.action, row.operator_email]), [
      ["payout:approve", "clerk@ops.test"],
      ["payout:reject", "clerk@ops.test"],
    ]);
  });
});

Deno.test("a live payment rule takes effect only once a second admin approves it", async () => {
  await withHttpFixture(async (f) => {
    const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
    const now = f.clock.now();
    const ana = await makeOperator(f.deps, { email: "ana@ops.test", role: "admin" }, now);
    const ben = await makeOperator(f.deps, { email: "ben@ops.test", role: "admin" }, now);
    const asked = await adminCall(app, ana.token)("payment-rule:set", {
      tin: f.cast.acme.tin,
      threshold: "50000",
      method: "check",
    });
    assert.deepEqual([asked.body.result.status, asked.body.result.kind], [
      "pending_approval",
      "payment_rule.change",
    ]);
    const list = async () =>
      (await adminCall(app, ben.token)("payment-rule:list", { tin: f.cast.acme.tin })).body.result
        .rules;
    assert.deepEqual(await list(), []);
    const own = await adminCall(app, ana.token)("approvals:approve", {
      id: asked.body.result.approval_id,
    });
    assert.equal(own.body.error.code, "approval_own_request");
    const approved = await adminCall(app, ben.token)("approvals:approve", {
      id: asked.body.result.approval_id,
    });
    assert.equal(approved.status, 200, JSON.stringify(approved.body));
    assert.deepEqual(await list(), [{
      line_id: null,
      payment_method_id: 2,
      threshold_cents: 5_000_000,
      threshold: "$50,000.00",
    }]);
    // Loosening it (removing it) waits for a second admin too.
    const removal = await adminCall(app, ana.token)("payment-rule:remove", {
      tin: f.cast.acme.tin,
      method: "2",
    });
    assert.equal(removal.body.result.status, "pending_approval");
    assert.equal((await list()).length, 1);
  });
});

Deno.test("console: a clerk approves a held payment on its page; a viewer sees no button and is refused", async () => {
  await withHttpFixture(async (f) => {
    const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
    const admin = await makeOperator(
      f.deps,
      { email: "admin@ops.test", role: "admin" },
      f.clock.now(),
    );
    await fundLine(f, { companyId: f.cast.acme.id, lineId: f.cast.acme.autoLineId }, 1_000_000);
    await adminCall(app, admin.token)("payment-rule:set", {
      tin: f.cast.acme.tin,
      threshold: "100",
      environment: "test",
    });
    const held = await createPayout(f, {
      key: f.cast.acmeAutoKeyTest,
      payeeId: "payee-held",
      email: "held@example.test",
      claimId: "CLM-HELD",
      amount: 500,
    });
    const { browser: viewer } = await consoleAs(f, { email: "vic@ops.test", role: "viewer" });
    const seen = await viewer.get(`/console/payouts/${held.payoutId}?env=test`);
    assert.match(seen.html, /Pending approval/);
    assert.doesNotMatch(seen.html, /Approve payment/);
    const refused = await viewer.post(`/console/payouts/${held.payoutId}/approve?env=test`, {});
    assert.equal(refused.status, 403);
    const { browser: clerk } = await consoleAs(f, { email: "cleo@ops.test", role: "clerk" });
    const page = await clerk.get(`/console/payouts/${held.payoutId}?env=test`);
    assert.match(page.html, /Approve payment/);
    const approved = await clerk.post(`/console/payouts/${held.payoutId}/approve?env=test`, {});
    assert.equal(approved.status, 303, approved.html.slice(0, 300));
    const { rows } = await f.deps.databases.test.readClient.execute({
      sql: "SELECT status FROM payouts WHERE id = ?",
      args: [held.payoutId],
    });
    assert.equal(rows[0].status, "created");
    const audit = await f.deps.databases.test.readClient.execute(
      "SELECT origin, operator_email FROM audit_log WHERE action = 'payout:approve'",
    );
    assert.equal(audit.rows[0].operator_email, "cleo@ops.test");
    assert.match(String(audit.rows[0].origin), /^console /);
  });
});
