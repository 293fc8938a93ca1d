/** The ACH file commands of the operator CLI, run as the CLI runs them (runAdminCommand). */
import assert from "node:assert/strict";
import { runAdminCommand } from "../lib/admin/commands.ts";
import type { CommandRequest } from "../lib/admin/command_kit.ts";
import { sha256Hex } from "../lib/platform/keys.ts";
import { type HttpFixture, withHttpFixture } from "./http_fixture.ts";
import { makeOperator, type TestOperator } from "./operator_helpers.ts";
import { insertAchFile } from "./ach_file_rows.ts";
import { SecretBox } from "../lib/platform/crypto.ts";

/** A NACHA-shaped text: what a download must give back byte for byte. */
const CONTENT = "101 021000021 1234567890".padEnd(94, " ") + "\r\n" +
  "9".repeat(94) + "\r\n";

interface Cast {
  admin: TestOperator;
  viewer: TestOperator;
  /** A clerk of Beacon only. */
  beaconClerk: TestOperator;
  /** An admin of Acme only. */
  acmeAdmin: TestOperator;
}

async function operators(f: HttpFixture): Promise<Cast> {
  const now = f.clock.now();
  return {
    admin: await makeOperator(f.deps, { email: "admin@ops.test", role: "admin" }, now),
    viewer: await makeOperator(f.deps, { email: "viewer@ops.test", role: "viewer" }, now),
    beaconClerk: await makeOperator(f.deps, {
      email: "clerk@ops.test",
      role: "clerk",
      companies: f.cast.beacon.id,
    }, now),
    acmeAdmin: await makeOperator(f.deps, {
      email: "acme-admin@ops.test",
      role: "admin",
      companies: f.cast.acme.id,
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

/** A built file of Acme in test whose sealed content is CONTENT, one of Beacon, one of Acme in live. */
async function files(f: HttpFixture) {
  const t0 = f.clock.now();
  const acme = await insertAchFile(f.deps.databases.test, {
    companyId: f.cast.acme.id,
    status: "built",
    effectiveDate: "2026-01-06",
    createdAt: t0,
    sha256: await sha256Hex(CONTENT),
    contentSealed: await f.deps.secretBox.sealText(CONTENT),
    entries: [],
  });
  const beacon = await insertAchFile(f.deps.databases.test, {
    companyId: f.cast.beacon.id,
    status: "transmitted",
    effectiveDate: "2026-01-06",
    createdAt: t0 + 1000,
    transmittedAt: t0 + 2000,
    entries: [],
  });
  const live = await insertAchFile(f.deps.databases.live, {
    companyId: f.cast.acme.id,
    status: "in_doubt",
    effectiveDate: "2026-01-07",
    createdAt: t0,
    entries: [],
  });
  return { acme, beacon, live };
}

async function auditRows(f: HttpFixture, environment: "test" | "live", action: string) {
  const { rows } = await f.deps.databases[environment].readClient.execute({
    sql: "SELECT operator_email, object_id, company_id, after FROM audit_log WHERE action = ?",
    args: [action],
  });
  return rows.map((row) => ({ ...row }));
}

Deno.test("ach:files and ach:show: metadata and masked entries of the named environment, within the operator's companies", async () => {
  await withHttpFixture(async (f) => {
    const cast = await operators(f);
    const ids = await files(f);

    const all = await run(f, cast.viewer, "ach:files", { environment: "test" });
    assert.ok(all.ok);
    const listed = all.value as { environment: string; files: Record<string, unknown>[] };
    assert.equal(listed.environment, "test");
    assert.deepEqual(listed.files.map((file) => [file.id, file.company_tin, file.status]), [
      [ids.beacon, "222222222", "transmitted"],
      [ids.acme, "111111111", "built"],
    ]);
    assert.deepEqual(listed.files[1], {
      id: ids.acme,
      environment: "test",
      company_id: f.cast.acme.id,
      company_tin: "111111111",
      status: "built",
      created_at: new Date(f.clock.now()).toISOString(),
      bank_date: new Date(f.clock.now()).toISOString().slice(0, 10),
      effective_date: "2026-01-06",
      cutoff_kind: "next_day",
      window_ends_at: new Date(f.clock.now() + 3_600_000).toISOString(),
      entry_count: 0,
      credit_total_cents: 0,
      debit_total_cents: 0,
      sha256: await sha256Hex(CONTENT),
      file_name: `ACH_${ids.acme}.txt`,
      file_id_modifier: "A",
      transmitted_at: null,
      approval_id: null,
      // Why it waits and each transmission attempt's answer: none yet.
      error: null,
      attempts: [],
    });

    const byTin = await run(f, cast.viewer, "ach:files", { environment: "test", tin: "111111111" });
    assert.deepEqual(
      byTin.ok && (byTin.value.files as { id: string }[]).map((file) => file.id),
      [ids.acme],
    );
    const byStatus = await run(f, cast.viewer, "ach:files", {
      environment: "test",
      status: "transmitted",
    });
    assert.deepEqual(
      byStatus.ok && (byStatus.value.files as { id: string }[]).map((file) => file.id),
      [ids.beacon],
    );
    // Live is the default, and says so.
    const live = await run(f, cast.viewer, "ach:files", {});
    assert.ok(live.ok);
    assert.equal(live.value.environment, "live");
    assert.deepEqual((live.value.files as { id: string }[]).map((file) => file.id), [ids.live]);
    // A clerk of Beacon sees Beacon's files only, and Acme's TIN is no company to them.
    const scoped = await run(f, cast.beaconClerk, "ach:files", { environment: "test" });
    assert.deepEqual(
      scoped.ok && (scoped.value.files as { id: string }[]).map((file) => file.id),
      [ids.beacon],
    );
    const hidden = await run(f, cast.beaconClerk, "ach:files", {
      environment: "test",
      tin: "111111111",
    });
    assert.deepEqual(hidden, {
      ok: false,
      code: "company_not_found",
      message: "no company with TIN 111111111",
      field: "tin",
    });
    const badStatus = await run(f, cast.viewer, "ach:files", { status: "sent" });
    assert.equal(!badStatus.ok && badStatus.code, "invalid_input");
    assert.equal(
      !badStatus.ok && badStatus.message,
      '--status "sent": one of built, transmitting, transmitted, in_doubt, voided',
    );

    const shown = await run(f, cast.viewer, "ach:show", { file: ids.acme, environment: "test" });
    assert.ok(shown.ok);
    assert.deepEqual([shown.value.id, shown.value.environment, shown.value.entries], [
      ids.acme,
      "test",
      [],
    ]);
    assert.ok(!("content" in shown.value));
    // Not found names where it looked; a file outside the scope reads the same.
    const missing = await run(f, cast.viewer, "ach:show", { file: ids.acme });
    assert.deepEqual(missing, {
      ok: false,
      code: "ach_file_not_found",
      message: `no ACH file ${ids.acme} in live`,
      field: "file",
    });
    const outside = await run(f, cast.beaconClerk, "ach:show", {
      file: ids.acme,
      environment: "test",
    });
    assert.deepEqual(outside, {
      ok: false,
      code: "ach_file_not_found",
      message: `no ACH file ${ids.acme} in test`,
      field: "file",
    });
  });
});

Deno.test("ach:download: admins only; writes the plain file with mode 0600, audited as a download in the file's environment", async () => {
  await withHttpFixture(async (f) => {
    const cast = await operators(f);
    const ids = await files(f);
    const dir = await Deno.makeTempDir({ prefix: "ach-download-" });
    try {
      const out = `${dir}/acme.ach`;
      const refused = await run(f, cast.viewer, "ach:download", {
        file: ids.acme,
        out,
        environment: "test",
      });
      assert.deepEqual(refused, {
        ok: false,
        code: "role_insufficient",
        message: "viewer@ops.test is a viewer: ach:download needs the admin role",
      });
      const outside = await run(f, cast.beaconClerk, "ach:download", {
        file: ids.acme,
        out,
        environment: "test",
      });
      assert.equal(!outside.ok && outside.code, "role_insufficient");
      await assert.rejects(Deno.stat(out), Deno.errors.NotFound);
      assert.deepEqual(await auditRows(f, "test", "ach:download"), []);

      const done = await run(f, cast.admin, "ach:download", {
        file: ids.acme,
        out,
        environment: "test",
      });
      assert.deepEqual(done, {
        ok: true,
        value: {
          environment: "test",
          file_id: ids.acme,
          out,
          sha256: await sha256Hex(CONTENT),
          bytes: CONTENT.length,
          mode: "0600",
        },
      });
      assert.equal(await Deno.readTextFile(out), CONTENT);
      assert.equal((await Deno.stat(out)).mode! & 0o777, 0o600);
      const audited = await auditRows(f, "test", "ach:download");
      assert.deepEqual(audited.map((row) => [row.operator_email, row.object_id, row.company_id]), [
        ["admin@ops.test", ids.acme, f.cast.acme.id],
      ]);
      assert.deepEqual(JSON.parse(String(audited[0].after)), {
        out,
        sha256: await sha256Hex(CONTENT),
        bytes: CONTENT.length,
        status: "built",
      });

      // An existing path is never overwritten.
      const again = await run(f, cast.admin, "ach:download", {
        file: ids.acme,
        out,
        environment: "test",
      });
      assert.deepEqual(again, {
        ok: false,
        code: "file_exists",
        message: `${out} exists: choose a new path`,
        field: "out",
      });
      // Through the service's endpoint a relative path would land in the service's directory.
      const relative = await runAdminCommand(
        {
          databases: f.deps.databases,
          now: f.clock.now(),
          keyGraceSeconds: 86_400,
          secretBox: f.deps.secretBox,
          runtimeSettings: { offerTtlDays: 90, baseUrl: "http://127.0.0.1:8000" },
          dev: false,
          origin: "http 127.0.0.1",
          sessionToken: cast.admin.token,
          input: {},
        },
        "ach:download",
        { file: ids.acme, out: "acme.ach", environment: "test" },
      );
      assert.equal(!relative.ok && relative.code, "invalid_input");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});

Deno.test("ach:mark-sent, ach:void, ach:resolve, ach:import: refusals name the environment and write nothing", async () => {
  await withHttpFixture(async (f) => {
    const cast = await operators(f);
    const ids = await files(f);
    for (const name of ["ach:mark-sent", "ach:void"]) {
      const missing = await run(f, cast.admin, name, { file: "rbt_missing" });
      assert.deepEqual(missing, {
        ok: false,
        code: "ach_file_not_found",
        message: "no ACH file rbt_missing in live",
        field: "file",
      }, name);
      const viewer = await run(f, cast.viewer, name, { file: ids.acme, environment: "test" });
      assert.equal(!viewer.ok && viewer.code, "role_insufficient", name);
    }
    const badAs = await run(f, cast.admin, "ach:resolve", { file: ids.live, as: "sent" });
    assert.deepEqual(badAs, {
      ok: false,
      code: "invalid_input",
      message: '--as "sent": transmitted or voided',
      field: "as",
    });
    const wrongEnvironment = await run(f, cast.admin, "ach:resolve", {
      file: ids.live,
      as: "voided",
      environment: "test",
    });
    assert.equal(
      !wrongEnvironment.ok && wrongEnvironment.message,
      `no ACH file ${ids.live} in test`,
    );

    const noSuchPath = await run(f, cast.admin, "ach:import", {
      file: "/nonexistent/returns.ach",
      environment: "test",
    });
    assert.deepEqual(noSuchPath, {
      ok: false,
      code: "invalid_input",
      message: '--file "/nonexistent/returns.ach" does not exist',
      field: "file",
    });
    const scoped = await run(f, cast.acmeAdmin, "ach:import", {
      file: "/nonexistent/returns.ach",
      environment: "test",
    });
    assert.deepEqual(scoped, {
      ok: false,
      code: "operator_scoped",
      message: "acme-admin@ops.test is limited to some companies: ach:import acts on every company",
    });
    const notNacha = await Deno.makeTempFile({ suffix: ".ach" });
    try {
      await Deno.writeTextFile(notNacha, "name,amount\nPat,100\n");
      const malformed = await run(f, cast.admin, "ach:import", {
        file: notNacha,
        environment: "test",
      });
      assert.equal(!malformed.ok && malformed.code, "malformed_file");
      assert.match(!malformed.ok ? malformed.message : "", / in test\)$/);
      const { rows: imports } = await f.deps.databases.test.readClient.execute(
        "SELECT COUNT(*) AS n FROM ach_imports",
      );
      assert.equal(imports[0].n, 0);
    } finally {
      await Deno.remove(notNacha);
    }
    const viewer = await run(f, cast.viewer, "ach:import", { file: "/nonexistent/returns.ach" });
    assert.equal(!viewer.ok && viewer.code, "role_insufficient");
    const { rows } = await f.deps.databases.test.readClient.execute(
      "SELECT status FROM rail_batches ORDER BY created_at, rowid",
    );
    assert.deepEqual(rows.map((row) => row.status), ["built", "transmitted"]);
    assert.deepEqual(await auditRows(f, "test", "ach:import"), []);

    // The sandbox bank takes test files by itself: nothing to mark sent by hand, or to release.
    const markSent = await run(f, cast.admin, "ach:mark-sent", {
      file: ids.acme,
      environment: "test",
    });
    assert.equal(!markSent.ok && markSent.code, "ach_file_has_sftp_target");
    const release = await run(f, cast.admin, "ach:release", {
      file: ids.acme,
      environment: "test",
    });
    assert.equal(!release.ok && release.code, "ach_file_awaits_release");
    // A built file is voided, audited by the file service, and says where.
    const voided = await run(f, cast.admin, "ach:void", { file: ids.acme, environment: "test" });
    assert.deepEqual(voided, {
      ok: true,
      value: { environment: "test", file_id: ids.acme, status: "voided", approval_id: null },
    });
    assert.deepEqual(
      (await auditRows(f, "test", "ach:void")).map((row) => [row.operator_email, row.object_id]),
      [["admin@ops.test", ids.acme]],
    );
    const again = await run(f, cast.admin, "ach:void", { file: ids.acme, environment: "test" });
    assert.equal(!again.ok && again.code, "ach_file_not_built");
  });
});

/** An imported file as the import keeps it (`progress` set: it stopped midway). */
async function insertImport(
  f: HttpFixture,
  row: {
    id: string;
    companyId: string | null;
    importedAt: number;
    counts: [returns: number, corrections: number, applied: number];
    report?: unknown[];
    progress?: { entries_done: number; companies: string[] };
  },
) {
  await f.deps.databases.test.writer.write((tx) =>
    tx.execute({
      sql: `INSERT INTO ach_imports (id, company_id, sha256, source, file_name, return_count,
              correction_count, applied_count, report, imported_by, imported_at, progress)
            VALUES (?, ?, ?, 'sftp', ?, ?, ?, ?, ?, NULL, ?, ?)`,
      args: [
        row.id,
        row.companyId,
        row.id.padEnd(64, "0"),
        `${row.id}.ach`,
        ...row.counts,
        JSON.stringify(row.report ?? []),
        row.importedAt,
        row.progress ? JSON.stringify(row.progress) : null,
      ],
    })
  );
}

Deno.test("ach:imports: imported return files newest first, with their counts, what was not applied and an import that stopped midway, within the operator's companies; a bad --limit names the field", async () => {
  await withHttpFixture(async (f) => {
    const cast = await operators(f);
    const t0 = f.clock.now();
    const notApplied = [{ trace: "021000020000001", reason: "no entry has this trace number" }];
    await insertImport(f, {
      id: "aim_acme",
      companyId: f.cast.acme.id,
      importedAt: t0,
      counts: [2, 1, 2],
      report: notApplied,
    });
    await insertImport(f, {
      id: "aim_beacon",
      companyId: f.cast.beacon.id,
      importedAt: t0 + 1000,
      counts: [3, 0, 0],
      progress: { entries_done: 1, companies: [f.cast.beacon.id] },
    });
    await insertImport(f, {
      id: "aim_nobody",
      companyId: null,
      importedAt: t0 + 2000,
      counts: [1, 0, 0],
    });

    const all = await run(f, cast.viewer, "ach:imports", { environment: "test" });
    assert.ok(all.ok, JSON.stringify(all));
    const listed = all.value as { environment: string; imports: Record<string, unknown>[] };
    assert.deepEqual(
      listed.imports.map((row) => [row.id, row.company_name, row.unfinished === null]),
      [["aim_nobody", null, true], ["aim_beacon", "Beacon Casualty", false], [
        "aim_acme",
        "Acme Mutual",
        true,
      ]],
    );
    assert.deepEqual(listed.imports[2], {
      id: "aim_acme",
      environment: "test",
      company_name: "Acme Mutual",
      file_name: "aim_acme.ach",
      source: "sftp",
      imported_at: new Date(t0).toISOString(),
      return_count: 2,
      correction_count: 1,
      applied_count: 2,
      not_applied: notApplied,
      unfinished: null,
    });
    // Stopped after one of its three entries, with no resume job planned.
    assert.deepEqual(listed.imports[1].unfinished, {
      state: "stopped",
      entries_done: 1,
      entries: 3,
      resumes_at: null,
    });

    // A clerk of Beacon sees Beacon's import only: a file that named no company is every company's.
    const beacon = await run(f, cast.beaconClerk, "ach:imports", { environment: "test" });
    assert.deepEqual(
      beacon.ok && (beacon.value.imports as { id: string }[]).map((row) => row.id),
      ["aim_beacon"],
    );
    const one = await run(f, cast.viewer, "ach:imports", { environment: "test", limit: "1" });
    assert.deepEqual(
      one.ok && [(one.value.imports as { id: string }[]).map((row) => row.id), one.value.has_more],
      [["aim_nobody"], true],
    );
    const live = await run(f, cast.viewer, "ach:imports", {});
    assert.deepEqual(live.ok && [live.value.environment, live.value.imports], ["live", []]);
    for (const limit of ["0", "101", "1.5", "ten"]) {
      const refused = await run(f, cast.viewer, "ach:imports", { environment: "test", limit });
      assert.deepEqual(refused.ok ? null : [refused.code, refused.field, refused.message], [
        "invalid_input",
        "limit",
        `--limit ${JSON.stringify(limit)}: a whole number from 1 to 100`,
      ]);
    }
  });
});

Deno.test("ach:download of a kept file that is not the file as built (altered, or sealed under another key) is refused ach_file_corrupt: nothing is written or audited, and no download is recorded", async () => {
  await withHttpFixture(async (f) => {
    const cast = await operators(f);
    const ids = await files(f);
    const other = CONTENT.replace("1234567890", "9999999999");
    const anotherKey = await SecretBox.fromBase64Key(
      btoa(String.fromCharCode(...new Uint8Array(32).fill(7))),
    );
    const dir = await Deno.makeTempDir({ prefix: "ach-download-" });
    try {
      for (
        const [sealed, why] of [
          [
            await f.deps.secretBox.sealText(other),
            `ACH file ${ids.acme} is not the file its build checked: its SHA-256 is ${await sha256Hex(
              other,
            )}, the build's ${await sha256Hex(CONTENT)}; nothing was handed out (in test)`,
          ],
          [await anotherKey.sealText(CONTENT), `ACH file ${ids.acme} could not be unsealed: `],
        ] as const
      ) {
        await f.deps.databases.test.writer.write((tx) =>
          tx.execute({
            sql: "UPDATE ach_files SET content_sealed = ? WHERE batch_id = ?",
            args: [sealed, ids.acme],
          })
        );
        const out = `${dir}/acme.ach`;
        const refused = await run(f, cast.admin, "ach:download", {
          file: ids.acme,
          out,
          environment: "test",
        });
        assert.deepEqual(!refused.ok && [refused.code, refused.field], [
          "ach_file_corrupt",
          "file",
        ]);
        const message = refused.ok ? "" : refused.message;
        assert.ok(message.startsWith(why), message);
        await assert.rejects(Deno.stat(out), Deno.errors.NotFound);
      }
      assert.deepEqual(await auditRows(f, "test", "ach:download"), []);
      // Not downloaded: voided, its entries would go to the next cutoff instead of in doubt.
      const { rows } = await f.deps.databases.test.readClient.execute({
        sql: "SELECT downloaded_at FROM rail_batches WHERE id = ?",
        args: [ids.acme],
      });
      assert.deepEqual(rows.map((row) => row.downloaded_at), [null]);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});
