/**
 * Dual control through the admin endpoint: a live wire recorded by hand, a funding return and a
 * new admin wait for a different admin; the requester cannot approve; a rejection and an expiry
 * change nothing; two racing approvals post the wire once; each step is audited.
 */
import assert from "node:assert/strict";
import { createApp } from "../routes/app.ts";
import { addFunds } from "../lib/funding/store.ts";
import { sandboxBankSettings } from "../lib/ach/bank_settings.ts";
import { saveBankSettings } from "../lib/ach/bank_store.ts";
import { approveApproval } from "../lib/operators/approvals.ts";
import { approvedActions } from "../lib/admin/approved_actions.ts";
import { APPROVAL_TTL_MS } from "../lib/operators/rules.ts";
import { signIn } from "../lib/operators/service.ts";
import { totpCodeAt } from "../lib/operators/totp.ts";
import { verifyLedger } from "../lib/ledger/reports.ts";
import { type HttpFixture, withHttpFixture } from "./http_fixture.ts";
import { enroll } from "../lib/operators/enrollment.ts";
import {
  ADMIN_TOKEN,
  adminCall,
  enrollmentCodeOf,
  makeOperator,
  operatorDepsOf,
  totpSecretOf,
} from "./operator_helpers.ts";

/** A pending live funding of Acme's auto line. */
async function pendingLiveFunding(
  f: HttpFixture,
  cents: number,
  method: "WireTransfer" | "ACH",
): Promise<string> {
  const added = await f.deps.databases.live.writer.write(async (tx) => {
    // A live ACH funding debits the company's funding account: that needs its bank settings.
    if (method === "ACH") {
      const settings = sandboxBankSettings("ACME MUTUAL");
      await saveBankSettings(tx, f.deps.secretBox, f.cast.acme.id, settings, null, f.clock.now());
    }
    return await addFunds(
      tx,
      {
        companyId: f.cast.acme.id,
        lineId: f.cast.acme.autoLineId,
        paymentMethod: method,
        amountCents: cents,
        description: "live funding",
        largeDisbursement: false,
        requestFingerprint: crypto.randomUUID(),
      },
      "live",
      f.clock.now(),
    );
  });
  if (!added.ok) throw new Error(added.message);
  return added.value.funding.id;
}

async function liveState(f: HttpFixture, fundingId: string) {
  const live = f.deps.databases.live.readClient;
  const funding = await live.execute({
    sql: "SELECT status FROM fundings WHERE id = ?",
    args: [fundingId],
  });
  const available = await live.execute({
    sql: "SELECT balance_cents FROM ledger_accounts WHERE line_id = ? AND code = 'available'",
    args: [f.cast.acme.autoLineId],
  });
  const credits = await live.execute({
    sql:
      "SELECT count(*) AS n FROM ledger_transactions WHERE funding_id = ? AND kind = 'funding.wire_received'",
    args: [fundingId],
  });
  return {
    status: funding.rows[0].status,
    available: Number(available.rows[0]?.balance_cents ?? 0),
    credits: Number(credits.rows[0].n),
  };
}

async function auditActions(f: HttpFixture, objectId: string): Promise<string[]> {
  const { rows } = await f.deps.databases.live.readClient.execute({
    sql: "SELECT action, operator_email FROM audit_log WHERE object_id = ? ORDER BY seq",
    args: [objectId],
  });
  return rows.map((row) => `${row.action} by ${row.operator_email ?? "nobody"}`);
}

async function threeAdmins(f: HttpFixture) {
  const now = f.clock.now();
  return {
    alice: await makeOperator(f.deps, { email: "alice@ops.test", role: "admin" }, now),
    bruno: await makeOperator(f.deps, { email: "bruno@ops.test", role: "admin" }, now),
    chen: await makeOperator(f.deps, { email: "chen@ops.test", role: "admin" }, now),
  };
}

