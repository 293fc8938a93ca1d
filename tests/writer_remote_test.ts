/**
 * The group-commit writer on a libSQL server (the Hrana contract server): the same unit semantics
 * as on the embedded file, with statements batched into round trips. Each test counts the
 * requests the server received.
 */
import assert from "node:assert/strict";
import { type Client, createClient } from "@libsql/client";
import { GroupCommitWriter, WriteGroupError } from "../db/writer.ts";
import { refuse, type Result } from "../lib/platform/result.ts";
import { type HranaServer, type HranaServerOptions, startHranaServer } from "./hrana_server.ts";
import { withTempDir } from "./helpers.ts";

const insert = (v: string) => ({ sql: "INSERT INTO probe(v) VALUES (?)", args: [v] });

async function withRemoteWriter(
  options: Omit<HranaServerOptions, "path">,
  fn: (
    context: { server: HranaServer; writer: GroupCommitWriter; values(): Promise<unknown[]> },
  ) => Promise<void>,
): Promise<void> {
  await withTempDir(async (dir) => {
    const server = await startHranaServer({ path: `${dir}/primary.db`, ...options });
    const client: Client = createClient({ url: server.url, concurrency: 1 });
    await client.execute("CREATE TABLE probe(id INTEGER PRIMARY KEY, v TEXT NOT NULL UNIQUE)");
    const writer = new GroupCommitWriter(client, { unitsPerGroupMax: 64 });
    const values = async () =>
      (await client.execute("SELECT v FROM probe ORDER BY v")).rows.map((r) => r.v);
    try {
      server.resetCount();
      await fn({ server, writer, values });
    } finally {
      await writer.close();
      client.close();
      await server.close();
    }
  });
}

Deno.test("remote writer: a unit's deferred writes ride with its next read and the COMMIT", async () => {
  await withRemoteWriter({}, async ({ server, writer, values }) => {
    const counted = await writer.write(async (tx) => {
      tx.defer(insert("a"));
      tx.defer(insert("b"));
      const { rows } = await tx.execute("SELECT count(*) AS n FROM probe");
      tx.defer(insert("c"));
      return rows[0].n;
    });
    assert.equal(counted, 2, "the read saw the deferred writes before it");
    // [BEGIN, SAVEPOINT, a, b, SELECT] and [c, RELEASE, COMMIT]
    assert.equal(server.requestCount(), 2);
    assert.deepEqual(await values(), ["a", "b", "c"]);

    // The stream is kept: the next group's BEGIN rides with its first statement.
    server.resetCount();
    await writer.write((tx) => tx.execute(insert("d")));
    assert.equal(server.requestCount(), 2);
    server.resetCount();
    await writer.write((tx) => Promise.resolve(tx.defer(insert("e"))));
    assert.equal(server.requestCount(), 1, "a unit that only defers commits in one round trip");
    assert.deepEqual(await values(), ["a", "b", "c", "d", "e"]);
  });
});

Deno.test("remote writer: a failing deferred write fails its own unit only, wherever it surfaces", async () => {
  await withRemoteWriter({}, async ({ writer, values }) => {
    await writer.write((tx) => tx.execute(insert("taken")));
    const results = await Promise.allSettled([
      writer.write((tx) => Promise.resolve(tx.defer(insert("first")))),
      // Its duplicate is sent with the next unit's first statement, and fails this unit alone.
      writer.write((tx) => {
        tx.defer(insert("second"));
        tx.defer(insert("taken"));
        return Promise.resolve("returned");
      }),
      writer.write(async (tx) => {
        await tx.execute(insert("third"));
        return "kept";
      }),
      // The last unit's failure surfaces with the COMMIT.
      writer.write((tx) => {
        tx.defer(insert("fourth"));
        tx.defer(insert("taken"));
        return Promise.resolve();
      }),
    ]);
    assert.deepEqual(results.map((r) => r.status), [
      "fulfilled",
      "rejected",
      "fulfilled",
      "rejected",
    ]);
    assert.match(String((results[1] as PromiseRejectedResult).reason), /UNIQUE/);
    assert.match(String((results[3] as PromiseRejectedResult).reason), /UNIQUE/);
    assert.deepEqual(await values(), ["first", "taken", "third"]);
    assert.equal(writer.stats.largestGroup >= 4, true, "the four units shared one group");
  });
});

