/**
 * The checks:* commands of the operator CLI, run as the CLI runs them (runAdminCommand), on
 * Acme's test-environment checks: the register, its files and their download, voids, paid-items
 * imports and the resolution of their exceptions. Roles, company scope and audit rows checked.
 */
import assert from "node:assert/strict";
import { runAdminCommand } from "../lib/admin/commands.ts";
import type { CommandRequest } from "../lib/admin/command_kit.ts";
import { sealCheckFile } from "../lib/checks/files_store.ts";
import { sha256Hex } from "../lib/platform/keys.ts";
import { acmeChecks } from "./checks_http_helpers.ts";
import { type HttpFixture, withHttpFixture } from "./http_fixture.ts";
import { makeOperator, type TestOperator } from "./operator_helpers.ts";

interface Cast {
  admin: TestOperator;
  viewer: TestOperator;
  clerk: TestOperator;
  /** A clerk of Beacon only. */
  beaconClerk: TestOperator;
}

async function operators(f: HttpFixture): Promise<Cast> {
  const now = f.clock.now();
  return {
    admin: await makeOperator(f.deps, { email: "admin@ops.test", role: "admin" }, now),
    viewer: await makeOperator(f.deps, { email: "viewer@ops.test", role: "viewer" }, now),
    clerk: await makeOperator(f.deps, { email: "clerk@ops.test", role: "clerk" }, now),
    beaconClerk: await makeOperator(f.deps, {
      email: "beacon-clerk@ops.test",
      role: "clerk",
      companies: f.cast.beacon.id,
    }, now),
  };
}

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

const ACME = "111111111";
const test = { environment: "test" };

async function auditRows(f: HttpFixture, action: string) {
  const { rows } = await f.deps.databases.test.readClient.execute({
    sql: "SELECT operator_email, object_type, company_id, after FROM audit_log WHERE action = ?",
    args: [action],
  });
  return rows.map((row) => ({ ...row }));
}

