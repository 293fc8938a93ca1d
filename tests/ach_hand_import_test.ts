/**
 * Hand imports in live take two people: `ach:import` of a live file stages it with what it would
 * apply (entries matched, money moved, payouts affected) and a second admin's approval imports it.
 * The preview writes nothing; the test environment imports at once, as before.
 */
import assert from "node:assert/strict";
import { createApp } from "../routes/app.ts";
import { previewAchImport } from "../lib/ach/imports.ts";
import { ACH_IMPORT_ENTRIES_PER_UNIT_MAX, unfinishedImportWords } from "../lib/ach/import_rules.ts";
import type { WriteUnit } from "../db/writer.ts";
import { NOW, returnFile, returnOf, withImports } from "./ach_import_helpers.ts";
import { withHttpFixture } from "./http_fixture.ts";
import { ADMIN_TOKEN, adminCall, makeOperator } from "./operator_helpers.ts";
import { withTempDir } from "./helpers.ts";

Deno.test("a hand import's preview is what it would apply now, and writes nothing", async () => {
  await withImports(async (f) => {
    const sent = await f.credit({ amountCents: 12_500 });
    const before = await f.snapshot();
    const preview = await previewAchImport(f.deps, {
      content: new TextEncoder().encode(returnFile([returnOf(sent, "R03")])),
      fileName: "returns.ach",
      source: "cli",
      importedBy: null,
    }, NOW);
    assert.ok(preview.ok);
    assert.deepEqual(
      [preview.value.applied, preview.value.payouts, preview.value.duplicate],
      [1, [sent.payoutId], false],
    );
    assert.ok(preview.value.movedCents > 0, "the return moves the payout's money back");
    assert.deepEqual(await f.snapshot(), before, "nothing of it was written");
  }, "live");
});

Deno.test("ach:import in live is staged for a second admin; approved, it is imported; in test it is imported at once", async () => {
  await withHttpFixture(async (f) => {
    const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
    const now = f.clock.now();
    const ana = await makeOperator(f.deps, { email: "ana@ops.test", role: "admin" }, now);
    const ben = await makeOperator(f.deps, { email: "ben@ops.test", role: "admin" }, now);
    await withTempDir(async (dir) => {
      const path = `${dir}/returns.ach`;
      await Deno.writeTextFile(path, returnFile([]));
      const imports = async (environment: "live" | "test") =>
        Number(
          (await f.deps.databases[environment].readClient.execute(
            "SELECT count(*) AS n FROM ach_imports",
          )).rows[0].n,
        );

      // Before: one admin's crafted file was applied at once.
      const staged = await adminCall(app, ana.token)("ach:import", { file: path });
      assert.equal(staged.status, 200, JSON.stringify(staged.body));
      assert.deepEqual(
        [
          staged.body.result.status,
          staged.body.result.kind,
          staged.body.result.would_apply.entries_matched,
          staged.body.result.would_apply.unfinished_import,
        ],
        ["pending_approval", "ach_import.apply", 0, null],
      );
      assert.equal(await imports("live"), 0, "nothing is imported before the approval");
      const own = await adminCall(app, ana.token)("approvals:approve", {
        id: staged.body.result.approval_id,
      });
      assert.equal(own.body.error.code, "approval_own_request");
      const approved = await adminCall(app, ben.token)("approvals:approve", {
        id: staged.body.result.approval_id,
      });
      assert.equal(approved.status, 200, JSON.stringify(approved.body));
      assert.equal(await imports("live"), 1);
      const audit = await f.deps.databases.live.readClient.execute(
        "SELECT operator_email FROM audit_log WHERE action = 'ach:import'",
      );
      assert.deepEqual(audit.rows.map((row) => row.operator_email), ["ben@ops.test"]);

      const atOnce = await adminCall(app, ana.token)("ach:import", {
        file: path,
        environment: "test",
      });
      assert.equal(atOnce.status, 200);
      assert.equal(atOnce.body.result.environment, "test");
      assert.equal(await imports("test"), 1);
    });
  });
});

Deno.test("a hand import's preview of a file whose import stopped midway says so: stopped at entry N of M, and what is left", async () => {
  await withImports(async (f) => {
    const sent = [];
    for (let n = 0; n < ACH_IMPORT_ENTRIES_PER_UNIT_MAX + 5; n++) {
      sent.push(await f.credit({ amountCents: 1_000 + n }));
    }
    const entries = sent.map((credit) => returnOf(credit, "R03"));
    // The process stops after the claim and the first unit.
    const writer = f.database.writer;
    const write = writer.write.bind(writer);
    let units = 0;
    writer.write = <T>(unit: WriteUnit<T>): Promise<T> =>
      ++units > 2 ? Promise.reject(new Error("the process stopped")) : write(unit);
    await assert.rejects(() => f.import(entries), /the process stopped/);
    writer.write = write;
    const preview = await previewAchImport(f.deps, {
      content: new TextEncoder().encode(returnFile(entries)),
      fileName: "RETURNS.txt",
      source: "cli",
      importedBy: null,
    }, NOW);
    assert.ok(preview.ok);
    assert.deepEqual(
      [preview.value.returns, preview.value.applied, preview.value.unfinished],
      [sent.length, 5, {
        state: "stopped",
        entriesDone: ACH_IMPORT_ENTRIES_PER_UNIT_MAX,
        entries: sent.length,
      }],
    );
    assert.equal(
      unfinishedImportWords(preview.value.unfinished!),
      `stopped at entry ${ACH_IMPORT_ENTRIES_PER_UNIT_MAX} of ${sent.length}`,
    );
  }, "live");
});
