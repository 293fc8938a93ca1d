import assert from "node:assert/strict";
import { createClient } from "@libsql/client";
import { RUN_ALONE, type UnitBatch, WriteGroupError, type WriteTx } from "../db/writer.ts";
import { refuse, type Result } from "../lib/platform/result.ts";
import { openTempDatabase, withTempDir } from "./helpers.ts";

const insert = (v: string) => ({ sql: "INSERT INTO probe(v) VALUES (?)", args: [v] });

async function probeTable(dir: string) {
  const database = await openTempDatabase(dir);
  await database.writer.write((tx) =>
    tx.execute("CREATE TABLE probe(id INTEGER PRIMARY KEY, v TEXT NOT NULL UNIQUE)")
  );
  const values = async () =>
    (await database.readClient.execute("SELECT v FROM probe ORDER BY v")).rows.map((r) => r.v);
  return { database, values };
}

Deno.test("a unit that throws rolls back its own savepoint only; its neighbours commit", async () => {
  await withTempDir(async (dir) => {
    const { database, values } = await probeTable(dir);
    const results = await Promise.allSettled([
      database.writer.write((tx) => tx.execute(insert("a"))),
      database.writer.write(async (tx) => {
        await tx.execute(insert("b"));
        await tx.execute(insert("a-dup-check"));
        throw new Error("refused by the unit");
      }),
      database.writer.write((tx) => tx.execute(insert("c"))),
      // A constraint failure inside a unit is the same: only that unit is undone.
      database.writer.write((tx) => tx.execute(insert("a"))),
    ]);
    assert.deepEqual(results.map((r) => r.status), [
      "fulfilled",
      "rejected",
      "fulfilled",
      "rejected",
    ]);
    assert.equal((results[1] as PromiseRejectedResult).reason.message, "refused by the unit");
    assert.match(String((results[3] as PromiseRejectedResult).reason), /UNIQUE/);
    assert.deepEqual(await values(), ["a", "c"]);
    assert.equal(database.writer.stats.largestGroup >= 4, true, "the four units shared one group");
    await database.close();
  });
});

Deno.test("a unit that writes then aborts leaves nothing; its caller gets the refusal; its neighbours commit", async () => {
  await withTempDir(async (dir) => {
    const { database, values } = await probeTable(dir);
    const groupsBefore = database.writer.stats.groups;
    const [before, refusal, after] = await Promise.all([
      database.writer.write((tx) => tx.execute(insert("before"))),
      database.writer.write(async (tx): Promise<Result<string, "insufficient_funds">> => {
        await tx.execute(insert("x"));
        await tx.execute(insert("y"));
        return tx.abort(refuse("insufficient_funds", "available is short"));
      }),
      database.writer.write(async (tx) => {
        await tx.execute(insert("after"));
        return "kept";
      }),
    ]);
    assert.equal(before.rowsAffected, 1);
    assert.deepEqual(refusal, {
      ok: false,
      code: "insufficient_funds",
      message: "available is short",
    });
    assert.equal(after, "kept");
    assert.equal(database.writer.stats.groups, groupsBefore + 1, "the three units shared a group");
    assert.deepEqual(await values(), ["after", "before"]);
    await database.close();
  });
});

Deno.test("a unit that returns a refusal without aborting commits: the writer does not guess", async () => {
  await withTempDir(async (dir) => {
    const { database, values } = await probeTable(dir);
    const returned = await database.writer.write(async (tx) => {
      await tx.execute(insert("counted"));
      return refuse("code_wrong", "the code is not right");
    });
    assert.deepEqual(returned, { ok: false, code: "code_wrong", message: "the code is not right" });
    assert.deepEqual(await values(), ["counted"]);
    await database.close();
  });
});

Deno.test("attempt: an aborted part undoes only its own writes and the unit goes on; a thrown one rolls back the unit", async () => {
  await withTempDir(async (dir) => {
    const { database, values } = await probeTable(dir);
    const answer = await database.writer.write(async (tx) => {
      await tx.execute(insert("outer-before"));
      const part = await tx.attempt(async (inner): Promise<Result<number, "probe_refused">> => {
        await inner.execute(insert("inner"));
        return inner.abort(refuse("probe_refused", "refused by rule"));
      });
      await tx.execute(insert("outer-after"));
      return part;
    });
    assert.deepEqual(answer, { ok: false, code: "probe_refused", message: "refused by rule" });
    assert.deepEqual(await values(), ["outer-after", "outer-before"]);

    const thrown = database.writer.write(async (tx) => {
      await tx.execute(insert("lost"));
      await tx.attempt(async (inner) => {
        await inner.execute(insert("lost-inner"));
        throw new Error("a programmer error");
      });
    });
    await assert.rejects(thrown, /a programmer error/);
    // A part that neither aborts nor throws commits with its unit.
    assert.equal(
      await database.writer.write((tx) =>
        tx.attempt(async (inner) => {
          await inner.execute(insert("kept-inner"));
          return "done";
        })
      ),
      "done",
    );
    assert.deepEqual(await values(), ["kept-inner", "outer-after", "outer-before"]);
    await database.close();
  });
});

