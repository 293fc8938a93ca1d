/**
 * Start-up of nodes sharing a libSQL primary (issue 22): no node migrates it; the migrations run
 * once through `deno task admin migrate`, however many run at once; a bad token, an unreachable
 * primary and a primary on an older migration stop the start with a clear message, before the
 * node listens.
 */
import assert from "node:assert/strict";
import { migrationJournal } from "../db/client.ts";
import { freePort } from "../bench/service.ts";
import {
  migratePrimary,
  type Primary,
  primaryClient,
  runAdminCli,
  spawnNode,
  startPrimary,
  startRefused,
  waitReady,
} from "./node_helpers.ts";

async function appliedMigrations(primary: Primary): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const environment of ["test", "live"] as const) {
    const client = primaryClient(primary, environment);
    try {
      const { rows } = await client.execute(
        "SELECT count(*) AS n FROM sqlite_master WHERE name = '__drizzle_migrations'",
      );
      counts[environment] = Number(rows[0].n) === 0 ? 0 : Number(
        (await client.execute("SELECT count(*) AS n FROM __drizzle_migrations")).rows[0].n,
      );
    } finally {
      client.close();
    }
  }
  return counts;
}

Deno.test("two nodes starting together on a new primary both refuse; two migrate commands at once migrate it once; then both nodes start", async () => {
  const primary = await startPrimary();
  const journal = await migrationJournal();
  try {
    const [a, b] = await Promise.all([startRefused(primary), startRefused(primary)]);
    for (const refused of [a, b]) {
      assert.equal(refused.code, 2, refused.stderr);
      assert.equal(refused.listened, false);
      assert.match(
        refused.stderr,
        new RegExp(
          `cannot start: DATABASE_URL_TEST \\(${primary.urls.test}\\) is on an older migration than this code: 0 of ${journal.length} applied`,
        ),
      );
      assert.match(refused.stderr, /run `deno task admin migrate` once/);
    }
    assert.deepEqual(await appliedMigrations(primary), { test: 0, live: 0 });
    // The CLI without a node opens the primary itself, and is refused the same way.
    const cliDir = await Deno.makeTempDir();
    const refusedCli = await runAdminCli({ ...primary.env(), DATA_DIR: cliDir }, ["ledger:verify"]);
    await Deno.remove(cliDir, { recursive: true });
    assert.equal(refusedCli.code, 1);
    assert.match(refusedCli.stderr, /^error: DATABASE_URL_TEST .* is on an older migration/);

    const cliDirs = [await Deno.makeTempDir(), await Deno.makeTempDir()];
    const runs = await Promise.all(
      cliDirs.map((dir) => runAdminCli({ ...primary.env(), DATA_DIR: dir }, ["migrate", "--json"])),
    );
    for (const dir of cliDirs) await Deno.remove(dir, { recursive: true });
    for (const run of runs) assert.equal(run.code, 0, run.stderr);
    const results = runs.map((run) => JSON.parse(run.stdout));
    for (const environment of ["test", "live"]) {
      const appliedNow = results.map((result) => result[environment].applied_now).sort();
      // One migrator applied them all under the lock; the other found nothing left to apply.
      assert.deepEqual(appliedNow, [0, journal.length]);
      for (const result of results) assert.equal(result[environment].applied, journal.length);
    }
    assert.deepEqual(await appliedMigrations(primary), {
      test: journal.length,
      live: journal.length,
    });
    const lock = primaryClient(primary, "test");
    assert.equal(
      Number((await lock.execute("SELECT count(*) AS n FROM __migration_lock")).rows[0].n),
      0,
      "the lock is released",
    );
    lock.close();

    // Outside dev mode: nothing is seeded (two dev nodes at once: tests/multi_node_seed_test.ts).
    const nodes = [
      await spawnNode(primary, {}, { dev: false }),
      await spawnNode(primary, {}, { dev: false }),
    ];
    try {
      await Promise.all(nodes.map((node) => waitReady(node)));
      assert.deepEqual(await appliedMigrations(primary), {
        test: journal.length,
        live: journal.length,
      });
    } finally {
      await Promise.all(nodes.map((node) => node.stop()));
    }
  } finally {
    await primary.close();
  }
});

Deno.test("a primary on an older migration than the code, or on a newer one, is refused at start", async () => {
  const primary = await startPrimary();
  const journal = await migrationJournal();
  try {
    await migratePrimary(primary);
    const client = primaryClient(primary, "test");
    // The newest migration's record gone: the database looks as an older version left it.
    const newest = journal.at(-1)!;
    await client.execute({
      sql: "DELETE FROM __drizzle_migrations WHERE created_at = ?",
      args: [newest.when],
    });
    const older = await startRefused(primary);
    assert.equal(older.code, 2);
    assert.equal(older.listened, false);
    assert.match(
      older.stderr,
      new RegExp(
        `DATABASE_URL_TEST \\(${primary.urls.test}\\) is on an older migration than this code: ${
          journal.length - 1
        } of ${journal.length} applied, 1 to apply \\(${newest.tag}\\)`,
      ),
    );

    await client.execute({
      sql: "INSERT INTO __drizzle_migrations (hash, created_at) VALUES ('newer', ?)",
      args: [newest.when + 1000],
    });
    const newer = await startRefused(primary);
    assert.equal(newer.code, 2);
    assert.match(newer.stderr, /records migrations newer than this code knows/);
    client.close();
  } finally {
    await primary.close();
  }
});

Deno.test("a bad token and an unreachable primary are refused at start, naming the setting", async () => {
  const primary = await startPrimary({ authToken: "right-token" });
  try {
    await migratePrimary(primary);
    const badToken = await startRefused(primary, { DATABASE_AUTH_TOKEN: "wrong-token" });
    assert.equal(badToken.code, 2);
    assert.equal(badToken.listened, false);
    assert.match(
      badToken.stderr,
      new RegExp(
        `cannot start: DATABASE_URL_TEST \\(${primary.urls.test}\\) refused the credentials .*: set DATABASE_AUTH_TOKEN`,
      ),
    );

    const nowhere = `http://127.0.0.1:${freePort()}`;
    const unreachable = await startRefused(primary, { DATABASE_URL_LIVE: nowhere });
    assert.equal(unreachable.code, 2);
    assert.equal(unreachable.listened, false);
    assert.match(
      unreachable.stderr,
      new RegExp(`cannot start: DATABASE_URL_LIVE \\(${nowhere}\\) is unreachable`),
    );
  } finally {
    await primary.close();
  }
});