Deno.test("remote writer: a deferred statement's check must pass, before the unit is released", async () => {
  await withRemoteWriter({}, async ({ writer, values }) => {
    const results = await Promise.allSettled([
      writer.write((tx) => {
        tx.defer(insert("checked"));
        tx.defer({ sql: "SELECT count(*) AS n FROM probe" }, (result) => {
          if (result.rows[0].n !== 99) throw new Error(`read back ${result.rows[0].n} rows`);
        });
        return Promise.resolve();
      }),
      writer.write((tx) => Promise.resolve(tx.defer(insert("neighbour")))),
    ]);
    assert.equal(results[0].status, "rejected");
    assert.equal((results[0] as PromiseRejectedResult).reason.message, "read back 1 rows");
    assert.equal(results[1].status, "fulfilled");
    assert.deepEqual(await values(), ["neighbour"]);
  });
});

Deno.test("remote writer: abort and attempt undo what was deferred, sent or not", async () => {
  await withRemoteWriter({}, async ({ server, writer, values }) => {
    const refusal = await writer.write(
      async (tx): Promise<Result<string, "insufficient_funds">> => {
        tx.defer(insert("kept-before"));
        const unsent = await tx.attempt(
          (part): Promise<Result<string, "insufficient_funds">> => {
            part.defer(insert("never-sent"));
            return part.abort(refuse("insufficient_funds", "short"));
          },
        );
        assert.equal(unsent.ok, false);
        const sent = await tx.attempt(
          async (part): Promise<Result<string, "insufficient_funds">> => {
            await part.execute(insert("sent-then-undone"));
            part.defer(insert("deferred-then-undone"));
            return part.abort(refuse("insufficient_funds", "short again"));
          },
        );
        assert.equal(sent.ok, false);
        tx.defer(insert("kept-after"));
        return tx.abort(refuse("insufficient_funds", "the whole unit"));
      },
    );
    assert.equal(refusal.ok, false);
    assert.deepEqual(await values(), []);
    server.resetCount();
    await writer.write(async (tx) => {
      tx.defer(insert("kept"));
      await tx.attempt(async (part) => {
        part.defer(insert("part"));
        return await Promise.resolve("done");
      });
    });
    assert.equal(server.requestCount(), 1);
    assert.deepEqual(await values(), ["kept", "part"]);
  });
});

Deno.test("remote writer: an idle stream the server expired is replaced before the group begins", async () => {
  await withRemoteWriter({ batonTtlMs: 200 }, async ({ writer, values }) => {
    await writer.write((tx) => tx.execute(insert("before")));
    await new Promise((resolve) => setTimeout(resolve, 700));
    await writer.write((tx) => tx.execute(insert("after-expiry")));
    assert.deepEqual(await values(), ["after-expiry", "before"]);
  });
});

Deno.test("remote writer: a group that cannot begin fails whole; the next one begins", async () => {
  await withRemoteWriter({ busyTimeoutMs: 150 }, async ({ server, writer, values }) => {
    // Another connection holds the write lock: BEGIN IMMEDIATE waits 150 ms, then the group fails.
    const blocker = createClient({ url: server.url });
    const held = await blocker.transaction("write");
    await held.execute(insert("blocker"));
    await assert.rejects(
      () => writer.write((tx) => tx.execute(insert("blocked"))),
      (error: unknown) => error instanceof WriteGroupError && /SQLITE_BUSY/.test(error.message),
    );
    await held.rollback();
    blocker.close();
    await writer.write((tx) => tx.execute(insert("later")));
    assert.deepEqual(await values(), ["later"]);
  });
});