Deno.test("abort and attempt outside a unit are programmer errors", async () => {
  await withTempDir(async (dir) => {
    const { database } = await probeTable(dir);
    let kept: WriteTx | null = null;
    await database.writer.write((tx) => {
      kept = tx;
      return Promise.resolve();
    });
    assert.throws(() => kept!.abort(refuse("late", "too late")), /outside a write unit/);
    await assert.rejects(kept!.attempt(() => Promise.resolve(1)), /outside a write unit/);
    await database.close();
  });
});

Deno.test("nothing is reported committed before it is durable and visible", async () => {
  await withTempDir(async (dir) => {
    const { database } = await probeTable(dir);
    // An independent connection sees only what was committed.
    const observer = createClient({ url: `file:${dir}/test.db` });
    const seenAtResolve: number[] = [];
    await Promise.all(
      Array.from(
        { length: 100 },
        (_, i) =>
          database.writer.write((tx) => tx.execute(insert(`v${i}`))).then(async () => {
            const row = await observer.execute({
              sql: "SELECT count(*) n FROM probe WHERE v = ?",
              args: [`v${i}`],
            });
            seenAtResolve.push(Number(row.rows[0].n));
          }),
      ),
    );
    assert.equal(seenAtResolve.length, 100);
    assert.ok(
      seenAtResolve.every((n) => n === 1),
      "every resolved write is visible to another connection",
    );
    observer.close();
    await database.close();
  });
});

Deno.test("when the group's COMMIT fails, every unit of the group is rejected and nothing persists", async () => {
  await withTempDir(async (dir) => {
    const { database, values } = await probeTable(dir);
    await database.writer.write((tx) =>
      tx.execute(
        "CREATE TABLE child(id INTEGER PRIMARY KEY, parent TEXT REFERENCES probe(v) DEFERRABLE INITIALLY DEFERRED)",
      )
    );
    // The deferred foreign key is checked only at COMMIT, after both units already succeeded.
    const results = await Promise.allSettled([
      database.writer.write((tx) => tx.execute(insert("innocent"))),
      database.writer.write((tx) => tx.execute("INSERT INTO child(parent) VALUES ('missing')")),
    ]);
    assert.deepEqual(results.map((r) => r.status), ["rejected", "rejected"]);
    for (const result of results) {
      assert.ok((result as PromiseRejectedResult).reason instanceof WriteGroupError);
    }
    assert.deepEqual(await values(), []);
    // The writer keeps working afterwards.
    await database.writer.write((tx) => tx.execute(insert("after")));
    assert.deepEqual(await values(), ["after"]);
    await database.close();
  });
});

Deno.test("50 concurrent writers x 40 writes: 0 lock errors, all rows, group commit in use", async () => {
  await withTempDir(async (dir) => {
    const { database } = await probeTable(dir);
    const errors: unknown[] = [];
    await Promise.all(Array.from({ length: 50 }, async (_, writer) => {
      for (let i = 0; i < 40; i++) {
        try {
          await database.writer.write((tx) => tx.execute(insert(`w${writer}-${i}`)));
        } catch (error) {
          errors.push(error);
        }
      }
    }));
    assert.deepEqual(errors, []);
    const count = await database.readClient.execute("SELECT count(*) n FROM probe");
    assert.equal(Number(count.rows[0].n), 2000);
    assert.ok(
      database.writer.stats.groups < 200,
      `2000 units in ${database.writer.stats.groups} groups`,
    );
    await database.close();
  });
});

Deno.test("the event loop gets its turn between groups: what waited runs before the next group starts", async () => {
  await withTempDir(async (dir) => {
    const { database } = await probeTable(dir);
    const order: string[] = [];
    let second: Promise<unknown> | undefined;
    await database.writer.write(async (tx) => {
      order.push("first group");
      // Queued while a group runs: it goes in the next group, after what waits on the loop.
      second = database.writer.write(async (tx) => {
        order.push("second group");
        await tx.execute(insert("second"));
      });
      setImmediate(() => order.push("a waiting task"));
      await tx.execute(insert("first"));
    });
    await second;
    assert.deepEqual(order, ["first group", "a waiting task", "second group"]);
    await database.close();
  });
});