Deno.test("checks:list, checks:files and checks:download: the register and its files, the plain content for admins only, audited", async () => {
  await withHttpFixture(async (f) => {
    const cast = await operators(f);
    await acmeChecks(f, "D-CLI-1", [{ amount: 100, method: 2 }, { amount: 25, method: 5 }]);

    const listed = await run(f, cast.viewer, "checks:list", { tin: ACME, ...test });
    assert.ok(listed.ok, listed.ok ? "" : listed.message);
    const checks = listed.value.checks as Record<string, unknown>[];
    assert.deepEqual(checks.map((c) => [c.number, c.kind, c.status, c.amount_cents]), [
      [1001, "postal", "issued", 10_000],
      [1002, "digital", "issued", 2_500],
    ]);
    const digital = await run(f, cast.viewer, "checks:list", {
      tin: ACME,
      number: "1002",
      ...test,
    });
    assert.deepEqual(
      digital.ok && (digital.value.checks as { kind: string }[]).map((c) => c.kind),
      [
        "digital",
      ],
    );
    const badStatus = await run(f, cast.viewer, "checks:list", { tin: ACME, status: "x", ...test });
    assert.deepEqual(!badStatus.ok && [badStatus.code, badStatus.field], [
      "invalid_input",
      "status",
    ]);
    const hidden = await run(f, cast.beaconClerk, "checks:list", { tin: ACME, ...test });
    assert.deepEqual(!hidden.ok && hidden.code, "company_not_found");

    const files = await run(f, cast.viewer, "checks:files", test);
    assert.ok(files.ok);
    const byKind = Object.fromEntries(
      (files.value.files as Record<string, unknown>[]).map((file) => [file.kind, file]),
    );
    assert.deepEqual(
      [byKind.positive_pay.status, byKind.positive_pay.issue_count, byKind.print.issue_count],
      ["transmitted", 2, 1],
    );
    assert.ok(!JSON.stringify(files.value).includes("content"));
    const scoped = await run(f, cast.beaconClerk, "checks:files", test);
    assert.deepEqual(scoped.ok && scoped.value.files, []);

    const dir = await Deno.makeTempDir({ prefix: "checks-cli-" });
    try {
      const out = `${dir}/print.pdf`;
      const refused = await run(f, cast.viewer, "checks:download", {
        file: String(byKind.print.id),
        out,
        ...test,
      });
      assert.equal(refused.ok, false);
      const downloaded = await run(f, cast.admin, "checks:download", {
        file: String(byKind.print.id),
        out,
        ...test,
      });
      assert.ok(downloaded.ok, downloaded.ok ? "" : downloaded.message);
      const bytes = await Deno.readFile(out);
      assert.equal(new TextDecoder().decode(bytes.slice(0, 5)), "%PDF-");
      assert.equal(await sha256Hex(bytes), byKind.print.sha256);
      assert.equal((await Deno.stat(out)).mode! & 0o777, 0o600);
      const twice = await run(f, cast.admin, "checks:download", {
        file: String(byKind.print.id),
        out,
        ...test,
      });
      assert.deepEqual(!twice.ok && [twice.code, twice.field], ["file_exists", "out"]);
      const csv = `${dir}/positive-pay.csv`;
      assert.ok(
        (await run(f, cast.admin, "checks:download", {
          file: String(byKind.positive_pay.id),
          out: csv,
          ...test,
        })).ok,
      );
      assert.match(await Deno.readTextFile(csv), /1001/);

      // A kept file that is no longer the file as built is handed to nobody, and not audited.
      const other = new TextEncoder().encode("%PDF-other");
      await f.deps.databases.test.writer.write(async (tx) =>
        tx.execute({
          sql: "UPDATE check_files SET content_sealed = ? WHERE batch_id = ?",
          args: [await sealCheckFile(f.deps.secretBox, other), String(byKind.print.id)],
        })
      );
      const altered = `${dir}/altered.pdf`;
      const corrupt = await run(f, cast.admin, "checks:download", {
        file: String(byKind.print.id),
        out: altered,
        ...test,
      });
      assert.deepEqual(corrupt.ok ? null : [corrupt.code, corrupt.field, corrupt.message], [
        "check_file_corrupt",
        "file",
        `check file ${byKind.print.id} is not the file its build checked: its SHA-256 is ${await sha256Hex(
          other,
        )}, the build's ${byKind.print.sha256}; nothing was handed out (in test)`,
      ]);
      await assert.rejects(Deno.stat(altered), Deno.errors.NotFound);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
    const audit = await auditRows(f, "checks:download");
    assert.deepEqual(audit.map((row) => [row.operator_email, JSON.parse(String(row.after)).kind]), [
      ["admin@ops.test", "print"],
      ["admin@ops.test", "positive_pay"],
    ]);
    const missing = await run(f, cast.admin, "checks:download", {
      file: "rbt_nope",
      out: "/tmp/never",
      ...test,
    });
    assert.deepEqual(!missing.ok && missing.code, "check_file_not_found");
    // Test files went to the sandbox bank: nothing to mark sent by hand.
    const marked = await run(f, cast.admin, "checks:mark-sent", {
      file: String(byKind.positive_pay.id),
      ...test,
    });
    assert.equal(marked.ok, false);
  });
});

Deno.test("checks:void: clerks and admins void with a reason, audited; a paid check or no reason is a usage error with nothing written", async () => {
  await withHttpFixture(async (f) => {
    const cast = await operators(f);
    await acmeChecks(f, "D-CLI-2", [{ amount: 100, method: 2 }, { amount: 200, method: 2 }]);
    const viewer = await run(f, cast.viewer, "checks:void", {
      tin: ACME,
      number: "1002",
      reason: "lost",
      ...test,
    });
    assert.equal(viewer.ok, false);
    const outside = await run(f, cast.beaconClerk, "checks:void", {
      tin: ACME,
      number: "1002",
      reason: "lost",
      ...test,
    });
    assert.deepEqual(!outside.ok && outside.code, "company_not_found");
    const noReason = await run(f, cast.clerk, "checks:void", {
      tin: ACME,
      number: "1002",
      ...test,
    });
    assert.deepEqual(!noReason.ok && [noReason.code, noReason.field], ["invalid_input", "reason"]);
    const voided = await run(f, cast.clerk, "checks:void", {
      tin: ACME,
      number: "1002",
      reason: "lost in the mail",
      ...test,
    });
    assert.ok(voided.ok, voided.ok ? "" : voided.message);
    assert.deepEqual([voided.value.status, voided.value.voided_by], ["voided", "clerk@ops.test"]);
    assert.deepEqual(
      (await auditRows(f, "checks:void")).map((row) => [row.operator_email, row.object_type]),
      [["clerk@ops.test", "check"]],
    );
    const unknown = await run(f, cast.clerk, "checks:void", {
      tin: ACME,
      number: "4242",
      reason: "x",
      ...test,
    });
    assert.deepEqual(!unknown.ok && [unknown.code, unknown.field], ["check_not_found", "number"]);

    await f.deps.databases.test.writer.write((tx) =>
      tx.execute(
        "UPDATE checks SET status = 'paid', paid_date = '2026-01-09' WHERE check_number = 1001",
      )
    );
    const paid = await run(f, cast.admin, "checks:void", {
      tin: ACME,
      number: "1001",
      reason: "too late",
      ...test,
    });
    assert.deepEqual(!paid.ok && [paid.code, paid.field], ["invalid_input", "number"]);
    assert.equal((await auditRows(f, "checks:void")).length, 1);
  });
});

Deno.test("checks:import-paid, checks:exceptions and checks:resolve-exception: a missing column is a usage error; the report, the exceptions' ledger effect and the resolution, audited", async () => {
  await withHttpFixture(async (f) => {
    const cast = await operators(f);
    const [paidPayout] = await acmeChecks(f, "D-CLI-3", [
      { amount: 100, method: 2 },
      { amount: 200, method: 2 },
    ]);
    const dir = await Deno.makeTempDir({ prefix: "checks-cli-" });
    try {
      const missing = `${dir}/missing.csv`;
      await Deno.writeTextFile(missing, "check_number,amount\n1001,100.00\n");
      const refused = await run(f, cast.admin, "checks:import-paid", {
        tin: ACME,
        file: missing,
        ...test,
      });
      assert.deepEqual(!refused.ok && [refused.code, refused.field], [
        "invalid_input",
        "paid_date",
      ]);
      assert.match(!refused.ok ? refused.message : "", /no paid_date column/);
      assert.deepEqual(await auditRows(f, "checks:import-paid"), []);

      const file = `${dir}/paid-2026-01-08.csv`;
      await Deno.writeTextFile(
        file,
        "check_number,amount,paid_date\n1001,100.00,2026-01-08\n1002,250.00,2026-01-08\n",
      );
      const clerk = await run(f, cast.clerk, "checks:import-paid", { tin: ACME, file, ...test });
      assert.equal(clerk.ok, false, "admins only");
      const imported = await run(f, cast.admin, "checks:import-paid", { tin: ACME, file, ...test });
      assert.ok(imported.ok, imported.ok ? "" : imported.message);
      assert.deepEqual(
        [imported.value.duplicate, imported.value.matched, imported.value.exceptions],
        [false, 1, 1],
      );
      const again = await run(f, cast.admin, "checks:import-paid", { tin: ACME, file, ...test });
      assert.deepEqual(again.ok && [again.value.duplicate, again.value.import_id], [
        true,
        imported.value.import_id,
      ]);
      const audit = await auditRows(f, "checks:import-paid");
      assert.equal(audit.length, 1, "the duplicate changed nothing, so it wrote no audit row");
      assert.equal(audit[0].company_id, f.cast.acme.id);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
    const { rows } = await f.deps.databases.test.readClient.execute({
      sql: "SELECT status FROM payouts WHERE id = ?",
      args: [paidPayout],
    });
    assert.equal(rows[0].status, "completed");

    const listed = await run(f, cast.viewer, "checks:exceptions", test);
    assert.ok(listed.ok);
    const [exception] = listed.value.exceptions as Record<string, unknown>[];
    assert.deepEqual(
      [
        exception.check_number,
        exception.kind,
        exception.issued_amount_cents,
        exception.ledger_effect,
      ],
      [1002, "amount_mismatch", 20_000, {
        kind: "check.paid_exception",
        from: "available",
        to: "bank",
        amount_cents: 5_000,
        amount: 50,
      }],
    );
    const notAdmin = await run(f, cast.clerk, "checks:resolve-exception", {
      exception: String(exception.id),
      resolution: "payment_stands",
      ...test,
    });
    assert.equal(notAdmin.ok, false);
    const badResolution = await run(f, cast.admin, "checks:resolve-exception", {
      exception: String(exception.id),
      resolution: "ignore",
      ...test,
    });
    assert.deepEqual(!badResolution.ok && [badResolution.code, badResolution.field], [
      "invalid_input",
      "resolution",
    ]);
    const resolved = await run(f, cast.admin, "checks:resolve-exception", {
      exception: String(exception.id),
      resolution: "payment_stands",
      note: "the bank paid the encoded amount",
      ...test,
    });
    assert.ok(resolved.ok, resolved.ok ? "" : resolved.message);
    assert.deepEqual(
      [resolved.value.status, resolved.value.resolution, resolved.value.ledger_effect],
      ["resolved", "payment_stands", null],
    );
    assert.ok(resolved.value.ledger_transaction_id);
    assert.ok(resolved.value.completed_payout_id);
    const open = await run(f, cast.viewer, "checks:exceptions", test);
    assert.deepEqual(open.ok && open.value.exceptions, []);
    const all = await run(f, cast.viewer, "checks:exceptions", { status: "all", ...test });
    assert.equal(all.ok && (all.value.exceptions as unknown[]).length, 1);
    const audit = await auditRows(f, "checks:resolve-exception");
    assert.deepEqual(
      audit.map((row) => [row.operator_email, JSON.parse(String(row.after)).note]),
      [["admin@ops.test", "the bank paid the encoded amount"]],
    );
    const missing = await run(f, cast.admin, "checks:resolve-exception", {
      exception: "cex_nope",
      resolution: "bank_reversed",
      ...test,
    });
    assert.deepEqual(!missing.ok && missing.code, "exception_not_found");
  });
});
