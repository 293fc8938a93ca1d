/**
 * The console's "Import a file" page: an admin uploads an ACH return file or a check paid-items
 * file and the console runs the CLI's own command on it. In live it is staged with what it would
 * apply and waits for a second admin (approved on the Approvals page, it is imported); in test it
 * is imported at once. Before, only the CLI could stage a hand import.
 */
import assert from "node:assert/strict";
import { returnFile } from "./ach_import_helpers.ts";
import { withHttpFixture } from "./http_fixture.ts";
import { consoleAs, countRows, parseCsv, textOf } from "./console_helpers.ts";
import { ACH_IMPORT_RESUME_JOB, ACH_RETURNS_IMPORT_LEASE_MS } from "../lib/ach/import_rules.ts";

const PAID_ITEMS = "check_number,amount,paid_date\n9999,100.00,2026-01-08\n";

Deno.test("console import in live: a return file is staged with what it would apply, a second admin's approval imports it", async () => {
  await withHttpFixture(async (f) => {
    const { browser: ada } = await consoleAs(f, { email: "ada@ops.test", role: "admin" });
    const form = await ada.get("/console/bank-files/import?env=live");
    assert.equal(form.status, 200);
    assert.match(form.html, /enctype="multipart\/form-data"/);
    assert.match(textOf(form.html), /Stage for a second admin/);

    const staged = await ada.postFile("/console/bank-files/import", {
      env: "live",
      kind: "ach_return",
    }, { field: "file", name: "returns 11-24.ach", content: returnFile([]) });
    assert.equal(staged.status, 200, textOf(staged.html));
    const { rows } = await f.deps.databases.live.readClient.execute(
      "SELECT id, kind, requested_by, summary FROM approvals WHERE status = 'pending_approval'",
    );
    assert.equal(rows.length, 1);
    const approvalId = String(rows[0].id);
    assert.deepEqual([rows[0].kind, rows[0].summary], [
      "ach_import.apply",
      "ach:import returns_11-24.ach: 0 entries matched, $0.00 moved, 0 payouts and 0 fundings affected",
    ]);
    assert.match(
      textOf(staged.html),
      new RegExp(
        `Staged: ach:import returns_11-24\\.ach: 0 entries matched, \\$0\\.00 moved, 0 payouts and 0 fundings affected\\. A second admin decides approval ${approvalId} before anything is applied\\.`,
      ),
    );
    assert.match(
      textOf(staged.html),
      /File returns_11-24\.ach SHA-256 [0-9a-f]{64} Imported before no Returns 0 Notices of change 0 Entries matched 0 Money moved \$0\.00 Payouts affected none Fundings affected 0 Not applied none/,
    );
    assert.equal(await countRows(f, "live", "SELECT count(*) AS n FROM ach_imports"), 0);
    const audit = await f.deps.databases.live.readClient.execute(
      "SELECT operator_email, origin FROM audit_log WHERE action = 'approval:request'",
    );
    assert.deepEqual(audit.rows.map((row) => [row.operator_email, row.origin]), [
      ["ada@ops.test", "console 127.0.0.1"],
    ]);

    const { browser: bo } = await consoleAs(f, { email: "bo@ops.test", role: "admin" });
    await bo.get(`/console/approvals/${approvalId}?env=live`);
    const approved = await bo.post(`/console/approvals/${approvalId}/approve`, { env: "live" });
    assert.equal(approved.status, 303);
    assert.equal(await countRows(f, "live", "SELECT count(*) AS n FROM ach_imports"), 1);
    // Uploaded on the console, so recorded as the console's, not the CLI's.
    assert.equal(
      await countRows(
        f,
        "live",
        "SELECT count(*) AS n FROM ach_imports WHERE file_name = ? AND source = 'console'",
        ["returns_11-24.ach"],
      ),
      1,
    );

    // A paid-items file of a company is staged the same way.
    await ada.get("/console/bank-files/import?env=live");
    const paid = await ada.postFile("/console/bank-files/import", {
      env: "live",
      kind: "check_paid",
      company: f.cast.acme.id,
    }, { field: "file", name: "paid.csv", content: PAID_ITEMS });
    assert.equal(paid.status, 200, textOf(paid.html));
    assert.match(textOf(paid.html), /Staged: checks:import-paid paid\.csv: 0 of 1 items matched/);
    assert.equal(await countRows(f, "live", "SELECT count(*) AS n FROM check_paid_imports"), 0);
  });
});