Deno.test("a live wire recorded by hand waits for a second admin; two racing approvals post it once", async () => {
  await withHttpFixture(async (f) => {
    const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
    const { alice, bruno, chen } = await threeAdmins(f);
    const fundingId = await pendingLiveFunding(f, 2_500_000_00, "WireTransfer");
    const before = await liveState(f, fundingId);
    assert.deepEqual(before, { status: "Pending", available: 0, credits: 0 });

    const requested = await adminCall(app, alice.token)("wire:receive", { funding: fundingId });
    assert.equal(requested.status, 200);
    const approvalId = requested.body.result.approval_id;
    assert.match(approvalId, /^apr_/);
    assert.deepEqual({ ...requested.body.result, approval_id: "…" }, {
      environment: "live",
      approval_id: "…",
      status: "pending_approval",
      kind: "wire.receive",
      funding_id: fundingId,
      summary: `wire:receive ${fundingId}: WireTransfer of $2,500,000.00`,
      expires_at: new Date(f.clock.now() + APPROVAL_TTL_MS).toISOString(),
    });
    assert.deepEqual(await liveState(f, fundingId), before, "nothing moves until approved");
    const again = await adminCall(app, bruno.token)("wire:receive", { funding: fundingId });
    assert.deepEqual([again.status, again.body.error.code], [409, "approval_pending"]);

    const own = await adminCall(app, alice.token)("approvals:approve", { id: approvalId });
    assert.deepEqual([own.status, own.body.error], [409, {
      code: "approval_own_request",
      message: `approval ${approvalId} was requested by you: another admin must decide it`,
    }]);
    assert.deepEqual(await liveState(f, fundingId), before);
    const ownReject = await adminCall(app, alice.token)("approvals:reject", { id: approvalId });
    assert.equal(ownReject.body.error.code, "approval_own_request", "nor reject it");

    const clerk = await makeOperator(
      f.deps,
      { email: "clerk@ops.test", role: "clerk" },
      f.clock.now(),
    );
    const byClerk = await adminCall(app, clerk.token)("approvals:approve", { id: approvalId });
    assert.deepEqual([byClerk.status, byClerk.body.error.code], [403, "role_insufficient"]);

    const listed = await adminCall(app, clerk.token)("approvals:list", {});
    assert.deepEqual(
      listed.body.result.approvals.map((
        a: Record<string, unknown>,
      ) => [a.id, a.status, a.requested_by]),
      [[approvalId, "pending_approval", "alice@ops.test"]],
    );

    // Bruno and Chen approve at the same moment: one runs the action, the other is refused.
    const [first, second] = await Promise.all([
      adminCall(app, bruno.token)("approvals:approve", { id: approvalId }),
      adminCall(app, chen.token)("approvals:approve", { id: approvalId }),
    ]);
    const statuses = [first.status, second.status].sort();
    assert.deepEqual(statuses, [200, 409]);
    const winner = first.status === 200 ? first : second;
    const loser = first.status === 200 ? second : first;
    assert.deepEqual(loser.body.error, {
      code: "approval_not_pending",
      message: `approval ${approvalId} is approved, not pending`,
    });
    assert.deepEqual(winner.body.result.result, { funding_id: fundingId, status: "Completed" });
    assert.equal(winner.body.result.status, "approved");
    assert.deepEqual(await liveState(f, fundingId), {
      status: "Completed",
      available: 2_500_000_00,
      credits: 1,
    });
    assert.deepEqual(await verifyLedger(f.deps.databases.live.readClient), []);

    const approver = winner.body.result.decided_by;
    assert.deepEqual(await auditActions(f, approvalId), [
      "approval:request by alice@ops.test",
      `approval:approve by ${approver}`,
    ]);
    assert.deepEqual(await auditActions(f, fundingId), [`wire:receive by ${approver}`]);
    // The same race where both approvals are sure to share one write group: the check inside
    // the unit, not a read before it, decides.
    const wire2 = await pendingLiveFunding(f, 1_000, "WireTransfer");
    const asked = await adminCall(app, alice.token)("wire:receive", { funding: wire2 });
    const deps = operatorDepsOf(f.deps);
    const as = (operator: { id: string; email: string }) => ({
      operator: { id: operator.id, email: operator.email },
      origin: "test",
    });
    const raced = await Promise.all([
      approveApproval(
        deps,
        as(bruno),
        asked.body.result.approval_id,
        f.clock.now(),
        approvedActions,
      ),
      approveApproval(
        deps,
        as(chen),
        asked.body.result.approval_id,
        f.clock.now(),
        approvedActions,
      ),
    ]);
    assert.deepEqual(
      raced.map((r) => r.ok ? "approved" : r.code).sort(),
      ["approval_not_pending", "approved"],
    );
    assert.deepEqual(await liveState(f, wire2), {
      status: "Completed",
      available: 2_500_000_00 + 1_000,
      credits: 1,
    });
    const unknown = await adminCall(app, bruno.token)("approvals:approve", { id: "apr_missing" });
    assert.deepEqual([unknown.status, unknown.body.error], [404, {
      code: "approval_not_found",
      message: "no approval apr_missing",
    }]);
  });
});

