/**
 * One in-doubt resolution for every rail (issue 28, case 9): `rails:resolve` and the console's
 * action take an ACH file, a check file or a PayPal batch alike (a second admin in live), the
 * console's overview and /metrics count the batches in doubt, and `rails:batches` shows each
 * transmission attempt with its answer.
 */
import assert from "node:assert/strict";
import { runAdminCommand } from "../lib/admin/commands.ts";
import type { CommandRequest } from "../lib/admin/command_kit.ts";
import type { Environment } from "../lib/platform/config.ts";
import { newId } from "../lib/platform/keys.ts";
import { consoleAs, textOf } from "./console_helpers.ts";
import { type HttpFixture, withHttpFixture } from "./http_fixture.ts";
import { makeOperator, type TestOperator } from "./operator_helpers.ts";

function run(f: HttpFixture, operator: TestOperator, name: string, flags: Record<string, string>) {
  const request: CommandRequest = {
    databases: f.deps.databases,
    now: f.clock.now(),
    keyGraceSeconds: 86_400,
    secretBox: f.deps.secretBox,
    runtimeSettings: { offerTtlDays: 90, baseUrl: "http://127.0.0.1:8000" },
    dev: false,
    origin: "cli",
    sessionToken: operator.token,
    input: {},
  };
  return runAdminCommand(request, name, flags);
}

/**
 * A PayPal batch of Acme left in doubt (its transmission started over PayPal's 30 days of
 * memory ago), with the attempt that never got its answer.
 */
async function paypalBatchInDoubt(f: HttpFixture, environment: Environment): Promise<string> {
  const id = newId("rb");
  const at = f.clock.now() - 31 * 86_400_000;
  await f.deps.databases[environment].writer.write(async (tx) => {
    await tx.execute({
      sql: `INSERT INTO rail_batches (id, company_id, rail, status, entry_count, total_cents,
              cutoff_at, error, created_at)
            VALUES (?, ?, 'paypal', 'in_doubt', 0, 0, ?, 'the transmission was interrupted', ?)`,
      args: [id, f.cast.acme.id, at, at],
    });
    await tx.execute({
      sql: `INSERT INTO rail_batch_attempts (id, batch_id, attempt, started_at, answered_at,
              outcome, detail)
            VALUES (?, ?, 1, ?, ?, 'in_doubt', 'PayPal did not answer within 30 s')`,
      args: [newId("rba"), id, at, at + 30_000],
    });
  });
  return id;
}

const statusOf = async (f: HttpFixture, environment: Environment, id: string) =>
  (await f.deps.databases[environment].readClient.execute({
    sql: "SELECT status FROM rail_batches WHERE id = ?",
    args: [id],
  })).rows[0].status;

Deno.test("rails:resolve: an in-doubt PayPal batch is resolved by the one command: in test at once, in live once a second admin approves", async () => {
  await withHttpFixture(async (f) => {
    const now = f.clock.now();
    const alice = await makeOperator(f.deps, { email: "alice@ops.test", role: "admin" }, now);
    const bruno = await makeOperator(f.deps, { email: "bruno@ops.test", role: "admin" }, now);
    const viewer = await makeOperator(f.deps, { email: "viewer@ops.test", role: "viewer" }, now);
    const live = await paypalBatchInDoubt(f, "live");
    const test = await paypalBatchInDoubt(f, "test");

    const listed = await run(f, viewer, "rails:batches", { status: "in_doubt" });
    assert.ok(listed.ok);
    const [shown] = listed.value.batches as Record<string, unknown>[];
    assert.deepEqual(
      [shown.id, shown.rail, shown.status, shown.attempts],
      [live, "paypal", "in_doubt", [{
        attempt: 1,
        started_at: new Date(now - 31 * 86_400_000).toISOString(),
        answered_at: new Date(now - 31 * 86_400_000 + 30_000).toISOString(),
        outcome: "in_doubt",
        detail: "PayPal did not answer within 30 s",
      }]],
    );
    const denied = await run(f, viewer, "rails:resolve", { file: live, as: "transmitted" });
    assert.equal(!denied.ok && denied.code, "role_insufficient");
    const bad = await run(f, alice, "rails:resolve", { file: live, as: "sent" });
    assert.deepEqual(bad.ok ? null : [bad.code, bad.field], ["invalid_input", "as"]);

    const atOnce = await run(f, alice, "rails:resolve", {
      file: test,
      as: "not_received",
      environment: "test",
    });
    assert.deepEqual(atOnce.ok && atOnce.value, {
      environment: "test",
      file_id: test,
      rail: "paypal",
      status: "voided",
      approval_id: null,
    });

    const requested = await run(f, alice, "rails:resolve", { file: live, as: "not_received" });
    assert.ok(requested.ok, requested.ok ? "" : requested.message);
    assert.equal(requested.value.status, "in_doubt");
    assert.equal(await statusOf(f, "live", live), "in_doubt", "waits for the second admin");
    const self = await run(f, alice, "approvals:approve", {
      id: String(requested.value.approval_id),
    });
    assert.ok(!self.ok, "the requester cannot approve");
    const approved = await run(f, bruno, "approvals:approve", {
      id: String(requested.value.approval_id),
    });
    assert.ok(approved.ok, approved.ok ? "" : approved.message);
    assert.equal(await statusOf(f, "live", live), "voided");
    const audit = await f.deps.databases.live.readClient.execute(
      "SELECT operator_email FROM audit_log WHERE action = 'paypal:resolve'",
    );
    assert.deepEqual(audit.rows.map((row) => row.operator_email), ["bruno@ops.test"]);
    const again = await run(f, alice, "rails:resolve", { file: live, as: "transmitted" });
    assert.equal(!again.ok && again.code, "batch_not_in_doubt");
  });
});

Deno.test("console: the overview, the Needs action queue and /metrics count a batch in doubt, its page shows its attempts, and an admin resolves it there", async () => {
  await withHttpFixture(async (f) => {
    const id = await paypalBatchInDoubt(f, "test");
    const { browser } = await consoleAs(f, { email: "admin@ops.test", role: "admin" });
    const overview = await browser.get("/console?env=test");
    assert.match(textOf(overview.html), /1 bank file in doubt/);
    const metrics = await (await f.app.request("/metrics")).text();
    assert.match(metrics, /needs_action\{environment="test",kind="files_in_doubt"\} 1/);
    assert.match(metrics, /needs_action\{environment="live",kind="files_in_doubt"\} 0/);
    const queue = await browser.get("/console/needs-action?env=test");
    assert.match(queue.html, new RegExp(`/console/bank-files/batches/${id}`));

    const detail = await browser.get(`/console/bank-files/batches/${id}`);
    assert.equal(detail.status, 200);
    assert.match(textOf(detail.html), /PayPal did not answer within 30 s/);
    const list = await browser.get("/console/bank-files/batches");
    assert.match(textOf(list.html), new RegExp(id));
    const resolved = await browser.post(`/console/bank-files/batches/${id}/not-received`, {});
    assert.equal(resolved.status, 303);
    assert.match(String(resolved.location), /done=resolved/);
    assert.equal(await statusOf(f, "test", id), "voided");
    const after = await browser.get("/console?env=test");
    assert.match(textOf(after.html), /Nothing needs attention/);
  });
});