Deno.test("console import in test: imported at once; refusals keep the form (no file, no company, a bad file, a clerk)", async () => {
  await withHttpFixture(async (f) => {
    const { browser: ada } = await consoleAs(f, { email: "ada@ops.test", role: "admin" });
    await ada.get("/console/bank-files/import?env=test");
    const ach = await ada.postFile("/console/bank-files/import", {
      env: "test",
      kind: "ach_return",
    }, { field: "file", name: "returns.ach", content: returnFile([]) });
    assert.equal(ach.status, 200, textOf(ach.html));
    assert.match(textOf(ach.html), /Imported in test\. File returns\.ach/);
    assert.equal(await countRows(f, "test", "SELECT count(*) AS n FROM ach_imports"), 1);
    assert.equal(await countRows(f, "live", "SELECT count(*) AS n FROM approvals"), 0);
    // The imports list exports what it shows.
    const imports = await ada.get("/console/bank-files/imports?env=test");
    assert.match(imports.html, /href="\/console\/bank-files\/imports\/export\.csv\?env=test"/);
    const exported = parseCsv(
      (await ada.get("/console/bank-files/imports/export.csv?env=test")).html,
    );
    assert.deepEqual(exported[0], [
      "imported_at",
      "file_name",
      "source",
      "company",
      "returns",
      "notices_of_change",
      "applied",
      "not_applied",
      "import",
    ]);
    assert.deepEqual(exported.slice(1).map((row) => row.slice(1)), [
      ["returns.ach", "console", "", "0", "0", "0", "", "complete"],
    ]);

    const paid = await ada.postFile("/console/bank-files/import", {
      env: "test",
      kind: "check_paid",
      company: f.cast.acme.id,
    }, { field: "file", name: "paid.csv", content: PAID_ITEMS });
    assert.equal(paid.status, 200, textOf(paid.html));
    assert.match(textOf(paid.html), /Imported in test\. .*Items 1 Items matched 0 Exceptions 1/);
    assert.equal(
      await countRows(
        f,
        "test",
        "SELECT count(*) AS n FROM check_paid_imports WHERE source = 'console'",
      ),
      1,
    );

    const noFile = await ada.postFile("/console/bank-files/import", {
      env: "test",
      kind: "ach_return",
    }, null);
    assert.equal(noFile.status, 400);
    assert.match(textOf(noFile.html), /File: choose the file to import/);
    const noCompany = await ada.postFile("/console/bank-files/import", {
      env: "test",
      kind: "check_paid",
    }, { field: "file", name: "paid.csv", content: PAID_ITEMS });
    assert.equal(noCompany.status, 400);
    assert.match(textOf(noCompany.html), /Company: choose the company whose checks were paid/);
    const bad = await ada.postFile("/console/bank-files/import", {
      env: "test",
      kind: "ach_return",
    }, { field: "file", name: "notes.txt", content: "not a NACHA file\n" });
    assert.equal(bad.status, 409, textOf(bad.html));
    assert.match(
      textOf(bad.html),
      /This was not done: notes\.txt is not a NACHA file: line 1: a record must be 94 characters, got 16 \(notes\.txt, in test\)/,
    );
    assert.match(bad.html, /<option value="ach_return" selected>/, "the form keeps its choices");
    assert.equal(await countRows(f, "test", "SELECT count(*) AS n FROM ach_imports"), 1);

    const { browser: cleo } = await consoleAs(f, { email: "cleo@ops.test", role: "clerk" });
    assert.equal((await cleo.get("/console/bank-files/import?env=test")).status, 403);
    assert.ok(!(await cleo.get("/console/bank-files?env=test")).html.includes("Import a file"));
    const refused = await cleo.postFile("/console/bank-files/import", {
      env: "test",
      kind: "ach_return",
    }, { field: "file", name: "returns2.ach", content: returnFile([]) });
    assert.equal(refused.status, 403);
  });
});

