/**
 * The reconciliation commands through the admin endpoint: recon:import reconciles a test
 * statement at once and stages a live one for a second admin; recon:exceptions lists what is
 * left; recon:resolve resolves with a note, and an adjusting entry posts through the ledger (in
 * live once a second admin approves).
 */
import assert from "node:assert/strict";
import { createApp } from "../routes/app.ts";
import { readNeedsAction } from "../lib/console/needs_action.ts";
import { bankLocal } from "../lib/ach/cutoffs.ts";
import { checkBankSettings } from "../lib/ach/bank_settings.ts";
import { saveBankSettings } from "../lib/ach/bank_store.ts";
import { fundAcmeAuto, type HttpFixture, withHttpFixture } from "./http_fixture.ts";
import { ADMIN_TOKEN, adminCall, makeOperator } from "./operator_helpers.ts";
import { validSettingsJson } from "./bank_helpers.ts";
import { withTempDir } from "./helpers.ts";
import { bai2Statement, statementAccount } from "./recon_helpers.ts";

type Line = [typeCode: string, cents: number, text: string];

async function statementFile(
  dir: string,
  name: string,
  accountNumber: string,
  date: string,
  lines: Line[],
) {
  const path = `${dir}/${name}`;
  const account = statementAccount(
    accountNumber,
    0,
    lines.map(([t, c, text]) => [t, c, null, text]),
  );
  await Deno.writeFile(path, bai2Statement(date, [account], name));
  return path;
}

const balance = async (f: HttpFixture, environment: "test" | "live", code: string) =>
  Number(
    (await f.deps.databases[environment].readClient.execute({
      sql: "SELECT balance_cents FROM ledger_accounts WHERE line_id = ? AND code = ?",
      args: [f.cast.acme.autoLineId, code],
    })).rows[0]?.balance_cents ?? 0,
  );

Deno.test("test: recon:import reconciles at once, recon:exceptions lists the difference, recon:resolve posts the adjusting entry", async () => {
  await withHttpFixture(async (f) => {
    const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
    const now = f.clock.now();
    const ana = await makeOperator(f.deps, { email: "ana@ops.test", role: "admin" }, now);
    const call = adminCall(app, ana.token);
    await fundAcmeAuto(f, 100_000);
    const fundingId = String(
      (await f.deps.databases.test.readClient.execute("SELECT id FROM fundings")).rows[0].id,
    );
    const date = bankLocal(now, "America/New_York").date;
    await withTempDir(async (dir) => {
      const path = await statementFile(dir, "day.bai", "000900000002", date, [
        ["195", 100_000, "INCOMING WIRE"],
        ["699", 2_500, "ACCOUNT FEE"],
      ]);
      const imported = await call("recon:import", {
        tin: f.cast.acme.tin,
        file: path,
        environment: "test",
      });
      assert.equal(imported.status, 200, JSON.stringify(imported.body));
      const importId = imported.body.result.import_id;
      assert.match(importId, /^sti_/);
      assert.deepEqual(imported.body.result, {
        environment: "test",
        file_name: "day.bai",
        import_id: importId,
        sha256: imported.body.result.sha256,
        format: "bai2",
        duplicate: false,
        matched: 1,
        exceptions: 1,
        days: [{
          account: "••••0002",
          role: "settlement",
          date,
          opening_cents: 0,
          closing_cents: 97_500,
          lines: 2,
          matched: 1,
          exceptions: 1,
        }],
        not_read: [],
      });

      const listed = await call("recon:exceptions", { environment: "test" });
      assert.equal(listed.status, 200);
      const [exception] = listed.body.result.exceptions;
      assert.deepEqual(listed.body.result.exceptions, [{
        id: exception.id,
        environment: "test",
        company_id: f.cast.acme.id,
        statement_date: date,
        account: "••••0002",
        side: "bank",
        kind: "other",
        direction: "debit",
        amount_cents: 2_500,
        amount: 25,
        subject_id: null,
        reason: "the bank reported a debit of $25.00 (other, type 699) the service did not expect",
        status: "open",
        note: null,
        ledger_transaction_id: null,
        resolved_by: null,
        resolved_at: null,
        created_at: exception.created_at,
      }]);
      assert.ok(fundingId.length > 0);
      const queue = await readNeedsAction(f.deps.databases.test, null, {
        realNow: now,
        live: f.deps.databases.live.readClient,
      });
      assert.deepEqual(queue.groups.find((g) => g.kind === "recon_exceptions"), {
        kind: "recon_exceptions",
        count: 1,
        items: [{
          companyName: "Acme Mutual",
          path: "/console/reconciliation",
          subject: `account ••••0002 on ${date} (${exception.id})`,
          detail:
            "the bank reported a debit of $25.00 (other, type 699) the service did not expect: resolve it",
          amountCents: 2_500,
          since: Date.parse(exception.created_at),
        }],
      });

      const noNote = await call("recon:resolve", { exception: exception.id, environment: "test" });
      assert.deepEqual([noNote.status, noNote.body.error.code], [400, "usage"]);
      const blank = await call("recon:resolve", {
        exception: exception.id,
        note: " ",
        environment: "test",
      });
      assert.deepEqual(blank.body.error, {
        code: "invalid_input",
        message: "--note: say why (it is kept with the exception)",
      });

      const availableBefore = await balance(f, "test", "available");
      const resolved = await call("recon:resolve", {
        exception: exception.id,
        note: "the bank's monthly account fee",
        "adjust-line": "auto",
        environment: "test",
      });
      assert.equal(resolved.status, 200, JSON.stringify(resolved.body));
      assert.deepEqual(
        [resolved.body.result.status, resolved.body.result.note, resolved.body.result.adjustment],
        ["resolved", "the bank's monthly account fee", {
          kind: "recon.adjustment_out",
          line: "auto",
          from: "available",
          to: "bank",
          amount_cents: 2_500,
        }],
      );
      assert.equal(await balance(f, "test", "available"), availableBefore - 2_500);
      const posted = await f.deps.databases.test.readClient.execute({
        sql: `SELECT t.kind, a.code, e.amount_cents FROM ledger_entries e
                JOIN ledger_transactions t ON t.id = e.transaction_id
                JOIN ledger_accounts a ON a.id = e.account_id
               WHERE t.id = ? ORDER BY e.amount_cents`,
        args: [resolved.body.result.ledger_transaction_id],
      });
      assert.deepEqual(posted.rows.map((r) => [r.kind, r.code, r.amount_cents]), [
        ["recon.adjustment_out", "available", -2_500],
        ["recon.adjustment_out", "bank", 2_500],
      ]);
      const twice = await call("recon:resolve", {
        exception: exception.id,
        note: "again",
        environment: "test",
      });
      assert.deepEqual([twice.status, twice.body.error.code], [409, "exception_resolved"]);
      const audit = await f.deps.databases.test.readClient.execute(
        "SELECT action, object_id, operator_email FROM audit_log WHERE action LIKE 'recon:%' ORDER BY seq",
      );
      assert.deepEqual(audit.rows.map((r) => [r.action, r.operator_email]), [
        ["recon:import", "ana@ops.test"],
        ["recon:resolve", "ana@ops.test"],
      ]);
    });
  });
});

