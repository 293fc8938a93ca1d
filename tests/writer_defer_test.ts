/**
 * `tx.defer` on the embedded file: deferred writes run in order before the unit's next statement
 * (or its end), and one that fails, or whose check throws, fails its unit only. The same on a
 * libSQL server, with round trips counted: tests/writer_remote_test.ts.
 */
import assert from "node:assert/strict";
import { openTempDatabase, withTempDir } from "./helpers.ts";

const insert = (v: string) => ({ sql: "INSERT INTO probe(v) VALUES (?)", args: [v] });

Deno.test("embedded writer: deferred writes run in order before the next statement and at the unit's end", async () => {
  await withTempDir(async (dir) => {
    const database = await openTempDatabase(dir);
    await database.writer.write((tx) =>
      tx.execute("CREATE TABLE probe(id INTEGER PRIMARY KEY, v TEXT NOT NULL UNIQUE)")
    );
    const seen = await database.writer.write(async (tx) => {
      tx.defer(insert("a"));
      tx.defer(insert("b"));
      const { rows } = await tx.execute("SELECT group_concat(v, ',') AS vs FROM probe");
      tx.defer(insert("c"));
      return rows[0].vs;
    });
    assert.equal(seen, "a,b");
    const results = await Promise.allSettled([
      database.writer.write((tx) => Promise.resolve(tx.defer(insert("a")))),
      database.writer.write((tx) => {
        tx.defer(insert("d"));
        tx.defer({ sql: "SELECT count(*) AS n FROM probe" }, (result) => {
          if (result.rows[0].n !== 0) throw new Error(`read back ${result.rows[0].n} rows`);
        });
        return Promise.resolve();
      }),
      database.writer.write((tx) => Promise.resolve(tx.defer(insert("e")))),
    ]);
    assert.deepEqual(results.map((r) => r.status), ["rejected", "rejected", "fulfilled"]);
    assert.match(String((results[0] as PromiseRejectedResult).reason), /UNIQUE/);
    assert.equal((results[1] as PromiseRejectedResult).reason.message, "read back 4 rows");
    const { rows } = await database.readClient.execute("SELECT v FROM probe ORDER BY v");
    assert.deepEqual(rows.map((r) => r.v), ["a", "b", "c", "e"]);
    await database.close();
  });
});