Deno.test("the imports list shows an unfinished import as such: stopped or resuming at entry N of M, and what takes it up", async () => {
  await withHttpFixture(async (f) => {
    const { browser: ada } = await consoleAs(f, { email: "ada@ops.test", role: "admin" });
    const at = Date.UTC(2026, 10, 24, 15, 0);
    const resumesAt = at + ACH_RETURNS_IMPORT_LEASE_MS;
    await f.deps.databases.test.writer.write(async (tx) => {
      // Three imports stopped midway (what a stopped import's row holds), and one complete.
      const imports: [string, string, string | null][] = [
        ["aci_waiting", "waiting.ach", JSON.stringify({ entries_done: 20, companies: [] })],
        ["aci_resuming", "resuming.ach", JSON.stringify({ entries_done: 10, companies: [] })],
        ["aci_parked", "parked.ach", JSON.stringify({ entries_done: 0, companies: [] })],
        ["aci_done", "done.ach", null],
      ];
      for (const [id, fileName, progress] of imports) {
        await tx.execute({
          sql: `INSERT INTO ach_imports (id, company_id, sha256, source, file_name, return_count,
                  correction_count, applied_count, report, imported_at, progress, content_sealed)
                VALUES (?, ?, ?, 'cli', ?, 25, 6, ?, '[]', ?, ?, ?)`,
          args: [
            id,
            f.cast.acme.id,
            id,
            fileName,
            progress === null ? 31 : 7,
            at,
            progress,
            progress === null ? null : "v1.sealed",
          ],
        });
      }
      const jobs: [string, number | null, number | null][] = [
        ["aci_waiting", null, null],
        ["aci_resuming", resumesAt + 60_000, null],
        ["aci_parked", null, resumesAt],
      ];
      for (const [subject, leaseUntil, doneAt] of jobs) {
        await tx.execute({
          sql: `INSERT INTO scheduled_jobs (id, company_id, kind, subject_id, due_at, lease_until,
                  done_at, error, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          args: [
            `job_${subject}`,
            f.cast.acme.id,
            ACH_IMPORT_RESUME_JOB,
            subject,
            resumesAt,
            leaseUntil,
            doneAt,
            doneAt === null ? null : "the disk failed",
            at,
          ],
        });
      }
    });
    const page = await ada.get("/console/bank-files/imports?env=test");
    assert.equal(page.status, 200);
    const rows = textOf(page.html);
    assert.match(
      rows,
      /waiting\.ach cli Acme.* 25 6 7 — stopped at entry 20 of 31 taken up by itself /,
    );
    assert.match(
      rows,
      /resuming\.ach cli Acme.* 25 6 7 — resuming at entry 10 of 31 its resume job is applying the rest/,
    );
    assert.match(
      rows,
      /parked\.ach cli Acme.* 25 6 7 — stopped at entry 0 of 31 import the same file again, or retry its parked resume job \(jobs:retry\)/,
    );
    assert.match(rows, /done\.ach cli Acme.* 25 6 31 — complete/);
    const exported = parseCsv(
      (await ada.get("/console/bank-files/imports/export.csv?env=test")).html,
    );
    assert.deepEqual(
      exported.slice(1).map((row) => [row[1], row.at(-1)]).sort(),
      [
        ["done.ach", "complete"],
        ["parked.ach", "stopped at entry 0 of 31"],
        ["resuming.ach", "resuming at entry 10 of 31"],
        ["waiting.ach", "stopped at entry 20 of 31"],
      ],
    );
  });
});