Deno.test("live: a hand import and an adjusting entry each wait for a second admin", async () => {
  await withHttpFixture(async (f) => {
    const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
    const now = f.clock.now();
    const ana = await makeOperator(f.deps, { email: "ana@ops.test", role: "admin" }, now);
    const ben = await makeOperator(f.deps, { email: "ben@ops.test", role: "admin" }, now);
    const checked = checkBankSettings(validSettingsJson(), "live");
    assert.ok(checked.ok);
    await f.deps.databases.live.writer.write((tx) =>
      saveBankSettings(tx, f.deps.secretBox, f.cast.acme.id, checked.value, null, now)
    );
    const date = bankLocal(now, "America/New_York").date;
    await withTempDir(async (dir) => {
      const path = await statementFile(dir, "live.bai", "9876543210", date, [[
        "399",
        5_000,
        "MISC CREDIT",
      ]]);
      const staged = await adminCall(app, ana.token)("recon:import", {
        tin: f.cast.acme.tin,
        file: path,
      });
      assert.equal(staged.status, 200, JSON.stringify(staged.body));
      assert.deepEqual(
        [
          staged.body.result.status,
          staged.body.result.kind,
          staged.body.result.would_apply.exceptions,
        ],
        ["pending_approval", "statement_import.apply", 1],
      );
      const count = async () =>
        Number(
          (await f.deps.databases.live.readClient.execute(
            "SELECT count(*) AS n FROM statement_imports",
          )).rows[0].n,
        );
      assert.equal(await count(), 0, "nothing is imported before the approval");
      const approved = await adminCall(app, ben.token)("approvals:approve", {
        id: staged.body.result.approval_id,
      });
      assert.equal(approved.status, 200, JSON.stringify(approved.body));
      assert.equal(await count(), 1);

      const [exception] =
        (await adminCall(app, ana.token)("recon:exceptions", {})).body.result.exceptions;
      assert.deepEqual([exception.side, exception.direction, exception.amount_cents], [
        "bank",
        "credit",
        5_000,
      ]);
      const asked = await adminCall(app, ana.token)("recon:resolve", {
        exception: exception.id,
        note: "interest credited by the bank",
        "adjust-line": "auto",
      });
      assert.equal(asked.status, 200, JSON.stringify(asked.body));
      assert.deepEqual(
        [asked.body.result.status, asked.body.result.kind, asked.body.result.would_post],
        ["pending_approval", "recon_exception.adjust", {
          kind: "recon.adjustment_in",
          line: "auto",
          from: "bank",
          to: "available",
          amount_cents: 5_000,
        }],
      );
      const before = await balance(f, "live", "available");
      const decided = await adminCall(app, ben.token)("approvals:approve", {
        id: asked.body.result.approval_id,
      });
      assert.equal(decided.status, 200, JSON.stringify(decided.body));
      assert.equal(await balance(f, "live", "available"), before + 5_000);
      const after =
        (await adminCall(app, ana.token)("recon:exceptions", { status: "resolved" })).body.result
          .exceptions;
      assert.deepEqual(
        after.map((
          x: Record<string, unknown>,
        ) => [x.id, x.status, x.note, typeof x.ledger_transaction_id]),
        [[exception.id, "resolved", "interest credited by the bank", "string"]],
      );
    });
  });
});