/** A batch of probe inserts that records how it ran: `many` once per group, `one` per unit alone. */
function probeBatch(options: { manyThrows?: boolean; alone?: (v: string) => boolean } = {}) {
  const calls: string[] = [];
  const batch: UnitBatch<string, string> = {
    one: (v) => async (tx) => {
      calls.push(`one ${v}`);
      await tx.execute(insert(v));
      return `alone ${v}`;
    },
    many: async (tx, vs) => {
      calls.push(`many ${vs.join(",")}`);
      const together = vs.filter((v) => !options.alone?.(v));
      if (together.length > 0) {
        await tx.execute({
          sql: `INSERT INTO probe(v) VALUES ${together.map(() => "(?)").join(", ")}`,
          args: together,
        });
      }
      if (options.manyThrows) throw new Error("a row of the batch failed");
      return vs.map((v) => options.alone?.(v) ? RUN_ALONE : `together ${v}`);
    },
  };
  return { batch, calls };
}

Deno.test("writeTogether: the units of one batch queued at once run in one call of many, a value each, in one group", async () => {
  await withTempDir(async (dir) => {
    const { database, values } = await probeTable(dir);
    const { batch, calls } = probeBatch();
    const groupsBefore = database.writer.stats.groups;
    const answers = await Promise.all([
      database.writer.writeTogether(batch, "a"),
      database.writer.write((tx) => tx.execute(insert("plain")).then(() => "plain")),
      database.writer.writeTogether(batch, "b"),
      database.writer.writeTogether(batch, "c"),
    ]);
    assert.deepEqual(answers, ["together a", "plain", "together b", "together c"]);
    assert.deepEqual(calls, ["many a,b,c"]);
    assert.equal(database.writer.stats.groups - groupsBefore, 1);
    assert.deepEqual(await values(), ["a", "b", "c", "plain"]);
    // Alone in its group, a unit of a batch runs as one.
    assert.equal(await database.writer.writeTogether(batch, "d"), "alone d");
    assert.deepEqual(calls, ["many a,b,c", "one d"]);
    await database.close();
  });
});

Deno.test("writeTogether: a batch that throws is undone and each unit runs alone: the one that fails is rejected, its neighbours commit", async () => {
  await withTempDir(async (dir) => {
    const { database, values } = await probeTable(dir);
    await database.writer.write((tx) => tx.execute(insert("taken")));
    const { batch, calls } = probeBatch();
    const results = await Promise.allSettled(
      ["a", "taken", "b"].map((v) => database.writer.writeTogether(batch, v)),
    );
    // The unique clash fails the batch's statement: nothing of it is kept, then one unit each.
    assert.deepEqual(calls, ["many a,taken,b", "one a", "one taken", "one b"]);
    assert.deepEqual(results.map((r) => r.status), ["fulfilled", "rejected", "fulfilled"]);
    assert.deepEqual(results.map((r) => r.status === "fulfilled" ? r.value : null), [
      "alone a",
      null,
      "alone b",
    ]);
    assert.deepEqual(await values(), ["a", "b", "taken"]);
    const thrown = probeBatch({ manyThrows: true });
    const after = await Promise.all(
      ["c", "d"].map((v) => database.writer.writeTogether(thrown.batch, v)),
    );
    assert.deepEqual(after, ["alone c", "alone d"]);
    assert.deepEqual(await values(), ["a", "b", "c", "d", "taken"]);
    await database.close();
  });
});

Deno.test("writeTogether: a unit the batch leaves RUN_ALONE runs in its own unit after the batch, in the same group", async () => {
  await withTempDir(async (dir) => {
    const { database, values } = await probeTable(dir);
    const { batch, calls } = probeBatch({ alone: (v) => v === "b" });
    const groupsBefore = database.writer.stats.groups;
    const answers = await Promise.all(
      ["a", "b", "c"].map((v) => database.writer.writeTogether(batch, v)),
    );
    assert.deepEqual(answers, ["together a", "alone b", "together c"]);
    assert.deepEqual(calls, ["many a,b,c", "one b"]);
    assert.equal(database.writer.stats.groups - groupsBefore, 1);
    assert.deepEqual(await values(), ["a", "b", "c"]);
    await database.close();
  });
});
