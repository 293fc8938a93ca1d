import assert from "node:assert/strict";
import { openEmbeddedClient } from "../db/embedded_client.ts";
import { WAL_SYNCS_IN_FLIGHT_MAX, WalSync, WalSyncError } from "../db/wal_sync.ts";
import { forgetCommits, trackCommits, untilDurable } from "../lib/platform/durability.ts";
import { GroupCommitWriter, WriteGroupError } from "../db/writer.ts";
import { openTempDatabase, withTempDir } from "./helpers.ts";

/**
 * Syncs the test ends by hand: each sync off the thread waits until `end(i)` (or `fail(i)`); a
 * sync on the thread is counted (and throws `failNow` when set).
 */
function syncsByHand() {
  const calls: { path: string; end: () => void; fail: (error: Error) => void }[] = [];
  const onThread: string[] = [];
  let failNow: Error | null = null;
  const sync = {
    later: (path: string) =>
      new Promise<void>((resolve, reject) => calls.push({ path, end: resolve, fail: reject })),
    now: (path: string) => {
      onThread.push(path);
      if (failNow) throw failNow;
    },
  };
  return { calls, onThread, sync, failOnThread: (error: Error) => failNow = error };
}

/** Lets pending promise callbacks and one macrotask run. */
const turns = () => new Promise((resolve) => setTimeout(resolve, 5));

async function probeWriter(dir: string, walSync: WalSync) {
  const client = openEmbeddedClient(`file:${dir}/probe.db`, 5000);
  await client.execute("PRAGMA journal_mode=WAL");
  await client.execute("PRAGMA synchronous=NORMAL");
  await client.execute("CREATE TABLE probe(id INTEGER PRIMARY KEY, v TEXT NOT NULL)");
  const reader = openEmbeddedClient(`file:${dir}/probe.db`, 5000);
  const writer = new GroupCommitWriter(client, { unitsPerGroupMax: 64, walSync });
  const request = { pipelined: true };
  const values = async () =>
    (await reader.execute("SELECT v FROM probe ORDER BY id")).rows.map((row) => row.v);
  const close = async () => {
    await writer.close();
    reader.close();
    client.close();
  };
  return { writer, request, values, close };
}

const insert = (v: string) => ({ sql: "INSERT INTO probe(v) VALUES (?)", args: [v] });

Deno.test("a unit's caller is answered only after a WAL sync that began after its commit; the next group commits meanwhile", async () => {
  await withTempDir(async (dir) => {
    const { calls, sync } = syncsByHand();
    const { writer, request, values, close } = await probeWriter(
      dir,
      new WalSync(`${dir}/probe.db`, sync),
    );
    const answered: string[] = [];
    const first = writer.write((tx) => tx.execute(insert("a")), request).then(() =>
      answered.push("a")
    );
    await turns();
    // Committed and readable, but not answered: its frames are not on the disk yet.
    assert.deepEqual(await values(), ["a"]);
    assert.equal(answered.length, 0);
    assert.equal(calls.length, 1);
    assert.equal(calls[0].path, `${dir}/probe.db-wal`);

    const second = writer.write((tx) => tx.execute(insert("b")), request).then(() =>
      answered.push("b")
    );
    await turns();
    assert.deepEqual(await values(), ["a", "b"], "the next group did not wait for the sync");
    assert.equal(calls.length, 2, "the second commit's sync began while the first ran");

    calls[0].end();
    await first;
    await turns();
    assert.deepEqual(answered, ["a"], "the first sync began before b's commit: b still waits");
    calls[1].end();
    await second;
    assert.deepEqual(answered, ["a", "b"]);
    assert.equal(writer.stats.groups, 2);
    await close();
  });
});

Deno.test("a later sync that ends first answers every commit before it began", async () => {
  await withTempDir(async (dir) => {
    const { calls, sync } = syncsByHand();
    const { writer, request, close } = await probeWriter(dir, new WalSync(`${dir}/probe.db`, sync));
    const answered: string[] = [];
    const first = writer.write((tx) => tx.execute(insert("a")), request).then(() =>
      answered.push("a")
    );
    await turns();
    const second = writer.write((tx) => tx.execute(insert("b")), request).then(() =>
      answered.push("b")
    );
    await turns();
    calls[1].end();
    await Promise.all([first, second]);
    assert.deepEqual(answered, ["a", "b"]);
    calls[0].end();
    await close();
  });
});

Deno.test("at most WAL_SYNCS_IN_FLIGHT_MAX syncs run at once; a commit past them shares the next one", async () => {
  await withTempDir(async (dir) => {
    const { calls, sync } = syncsByHand();
    const { writer, request, close } = await probeWriter(dir, new WalSync(`${dir}/probe.db`, sync));
    const writes: Promise<unknown>[] = [];
    for (let i = 0; i < WAL_SYNCS_IN_FLIGHT_MAX + 2; i++) {
      writes.push(writer.write((tx) => tx.execute(insert(`v${i}`)), request));
      await turns();
    }
    assert.equal(writer.stats.groups, WAL_SYNCS_IN_FLIGHT_MAX + 2);
    assert.equal(calls.length, WAL_SYNCS_IN_FLIGHT_MAX);
    calls[0].end();
    await writes[0];
    await turns();
    // One more sync begins, after both waiting commits: it answers both.
    assert.equal(calls.length, WAL_SYNCS_IN_FLIGHT_MAX + 1);
    for (const call of calls.slice(1)) call.end();
    await Promise.all(writes);
    assert.equal(calls.length, WAL_SYNCS_IN_FLIGHT_MAX + 1);
    await close();
  });
});