Deno.test("a rejected or expired approval changes nothing; a funding return runs once approved", async () => {
  await withHttpFixture(async (f) => {
    const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
    const { alice, bruno } = await threeAdmins(f);
    const wire = await pendingLiveFunding(f, 10_000, "WireTransfer");
    const requested = await adminCall(app, alice.token)("wire:receive", { funding: wire });
    const approvalId = requested.body.result.approval_id;
    const rejected = await adminCall(app, bruno.token)("approvals:reject", {
      id: approvalId,
      reason: "no such wire on the statement",
    });
    assert.deepEqual([rejected.status, rejected.body.result.status], [200, "rejected"]);
    assert.deepEqual(await liveState(f, wire), { status: "Pending", available: 0, credits: 0 });
    const late = await adminCall(app, bruno.token)("approvals:approve", { id: approvalId });
    assert.deepEqual([late.status, late.body.error.code], [409, "approval_not_pending"]);
    assert.deepEqual(await liveState(f, wire), { status: "Pending", available: 0, credits: 0 });

    // Asked again, it lapses 24 hours later: a millisecond before, it could still be approved.
    const second = await adminCall(app, alice.token)("wire:receive", { funding: wire });
    const secondId = second.body.result.approval_id;
    f.clock.advance(APPROVAL_TTL_MS);
    // Sessions last 8 hours at most: the admins sign in again a day later.
    const deps = operatorDepsOf(f.deps);
    const now = f.clock.now();
    const fresh = await signIn(deps, "test", {
      email: bruno.email,
      password: bruno.password,
      code: totpCodeAt(bruno.totpSecret, now),
    }, now);
    assert.ok(fresh.ok);
    const expired = await adminCall(app, fresh.value.token)("approvals:approve", { id: secondId });
    assert.deepEqual([expired.status, expired.body.error], [409, {
      code: "approval_expired",
      message: `approval ${secondId} expired at ${new Date(now).toISOString()}`,
    }]);
    assert.deepEqual(await liveState(f, wire), { status: "Pending", available: 0, credits: 0 });
    const all = await adminCall(app, fresh.value.token)("approvals:list", { status: "all" });
    assert.deepEqual(
      all.body.result.approvals.map((a: Record<string, unknown>) => [a.id, a.status]),
      [[secondId, "expired"], [approvalId, "rejected"]],
    );
    assert.deepEqual(await auditActions(f, approvalId), [
      "approval:request by alice@ops.test",
      "approval:reject by bruno@ops.test",
    ]);
    assert.deepEqual(await auditActions(f, secondId), [
      "approval:request by alice@ops.test",
      "approval:expire by nobody",
    ]);

    // An ACH funding returned by the bank, recorded by hand, once a second admin approves.
    const aliceAgain = await signIn(deps, "test", {
      email: alice.email,
      password: alice.password,
      code: totpCodeAt(alice.totpSecret, now),
    }, now);
    assert.ok(aliceAgain.ok);
    const ach = await pendingLiveFunding(f, 20_000, "ACH");
    const returnAsked = await adminCall(app, aliceAgain.value.token)("funding:return", {
      funding: ach,
    });
    const status = async () =>
      (await f.deps.databases.live.readClient.execute({
        sql: "SELECT status FROM fundings WHERE id = ?",
        args: [ach],
      })).rows[0].status;
    assert.equal(await status(), "Pending");
    const approved = await adminCall(app, fresh.value.token)("approvals:approve", {
      id: returnAsked.body.result.approval_id,
    });
    assert.deepEqual(approved.body.result.result, { funding_id: ach, status: "Returned" });
    assert.equal(await status(), "Returned");

    // In the test environment the same command acts at once (the sandbox has no second admin).
    const testFunding = await f.deps.databases.test.writer.write((tx) =>
      addFunds(
        tx,
        {
          companyId: f.cast.acme.id,
          lineId: f.cast.acme.autoLineId,
          paymentMethod: "ACH",
          amountCents: 5_000,
          description: "test",
          largeDisbursement: false,
          requestFingerprint: "x",
        },
        "test",
        now,
      )
    );
    assert.ok(testFunding.ok);
    const atOnce = await adminCall(app, aliceAgain.value.token)("funding:return", {
      funding: testFunding.value.funding.id,
      environment: "test",
    });
    assert.deepEqual(atOnce.body, {
      result: { environment: "test", funding_id: testFunding.value.funding.id, status: "Returned" },
    });
  });
});

