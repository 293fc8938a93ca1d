import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { openEmbeddedClient } from "../db/embedded_client.ts";
import {
  WAL_FRAMES_RESTART_MIN,
  WalCheckpointer,
  WORKER_START_WAL_BYTES,
} from "../db/checkpointer.ts";
import { GroupCommitWriter } from "../db/writer.ts";
import { withTempDir } from "./helpers.ts";

/** A WAL frame: its 24-byte header and a 4 KiB page; the file starts with a 32-byte header. */
const framesOf = (walBytes: number) => Math.max(0, (walBytes - 32) / (24 + 4096));
const walFrames = (path: string) => framesOf(Deno.statSync(`${path}-wal`).size);

/** A unit that writes about 17 pages: a 64 KiB blob. */
const blobRow = { sql: "INSERT INTO blobs (body) VALUES (zeroblob(65536))" };

/**
 * A writer over a database as db/client.ts opens one, with its checkpointer, and a blob table. The
 * writer's own checkpoint is off: only the worker's checkpoints keep the WAL from growing.
 */
async function blobWriter(dir: string) {
  const path = `${dir}/test.db`;
  const client = openEmbeddedClient(`file:${path}`, 5000);
  await client.execute("PRAGMA journal_mode=WAL");
  await client.execute("PRAGMA synchronous=FULL");
  await client.execute("PRAGMA wal_autocheckpoint=0");
  await client.execute("CREATE TABLE blobs (id INTEGER PRIMARY KEY, body BLOB NOT NULL)");
  const checkpointer = new WalCheckpointer(path, 5000);
  const writer = new GroupCommitWriter(client, {
    unitsPerGroupMax: 512,
    checkpoints: checkpointer,
  });
  /** Writes `units` blob rows, `inFlight` at a time (a group holds about that many). */
  const writeBlobs = async (units: number, inFlight: number) => {
    let next = 0;
    await Promise.all(Array.from({ length: inFlight }, async () => {
      while (next++ < units) await writer.write((tx) => tx.execute(blobRow));
    }));
  };
  /**
   * Writes until the worker has started and answered, then empties the WAL (its file too): what
   * the WAL holds afterwards is the checkpoints' doing, not the worker's start (tens of ms).
   */
  const warmUp = async () => {
    while (checkpointer.checkpoints === 0) {
      await writeBlobs(4, 1);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const side = new DatabaseSync(path);
    try {
      side.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    } finally {
      side.close();
    }
  };
  const close = async () => {
    await writer.close();
    await checkpointer.close();
    client.close();
  };
  return { path, checkpointer, writer, writeBlobs, warmUp, close };
}

Deno.test("steady writes: the worker copies the WAL, and it starts over past WAL_FRAMES_RESTART_MIN frames instead of growing with every write", async () => {
  await withTempDir(async (dir) => {
    const { path, checkpointer, writeBlobs, warmUp, close } = await blobWriter(dir);
    try {
      await warmUp();
      // About 20,000 frames, four units a group.
      await writeBlobs(1200, 4);
      assert.ok(checkpointer.started, "the worker started once the WAL grew");
      assert.ok(checkpointer.checkpoints > 0, "the worker checkpointed");
      assert.ok(checkpointer.stats.restarts >= 3, `restarts: ${checkpointer.stats.restarts}`);
      // Without the groups' waits, the WAL would never start over: 20,000 frames. With them it
      // holds WAL_FRAMES_RESTART_MIN and what was written during the checkpoints that saw it
      // (about 1,500 frames on a quiet machine; the bound leaves room for a loaded one).
      const highWater = walFrames(path);
      assert.ok(highWater < 10 * WAL_FRAMES_RESTART_MIN, `WAL high-water mark ${highWater} frames`);
    } finally {
      await close();
    }
    // Every row is in the database, which SQLite finds whole.
    const reopened = new DatabaseSync(path);
    try {
      const { n } = reopened.prepare("SELECT count(*) AS n FROM blobs").get() as { n: number };
      assert.ok(n >= 1200, `${n} rows`);
      assert.deepEqual({ ...reopened.prepare("PRAGMA integrity_check").get() }, {
        integrity_check: "ok",
      });
    } finally {
      reopened.close();
    }
  });
});

Deno.test("a reader's old snapshot keeps the worker from catching up: a group stops waiting at the first checkpoint it held back, the writes go on, and the WAL starts over once the reader is done", async () => {
  await withTempDir(async (dir) => {
    const { path, checkpointer, writeBlobs, warmUp, close } = await blobWriter(dir);
    const reader = new DatabaseSync(path);
    try {
      await warmUp();
      // A read transaction kept open (a backup's copy holds one for its whole length).
      reader.exec("BEGIN");
      reader.prepare("SELECT count(*) FROM blobs").get();
      const started = performance.now();
      await writeBlobs(300, 4);
      const held = checkpointer.stats;
      // The wait ends at the first checkpoint the reader stopped, not at its 100 ms deadline.
      assert.ok(held.waitsHeldByReader >= 1, JSON.stringify(held));
      assert.equal(held.waitsTimedOut, 0, JSON.stringify(held));
      // At most one wait per second of writes while the reader holds its snapshot.
      const seconds = (performance.now() - started) / 1000;
      assert.ok(
        held.waitsHeldByReader <= Math.ceil(seconds) + 1,
        JSON.stringify({ held, seconds }),
      );
      reader.exec("COMMIT");
      const restartsBefore = held.restarts;
      // The next wait comes once the second after the timed-out one is over.
      await new Promise((resolve) => setTimeout(resolve, 1100));
      await writeBlobs(300, 4);
      assert.ok(checkpointer.stats.restarts > restartsBefore, JSON.stringify(checkpointer.stats));
    } finally {
      reader.close();
      await close();
    }
  });
});

Deno.test("a service starts the worker with its other workers, whatever the WAL's size; it checkpoints from its first large commit", async () => {
  await withTempDir(async (dir) => {
    const { checkpointer, writeBlobs, close } = await blobWriter(dir);
    await writeBlobs(2, 1);
    checkpointer.start();
    assert.equal(checkpointer.started, true);
    checkpointer.start();
    while (checkpointer.checkpoints === 0) {
      await writeBlobs(4, 1);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await close();
    assert.equal(checkpointer.started, false);
  });
});

Deno.test("a small database starts no worker; closing one that started ends it", async () => {
  await withTempDir(async (dir) => {
    const { checkpointer, writeBlobs, close } = await blobWriter(dir);
    // Two units of 17 pages each: a WAL well under WORKER_START_WAL_BYTES.
    await writeBlobs(2, 1);
    assert.ok(2 * 17 * 4120 < WORKER_START_WAL_BYTES);
    assert.equal(checkpointer.started, false);
    await writeBlobs(20, 2);
    assert.equal(checkpointer.started, true);
    await close();
    assert.equal(checkpointer.started, false);
  });
});
