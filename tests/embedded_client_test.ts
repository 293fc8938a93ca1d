/**
 * The embedded client stands in for `@libsql/client` on `file:` URLs: the same rows, results,
 * errors and transactions, over kept statements, and drizzle works through it.
 */
import { createClient, LibsqlError } from "@libsql/client";
import assert from "node:assert/strict";
import { eq } from "drizzle-orm";
import { filePathOf, openEmbeddedClient } from "../db/embedded_client.ts";
import { openTempDatabase, withTempDir } from "./helpers.ts";
import * as schema from "../db/schema.ts";

Deno.test("file: URLs name their path; another host or scheme is refused", () => {
  assert.equal(filePathOf("file:data/test.db"), "data/test.db");
  assert.equal(filePathOf("file:/srv/x/test.db"), "/srv/x/test.db");
  assert.equal(filePathOf("file:///srv/x/test.db"), "/srv/x/test.db");
  assert.equal(filePathOf("file://localhost/srv/x/test.db"), "/srv/x/test.db");
  assert.equal(filePathOf("file:/srv/my%20data/test.db"), "/srv/my data/test.db");
  assert.throws(() => filePathOf("file://example.com/x.db"), /names no host/);
  assert.throws(() => filePathOf("libsql://example.com"), /not a file: URL/);
});

Deno.test("rows read as @libsql/client's: named columns, hidden positions, first duplicate wins", async () => {
  await withTempDir(async (dir) => {
    const url = `file:${dir}/rows.db`;
    const client = openEmbeddedClient(url, 1000);
    await client.execute(
      "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, body BLOB, share REAL)",
    );
    await client.execute({
      sql: "INSERT INTO t (name, body, share) VALUES (?, ?, ?)",
      args: ["ann", new Uint8Array([1, 2, 3]), 0.5],
    });
    const sql = "SELECT id, name, body, share, name AS name, 'x' AS length FROM t";
    const ours = await client.execute(sql);
    const reference = createClient({ url });
    const theirs = await reference.execute(sql);
    reference.close();
    for (const result of [ours, theirs]) {
      assert.deepEqual(result.columns, ["id", "name", "body", "share", "name", "length"]);
      const row = result.rows[0];
      assert.deepEqual(Object.keys(row), ["id", "name", "body", "share"]);
      assert.equal(row.length, 6);
      assert.deepEqual(Array.from(row).slice(0, 2), [1, "ann"]);
      assert.equal(row[5], "x");
      assert.ok(row.body instanceof ArrayBuffer);
      assert.deepEqual([...new Uint8Array(row.body as ArrayBuffer)], [1, 2, 3]);
      assert.equal(
        JSON.stringify(row),
        JSON.stringify({ id: 1, name: "ann", body: {}, share: 0.5 }),
      );
      assert.deepEqual({ ...row, body: null }, { id: 1, name: "ann", body: null, share: 0.5 });
    }
    assert.deepEqual(ours.toJSON(), theirs.toJSON());
    client.close();
  });
});

Deno.test("writes report rows affected and the last rowid; named arguments and booleans bind", async () => {
  await withTempDir(async (dir) => {
    const client = openEmbeddedClient(`file:${dir}/w.db`, 1000);
    await client.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, flag INTEGER, at INTEGER)");
    const first = await client.execute({
      sql: "INSERT INTO t (flag, at) VALUES (:flag, $at)",
      args: { ":flag": true, at: new Date(5) },
    });
    assert.equal(first.rowsAffected, 1);
    assert.equal(first.lastInsertRowid, 1n);
    await client.execute("INSERT INTO t (flag, at) VALUES (?, ?)", [false, 9n]);
    const updated = await client.execute("UPDATE t SET at = at + 1");
    assert.equal(updated.rowsAffected, 2);
    const { rows } = await client.execute("SELECT flag, at FROM t ORDER BY id");
    assert.deepEqual(rows.map((row) => [row.flag, row.at]), [[1, 6], [0, 10]]);
    await assert.rejects(
      () => client.execute({ sql: "SELECT ?", args: [undefined as unknown as null] }),
      TypeError,
    );
    await assert.rejects(() => client.execute({ sql: "SELECT ?", args: [NaN] }), RangeError);
    client.close();
  });
});