Deno.test("a new admin is created only when a second admin approves, and enrols by a code nobody else sees", async () => {
  await withHttpFixture(async (f) => {
    const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
    const { alice, bruno } = await threeAdmins(f);
    const requested = await adminCall(app, alice.token)(
      "operator:create",
      { email: "dana@ops.test", role: "admin" },
      { password: "a password alice chose" },
    );
    assert.equal(requested.status, 200);
    assert.equal(requested.body.result.status, "pending_approval");
    // Before: the requester chose the new admin's password and was shown its TOTP URI, so
    // approving a "colleague" could hand the requester a second identity.
    assert.equal(requested.body.result.totp_uri, undefined);
    assert.equal(requested.body.result.password, undefined);
    const operators = () =>
      f.deps.databases.live.readClient.execute(
        "SELECT email, password_hash FROM operators WHERE email = 'dana@ops.test'",
      );
    assert.equal((await operators()).rows.length, 0, "no admin before the approval");
    const stored = await f.deps.databases.live.readClient.execute({
      sql: "SELECT payload FROM approvals WHERE id = ?",
      args: [requested.body.result.approval_id],
    });
    assert.deepEqual(JSON.parse(String(stored.rows[0].payload)), {
      email: "dana@ops.test",
      company_scope: null,
    });

    const approved = await adminCall(app, bruno.token)("approvals:approve", {
      id: requested.body.result.approval_id,
    });
    assert.equal(approved.status, 200);
    assert.deepEqual(
      [approved.body.result.result.enrollment, approved.body.result.result.enrollment_code],
      ["emailed", undefined],
      "the approver is not shown the code either",
    );
    assert.deepEqual((await operators()).rows.map((row) => row.password_hash), [""]);
    const now = f.clock.now();
    const deps = operatorDepsOf(f.deps);
    const chosen = await signIn(deps, "test", {
      email: "dana@ops.test",
      password: "a password alice chose",
      code: "000000",
    }, now);
    assert.ok(!chosen.ok && chosen.code === "sign_in_failed", "nobody's password works yet");
    const enrolled = await enroll(deps, "test", {
      code: await enrollmentCodeOf(f.deps, "dana@ops.test"),
      password: "dana's very own password",
    }, now);
    assert.ok(enrolled.ok);
    const dana = await signIn(deps, "test", {
      email: "dana@ops.test",
      password: "dana's very own password",
      code: totpCodeAt(totpSecretOf(enrolled.value.totpUri), now),
    }, now);
    assert.ok(dana.ok && dana.value.operator.role === "admin");

    // A scoped admin decides nothing about operators, who are installation-wide.
    const scoped = await makeOperator(f.deps, {
      email: "scoped@ops.test",
      role: "admin",
      companies: f.cast.acme.id,
    }, now);
    const another = await adminCall(app, alice.token)("operator:create", {
      email: "erin@ops.test",
      role: "admin",
    });
    const byScoped = await adminCall(app, scoped.token)("approvals:approve", {
      id: another.body.result.approval_id,
    });
    assert.deepEqual([byScoped.status, byScoped.body.error.code], [403, "operator_scoped"]);
  });
});