Deno.test("a failed sync fails its group's callers as a storage failure, and the next durable group clears it", async () => {
  await withTempDir(async (dir) => {
    const { calls, sync } = syncsByHand();
    const { writer, request, values, close } = await probeWriter(
      dir,
      new WalSync(`${dir}/probe.db`, sync),
    );
    const refused = writer.write(async (tx) => {
      await tx.execute(insert("a"));
      return "a";
    }, request);
    await turns();
    calls[0].fail(new Error("Input/output error (os error 5)"));
    await assert.rejects(refused, (error: unknown) => {
      assert.ok(error instanceof WriteGroupError);
      assert.ok(error.cause instanceof WalSyncError);
      assert.match(error.message, /disk I\/O error: the WAL was not synced/);
      return true;
    });
    assert.equal(writer.failure?.reason, "writes_failing");
    // The commit stands (it is readable) though nobody was told it is durable.
    assert.deepEqual(await values(), ["a"]);

    const next = writer.write((tx) => tx.execute(insert("b")), request);
    await turns();
    calls[1].end();
    await next;
    assert.equal(writer.failure, null);
    await close();
  });
});

Deno.test("a sync that finds the disk full says so", async () => {
  await withTempDir(async (dir) => {
    const { calls, sync } = syncsByHand();
    const { writer, request, close } = await probeWriter(dir, new WalSync(`${dir}/probe.db`, sync));
    const refused = writer.write((tx) => tx.execute(insert("a")), request);
    await turns();
    calls[0].fail(new Error("No space left on device (os error 28)"));
    await assert.rejects(refused, WriteGroupError);
    assert.equal(writer.failure?.reason, "disk_full");
    await close();
  });
});

Deno.test("untilDurable waits for every commit so far of every tracked database, and not for later ones", async () => {
  await withTempDir(async (dir) => {
    const { calls, sync } = syncsByHand();
    const walSync = new WalSync(`${dir}/probe.db`, sync);
    trackCommits(walSync);
    try {
      const { writer, request, close } = await probeWriter(dir, walSync);
      await untilDurable(); // nothing committed yet
      const write = writer.write((tx) => tx.execute(insert("a")), request);
      await turns();
      let durable = false;
      const gate = untilDurable().then(() => durable = true);
      await turns();
      assert.equal(durable, false);
      calls[0].end();
      await Promise.all([write, gate]);
      assert.equal(durable, true);
      await close();
    } finally {
      forgetCommits(walSync);
    }
  });
});

Deno.test("the real sync: a database's writer runs synchronous=NORMAL, and its WAL is synced by path (a missing WAL is nothing to sync)", async () => {
  await withTempDir(async (dir) => {
    const database = await openTempDatabase(dir);
    const mode = await database.readClient.execute("PRAGMA journal_mode");
    assert.equal(mode.rows[0].journal_mode, "wal");
    const level = await database.writer.write((tx) => tx.execute("PRAGMA synchronous"));
    assert.equal(Number(level.rows[0].synchronous), 1);
    await database.close();

    const walSync = new WalSync(`${dir}/nothing-here.db`);
    await walSync.committed();
    walSync.committedAndSynced();
    assert.equal(walSync.stats.syncs, 2);
  });
});

Deno.test("background work's group is synced on the thread at once, and answers the requests' commits waiting for a sync too", async () => {
  await withTempDir(async (dir) => {
    const { calls, onThread, sync } = syncsByHand();
    const walSync = new WalSync(`${dir}/probe.db`, sync);
    const { writer, request, close } = await probeWriter(dir, walSync);
    const answered: string[] = [];
    const byRequest = writer.write((tx) => tx.execute(insert("a")), request)
      .then(() => answered.push("a"));
    await turns();
    assert.equal(calls.length, 1);
    assert.equal(walSync.durableNow, false);
    await writer.write((tx) => tx.execute(insert("job")));
    assert.deepEqual(onThread, [`${dir}/probe.db-wal`]);
    assert.equal(walSync.durableNow, true, "nothing waits for a sync after background work");
    await byRequest;
    assert.deepEqual(answered, ["a"], "the sync on the thread covered the request's commit");
    // A group with any background unit in it is synced on the thread.
    await Promise.all([
      writer.write((tx) => tx.execute(insert("b")), request),
      writer.write((tx) => tx.execute(insert("job2"))),
    ]);
    assert.equal(onThread.length, 2);
    assert.equal(calls.length, 1);
    calls[0].end();
    await close();
  });
});

Deno.test("a sync on the thread that fails fails its group's callers as a storage failure", async () => {
  await withTempDir(async (dir) => {
    const { sync, failOnThread } = syncsByHand();
    const { writer, close } = await probeWriter(dir, new WalSync(`${dir}/probe.db`, sync));
    failOnThread(new Error("Input/output error (os error 5)"));
    await assert.rejects(writer.write((tx) => tx.execute(insert("job"))), WriteGroupError);
    assert.equal(writer.failure?.reason, "writes_failing");
    await close();
  });
});