Deno.test("SQLite errors arrive as LibsqlError with the base code and the raw extended code", async () => {
  await withTempDir(async (dir) => {
    const client = openEmbeddedClient(`file:${dir}/e.db`, 1000);
    await client.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)");
    await client.execute("INSERT INTO t (id) VALUES (1)");
    const error = await client.execute("INSERT INTO t (id) VALUES (1)").catch((e) => e);
    assert.ok(error instanceof LibsqlError);
    assert.equal(error.code, "SQLITE_CONSTRAINT");
    assert.equal(error.rawCode, 1555); // SQLITE_CONSTRAINT_PRIMARYKEY
    assert.equal(error.message, "SQLITE_CONSTRAINT: UNIQUE constraint failed: t.id");
    const syntax = await client.execute("SELEC 1").catch((e) => e);
    assert.ok(syntax instanceof LibsqlError);
    assert.equal(syntax.code, "SQLITE_ERROR");
    client.close();
  });
});

Deno.test("transactions: commit, rollback, a failed COMMIT frees the connection, others wait", async () => {
  await withTempDir(async (dir) => {
    const client = openEmbeddedClient(`file:${dir}/tx.db`, 1000);
    await client.execute("PRAGMA foreign_keys=ON");
    await client.execute("CREATE TABLE p (v TEXT PRIMARY KEY)");
    await client.execute(
      "CREATE TABLE c (id INTEGER PRIMARY KEY, p TEXT REFERENCES p(v) DEFERRABLE INITIALLY DEFERRED)",
    );
    const values = async () =>
      (await client.execute("SELECT v FROM p ORDER BY v")).rows.map((row) => row.v);

    const kept = await client.transaction("write");
    await kept.execute({ sql: "INSERT INTO p (v) VALUES (?)", args: ["a"] });
    // A call outside the open transaction waits for it instead of running inside it.
    const outside = client.execute("SELECT count(*) AS n FROM p");
    await kept.commit();
    assert.equal((await outside).rows[0].n, 1);
    assert.equal(kept.closed, true);

    const dropped = await client.transaction("write");
    await dropped.batch([{ sql: "INSERT INTO p (v) VALUES ('b')", args: [] }]);
    await dropped.rollback();
    assert.deepEqual(await values(), ["a"]);

    const failing = await client.transaction("write");
    await failing.execute("INSERT INTO c (p) VALUES ('missing')");
    await assert.rejects(() => failing.commit(), LibsqlError);
    await failing.rollback();
    assert.equal(failing.closed, true);
    assert.deepEqual((await client.execute("SELECT count(*) AS n FROM c")).rows[0].n, 0);
    const next = await client.transaction("write");
    await next.execute("INSERT INTO p (v) VALUES ('c')");
    await next.commit();
    assert.deepEqual(await values(), ["a", "c"]);

    await assert.rejects(
      () => client.batch(["INSERT INTO p (v) VALUES ('d')", "INSERT INTO p (v) VALUES ('a')"]),
      LibsqlError,
    );
    assert.deepEqual(await values(), ["a", "c"], "a failed batch writes nothing");
    client.close();
    await assert.rejects(() => client.execute("SELECT 1"), /closed/);
  });
});

Deno.test("kept statements: more distinct statements than are kept still run; reconnect keeps data", async () => {
  await withTempDir(async (dir) => {
    const client = openEmbeddedClient(`file:${dir}/k.db`, 1000);
    await client.execute("PRAGMA synchronous=OFF"); // a scratch file: no fsync per insert
    await client.execute("CREATE TABLE t (n INTEGER)");
    for (let i = 0; i < 1_200; i++) {
      await client.execute({ sql: `INSERT INTO t (n) VALUES (? + ${i})`, args: [0] });
    }
    await client.execute({ sql: "INSERT INTO t (n) VALUES (? + 0)", args: [1] });
    assert.equal((await client.execute("SELECT count(*) AS n FROM t")).rows[0].n, 1_201);
    client.reconnect();
    assert.equal((await client.execute("SELECT sum(n) AS s FROM t")).rows[0].s, 719_401);
    client.close();
  });
});

Deno.test("drizzle runs through it: the service's databases open on it with the same schema", async () => {
  await withTempDir(async (dir) => {
    const database = await openTempDatabase(dir);
    await database.writer.write(async (tx) => {
      await tx.db.insert(schema.companies).values({
        id: "co_1",
        name: "Acme",
        tin: "123456789",
        createdAt: 1,
      });
    });
    const found = await database.read.select().from(schema.companies).where(
      eq(schema.companies.id, "co_1"),
    );
    assert.equal(found.length, 1);
    assert.equal(found[0].name, "Acme");
    assert.equal(found[0].tin, "123456789");
    await database.close();
    // The file is plain SQLite: @libsql/client reads what node:sqlite wrote.
    const reference = createClient({ url: `file:${dir}/test.db` });
    const { rows } = await reference.execute("SELECT name FROM companies");
    assert.deepEqual(rows.map((row) => row.name), ["Acme"]);
    reference.close();
  });
});
