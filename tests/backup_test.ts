/**
 * Backups and restores (issue 21): the archive of both databases and its manifest, the restore
 * into an empty data directory and each refusal, writes committing while a copy runs, and the
 * CLI's secrets:generate and migrate --check.
 */
import assert from "node:assert/strict";
import { openDatabase } from "../db/client.ts";
import { runAdminCommand, runWithoutDatabases } from "../lib/admin/commands.ts";
import { readArchive, writeArchive } from "../lib/backup/archive.ts";
import { takeBackup } from "../lib/backup/service.ts";
import { verifyLedger } from "../lib/ledger/reports.ts";
import { addFunds } from "../lib/funding/store.ts";
import { loadConfig } from "../lib/platform/config.ts";
import { newId } from "../lib/platform/keys.ts";
import { fundAcmeAuto, type HttpFixture, withHttpFixture } from "./http_fixture.ts";

const root = new URL("..", import.meta.url).pathname;

/** The CLI with the given DATA_DIR, no secrets (dev mode), and no input. */
async function cli(dataDir: string, ...args: string[]) {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${root}cli/admin.ts`, ...args],
    env: { DATA_DIR: dataDir, NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: output.code,
    stdout: new TextDecoder().decode(output.stdout),
    stderr: new TextDecoder().decode(output.stderr),
  };
}

const request = (f: HttpFixture) => ({
  databases: f.deps.databases,
  now: f.clock.now(),
  keyGraceSeconds: 86_400,
  secretBox: f.deps.secretBox,
  runtimeSettings: { offerTtlDays: 90, baseUrl: "http://127.0.0.1:8000" },
  dev: true,
  origin: "cli",
  sessionToken: null,
  input: {},
});

const restoreRequest = {
  now: 0,
  keyGraceSeconds: 86_400,
  databaseSettings: {
    urls: { live: "file:./data/live.db", test: "file:./data/test.db" },
    authToken: null,
    busyTimeoutMs: 5000,
  },
  dev: true,
  origin: "cli",
  sessionToken: null,
  input: {},
};

async function countRows(url: string, table: string): Promise<number> {
  const database = await openDatabase({
    environment: "test",
    url,
    busyTimeoutMs: 5000,
    unitsPerGroupMax: 512,
    readCacheEntries: 0,
  });
  try {
    return Number(
      (await database.readClient.execute(`SELECT count(*) AS n FROM ${table}`)).rows[0].n,
    );
  } finally {
    await database.close();
  }
}

/** A live funding, so the live database holds money too. */
async function fundAcmeAutoLive(f: HttpFixture, cents: number): Promise<void> {
  const funded = await f.deps.databases.live.writer.write((tx) =>
    addFunds(
      tx,
      {
        companyId: f.cast.acme.id,
        lineId: f.cast.acme.autoLineId,
        paymentMethod: "WireTransfer",
        amountCents: cents,
        description: "live funding",
        largeDisbursement: false,
        requestFingerprint: crypto.randomUUID(),
      },
      "live",
      f.clock.now(),
    )
  );
  if (!funded.ok) throw new Error(funded.message);
}

async function listDir(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) names.push(entry.name);
  return names.sort();
}

async function flipByte(path: string, offset: number): Promise<void> {
  const bytes = await Deno.readFile(path);
  bytes[offset] ^= 0xff;
  await Deno.writeFile(path, bytes);
}

Deno.test("backup then restore: both databases come back whole, counted, ledger verified, audited", async () => {
  await withHttpFixture(async (f) => {
    for (let i = 0; i < 5; i++) await fundAcmeAuto(f, 10_000 + i);
    await fundAcmeAutoLive(f, 250_00);
    const work = await Deno.makeTempDir({ prefix: "backup-test-" });
    try {
      const out = `${work}/first.tar`;
      const backup = await runAdminCommand(request(f), "backup", { out });
      assert.ok(backup.ok, JSON.stringify(backup));
      const sha256 = String(backup.value.sha256);
      assert.match(sha256, /^[0-9a-f]{64}$/);
      assert.equal(await Deno.readTextFile(`${out}.sha256`), `${sha256}  first.tar\n`);
      assert.equal((await Deno.stat(out)).mode! & 0o777, 0o600);
      const databases = backup.value.databases as Record<
        string,
        { rows: Record<string, number>; migrations: { applied: number; newest: string } }
      >;
      assert.equal(databases.test.rows.fundings, 5);
      assert.equal(databases.live.rows.fundings, 1);
      assert.equal(databases.test.rows.ledger_transactions, 5);
      const journal = JSON.parse(
        await Deno.readTextFile(`${root}db/migrations/meta/_journal.json`),
      );
      assert.equal(databases.live.migrations.applied, journal.entries.length);
      assert.equal(databases.live.migrations.newest, journal.entries.at(-1).tag);
      // Any tar reads it: the three entries, in order.
      const listing = await new Deno.Command("tar", { args: ["tf", out], stdout: "piped" })
        .output();
      assert.equal(new TextDecoder().decode(listing.stdout), "manifest.json\nlive.db\ntest.db\n");

      // The operator's backup is in the live audit chain, named by its SHA-256.
      const audit = await f.deps.databases.live.readClient.execute(
        "SELECT action, object_type, object_id, origin FROM audit_log WHERE action = 'backup'",
      );
      assert.deepEqual(audit.rows.map((row) => ({ ...row })), [
        { action: "backup", object_type: "backup", object_id: sha256, origin: "cli" },
      ]);

      const dataDir = `${work}/restored`;
      const restored = await runWithoutDatabases(restoreRequest, "restore", {
        from: out,
        "data-dir": dataDir,
      });
      assert.ok(restored.ok, JSON.stringify(restored));
      assert.equal(restored.value.sha256, sha256);
      assert.equal(restored.value.sha256_checked, "sha256_file");
      assert.deepEqual(await listDir(dataDir), ["live.db", "test.db"]);
      for (const environment of ["live", "test"] as const) {
        const database = await openDatabase({
          environment,
          url: `file:${dataDir}/${environment}.db`,
          busyTimeoutMs: 5000,
          unitsPerGroupMax: 512,
          readCacheEntries: 0,
        });
        try {
          assert.deepEqual(await verifyLedger(database.readClient), []);
          for (const [table, n] of Object.entries(databases[environment].rows)) {
            const { rows } = await database.readClient.execute(
              `SELECT count(*) AS n FROM ${table}`,
            );
            assert.equal(Number(rows[0].n), n, `${environment}.${table}`);
          }
          const source = await f.deps.databases[environment].readClient.execute(
            "SELECT sum(balance_cents) AS total, count(*) AS n FROM ledger_accounts",
          );
          const copy = await database.readClient.execute(
            "SELECT sum(balance_cents) AS total, count(*) AS n FROM ledger_accounts",
          );
          assert.deepEqual({ ...copy.rows[0] }, { ...source.rows[0] });
        } finally {
          await database.close();
        }
      }
    } finally {
      await Deno.remove(work, { recursive: true });
    }
  });
});

Deno.test("restore refuses a non-empty data directory, naming it, and writes nothing", async () => {
  await withHttpFixture(async (f) => {
    const work = await Deno.makeTempDir({ prefix: "backup-test-" });
    try {
      const out = `${work}/b.tar`;
      assert.ok((await runAdminCommand(request(f), "backup", { out })).ok);
      const dataDir = `${work}/data`;
      await Deno.mkdir(dataDir);
      await Deno.writeTextFile(`${dataDir}/notes.txt`, "keep me");
      const refused = await runWithoutDatabases(restoreRequest, "restore", {
        from: out,
        "data-dir": dataDir,
      });
      assert.deepEqual(refused, {
        ok: false,
        code: "data_dir_not_empty",
        message:
          `${dataDir} is not empty (notes.txt): a restore fills an empty data directory only`,
        field: "data-dir",
      });
      assert.deepEqual(await listDir(dataDir), ["notes.txt"]);
      assert.equal(await Deno.readTextFile(`${dataDir}/notes.txt`), "keep me");
    } finally {
      await Deno.remove(work, { recursive: true });
    }
  });
});

Deno.test("restore refuses a corrupted, altered or cut backup and leaves no directory behind", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 12_345);
    const work = await Deno.makeTempDir({ prefix: "backup-test-" });
    try {
      const out = `${work}/b.tar`;
      const taken = await runAdminCommand(request(f), "backup", { out });
      assert.ok(taken.ok);
      const good = await Deno.readFile(out);
      const dataDir = `${work}/never`;
      const restore = (flags: Record<string, string> = {}) =>
        runWithoutDatabases(restoreRequest, "restore", {
          from: out,
          "data-dir": dataDir,
          ...flags,
        });

      // A byte of the live database flipped (its entry starts after two 512-byte header blocks
      // and the manifest's blocks): the manifest's SHA-256 of live.db no longer matches.
      const manifestBlocks = Math.ceil(
        new TextDecoder().decode(good.subarray(512)).indexOf("\0") / 512,
      );
      await flipByte(out, 512 * (manifestBlocks + 2) + 100);
      const flipped = await restore();
      assert.equal(flipped.ok, false);
      assert.ok(!flipped.ok && flipped.code === "backup_corrupted");
      assert.match(
        !flipped.ok ? flipped.message : "",
        /the SHA-256 of live\.db is [0-9a-f]{64}, the manifest says/,
      );
      await assert.rejects(Deno.stat(dataDir), Deno.errors.NotFound);

      // Whole entries, but the file is not the one its .sha256 names (trailing bytes added).
      await Deno.writeFile(out, new Uint8Array([...good, ...new Uint8Array(512)]));
      const altered = await restore();
      assert.ok(!altered.ok && altered.code === "backup_corrupted");
      assert.match(!altered.ok ? altered.message : "", /b\.tar\.sha256 says/);
      await assert.rejects(Deno.stat(dataDir), Deno.errors.NotFound);

      // A wrong --sha256 wins over the file beside it.
      await Deno.writeFile(out, good);
      const wrongFlag = await restore({ sha256: "0".repeat(64) });
      assert.ok(!wrongFlag.ok && wrongFlag.code === "backup_corrupted");
      assert.match(!wrongFlag.ok ? wrongFlag.message : "", /--sha256 says 0{64}/);

      // Cut short.
      await Deno.writeFile(out, good.subarray(0, good.length - 3000));
      await Deno.remove(`${out}.sha256`);
      const cut = await restore();
      assert.ok(!cut.ok && cut.code === "backup_corrupted", JSON.stringify(cut));
      await assert.rejects(Deno.stat(dataDir), Deno.errors.NotFound);

      // The good file, without its .sha256: restored on the manifest's hashes alone, and says so.
      await Deno.writeFile(out, good);
      const restored = await restore();
      assert.ok(restored.ok, JSON.stringify(restored));
      assert.equal(restored.value.sha256_checked, "manifest_only");
      assert.equal(await countRows(`file:${dataDir}/test.db`, "fundings"), 1);
    } finally {
      await Deno.remove(work, { recursive: true });
    }
  });
});

Deno.test("restore refuses a backup whose migrations this code does not know", async () => {
  await withHttpFixture(async (f) => {
    const work = await Deno.makeTempDir({ prefix: "backup-test-" });
    try {
      const out = `${work}/b.tar`;
      assert.ok((await runAdminCommand(request(f), "backup", { out })).ok);
      // Rebuilt with a manifest from a newer version, the databases' bytes unchanged.
      await new Deno.Command("tar", { args: ["xf", out, "-C", work] }).output();
      const read = await readArchive(out, () => Promise.resolve(null));
      assert.ok(read.ok);
      const manifest = structuredClone(read.value.manifest);
      (manifest.databases.live.migrations as { newest: string }).newest = "0099_from_the_future";
      const newer = `${work}/newer.tar`;
      await writeArchive(newer, manifest, { live: `${work}/live.db`, test: `${work}/test.db` });
      const refused = await runWithoutDatabases(restoreRequest, "restore", {
        from: newer,
        "data-dir": `${work}/data`,
      });
      assert.deepEqual(refused, {
        ok: false,
        code: "backup_newer_than_code",
        message: `the live database of ${newer} is at migration 0099_from_the_future, which this ` +
          "code does not know: restore it with the version that wrote it",
        field: "from",
      });
      await assert.rejects(Deno.stat(`${work}/data`), Deno.errors.NotFound);
    } finally {
      await Deno.remove(work, { recursive: true });
    }
  });
});

Deno.test("a libSQL server's database is refused: its backup belongs to the server", async () => {
  const refused = await takeBackup(
    { live: "libsql://db.example.turso.io", test: "file:/tmp/unused.db" },
    { out: "/tmp/never.tar", now: 0 },
  );
  assert.deepEqual(refused, {
    ok: false,
    code: "backup_belongs_to_server",
    message: "the live database is a libSQL server (DATABASE_URL_LIVE): backup belongs to the " +
      "libSQL server (its own snapshots and point-in-time restore); this command copies " +
      "embedded file: databases",
  });
});

Deno.test("backup refuses an existing file and a missing directory, writing nothing", async () => {
  await withHttpFixture(async (f) => {
    const work = await Deno.makeTempDir({ prefix: "backup-test-" });
    try {
      await Deno.writeTextFile(`${work}/taken.tar`, "an older backup");
      assert.deepEqual(await runAdminCommand(request(f), "backup", { out: `${work}/taken.tar` }), {
        ok: false,
        code: "backup_exists",
        message: `${work}/taken.tar exists: choose a new file name`,
        field: "out",
      });
      assert.deepEqual(
        await runAdminCommand(request(f), "backup", { out: `${work}/missing/b.tar` }),
        {
          ok: false,
          code: "invalid_input",
          message: `${work}/missing is not a directory: make it first`,
          field: "out",
        },
      );
      assert.deepEqual(await listDir(work), ["taken.tar"]);
      assert.equal(await Deno.readTextFile(`${work}/taken.tar`), "an older backup");
      const audit = await f.deps.databases.live.readClient.execute(
        "SELECT count(*) AS n FROM audit_log WHERE action = 'backup'",
      );
      assert.equal(Number(audit.rows[0].n), 0);
    } finally {
      await Deno.remove(work, { recursive: true });
    }
  });
});

Deno.test("writes keep committing while the backup copies (VACUUM INTO runs off the writer's thread)", async () => {
  await withHttpFixture(async (f) => {
    // About 80 MB of documents, so that one copy takes long enough to see a stall.
    const content = new Uint8Array(100_000);
    for (let batch = 0; batch < 8; batch++) {
      await f.deps.databases.test.writer.write(async (tx) => {
        for (let i = 0; i < 100; i++) {
          crypto.getRandomValues(content.subarray(0, 65_536));
          await tx.execute({
            sql:
              `INSERT INTO documents (id, company_id, name, doc_type_id, sha256, size_bytes, content, created_at)
                  VALUES (?, ?, ?, 1, 'x', ?, ?, ?)`,
            args: [
              newId("doc"),
              f.cast.acme.id,
              `filler-${batch}-${i}`,
              content.length,
              content,
              0,
            ],
          });
        }
      });
    }
    const work = await Deno.makeTempDir({ prefix: "backup-test-" });
    try {
      // What one copy on the service's own thread would stall the writer for.
      const { DatabaseSync } = await import("node:sqlite");
      const reader = new DatabaseSync(f.deps.databases.test.url.slice("file:".length), {
        readOnly: true,
      });
      const started = performance.now();
      reader.prepare("VACUUM INTO ?").run(`${work}/baseline.db`);
      const copyMs = performance.now() - started;
      reader.close();
      assert.ok(copyMs > 40, `a copy took ${copyMs} ms: too fast to show a stall`);

      // A first backup loads the copy worker's module, which later ones reuse.
      const first = await takeBackup(
        { live: f.deps.databases.live.url, test: f.deps.databases.test.url },
        { out: `${work}/first.tar`, now: f.clock.now() },
      );
      assert.ok(first.ok);

      const acknowledged: number[] = [];
      let running = true;
      const backup = takeBackup(
        { live: f.deps.databases.live.url, test: f.deps.databases.test.url },
        { out: `${work}/b.tar`, now: f.clock.now() },
      ).finally(() => running = false);
      const backupStarted = performance.now();
      while (running) {
        await fundAcmeAuto(f, 100);
        acknowledged.push(performance.now());
      }
      const taken = await backup;
      assert.ok(taken.ok);
      const gaps = acknowledged.map((at, i) =>
        at - (i === 0 ? backupStarted : acknowledged[i - 1])
      );
      const longestGap = Math.max(...gaps);
      assert.ok(acknowledged.length >= 10, `${acknowledged.length} writes during the backup`);
      // A copy on the writer's thread would stall it for about a whole copy; a worker's copy
      // leaves gaps of a write's own time plus the machine's other load (up to ~0.6 copy seen
      // on the 2 shared cores with the suite in parallel).
      assert.ok(
        longestGap < copyMs * 0.8,
        `the writer waited ${longestGap.toFixed(0)} ms at once; one copy takes ${
          copyMs.toFixed(0)
        } ms`,
      );
      // The copy is one snapshot: it holds some of the writes made during it, never a part of one.
      const copied = taken.value.manifest.databases.test.rows;
      assert.equal(copied.fundings, copied.ledger_transactions);
      assert.ok(copied.fundings <= acknowledged.length);
    } finally {
      await Deno.remove(work, { recursive: true });
    }
  });
});

Deno.test("secrets:generate prints env lines the configuration accepts, fresh each time, with no database", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "backup-test-" });
  try {
    const first = await cli(dataDir, "secrets:generate");
    const second = await cli(dataDir, "secrets:generate");
    assert.equal(first.code, 0, first.stderr);
    const lines = first.stdout.trimEnd().split("\n");
    assert.equal(lines.length, 2);
    assert.match(lines[0], /^JWT_SECRET=[A-Za-z0-9+/]{64}$/);
    assert.match(lines[1], /^ENCRYPTION_KEY=[A-Za-z0-9+/]{43}=$/);
    const env = Object.fromEntries(lines.map((line) => line.split(/=(.*)/s).slice(0, 2)));
    const config = loadConfig({ ...env, LIVE_NOTIFICATIONS: "off" }, { dev: false });
    assert.equal(config.jwtSecret, env.JWT_SECRET);
    assert.equal(config.encryptionKey, env.ENCRYPTION_KEY);
    assert.notEqual(first.stdout, second.stdout);
    assert.deepEqual(await listDir(dataDir), []);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("migrate --check lists what a start would run on each database and creates nothing", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "backup-test-" });
  try {
    const journal = JSON.parse(await Deno.readTextFile(`${root}db/migrations/meta/_journal.json`));
    const tags = journal.entries.map((entry: { tag: string }) => entry.tag);
    const fresh = await cli(dataDir, "migrate", "--check", "--json");
    assert.equal(fresh.code, 0, fresh.stderr);
    assert.deepEqual(JSON.parse(fresh.stdout), {
      live: { database: `${dataDir}/live.db`, exists: false, applied: 0, would_run: tags },
      test: { database: `${dataDir}/test.db`, exists: false, applied: 0, would_run: tags },
      pending: tags.length * 2,
    });
    assert.deepEqual(await listDir(dataDir), []);

    // A live database one migration behind (its newest record removed), a test one up to date.
    for (const environment of ["live", "test"]) {
      const database = await openDatabase({
        environment: environment as "live" | "test",
        url: `file:${dataDir}/${environment}.db`,
        busyTimeoutMs: 5000,
        unitsPerGroupMax: 512,
        readCacheEntries: 0,
      });
      if (environment === "live") {
        await database.writer.write((tx) =>
          tx.execute(
            "DELETE FROM __drizzle_migrations WHERE created_at = (SELECT max(created_at) FROM __drizzle_migrations)",
          )
        );
      }
      await database.close();
    }
    const before = await listDir(dataDir);
    const behind = await cli(dataDir, "migrate", "--check", "--json");
    assert.equal(behind.code, 0, behind.stderr);
    assert.deepEqual(JSON.parse(behind.stdout), {
      live: {
        database: `${dataDir}/live.db`,
        exists: true,
        applied: tags.length - 1,
        would_run: [tags.at(-1)],
      },
      test: { database: `${dataDir}/test.db`, exists: true, applied: tags.length, would_run: [] },
      pending: 1,
    });
    assert.deepEqual(await listDir(dataDir), before);
    assert.equal(await countRows(`file:${dataDir}/test.db`, "__drizzle_migrations"), tags.length);

    // Without --check it migrates libSQL servers only: embedded files migrate at service start.
    const bare = await cli(dataDir, "migrate", "--json");
    assert.equal(bare.code, 0);
    assert.deepEqual(JSON.parse(bare.stdout).test, {
      database: `file:${dataDir}/test.db`,
      migrated: "at service start (embedded file)",
    });
    assert.equal(await countRows(`file:${dataDir}/test.db`, "__drizzle_migrations"), tags.length);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("migrate --check reads the databases the caller's configuration names; through the service it is refused", async () => {
  const dir = await Deno.makeTempDir({ prefix: "backup-test-" });
  try {
    const journal = JSON.parse(await Deno.readTextFile(`${root}db/migrations/meta/_journal.json`));
    const tags = journal.entries.map((entry: { tag: string }) => entry.tag);
    // Names no DATA_DIR gives: an answer about them can only come from the passed configuration.
    const urls = { live: `file:${dir}/ledger-live.db`, test: `file:${dir}/ledger-test.db` };
    await countRows(urls.live, "__drizzle_migrations");
    const checked = await runWithoutDatabases(
      {
        ...restoreRequest,
        databaseSettings: { urls, authToken: null, busyTimeoutMs: 5000 },
      },
      "migrate",
      { check: "true" },
    );
    assert.deepEqual(checked, {
      ok: true,
      value: {
        live: {
          database: `${dir}/ledger-live.db`,
          exists: true,
          applied: tags.length,
          would_run: [],
        },
        test: { database: `${dir}/ledger-test.db`, exists: false, applied: 0, would_run: tags },
        pending: tags.length,
      },
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  await withHttpFixture(async (f) => {
    assert.deepEqual(await runAdminCommand(request(f), "migrate", { check: "true" }), {
      ok: false,
      code: "usage",
      message:
        "migrate opens no database of the service: run it with the CLI, `deno task admin migrate`",
    });
  });
});
