/**
 * The Hrana contract server on its own, driven by `@libsql/client` (which speaks Hrana 2 over
 * HTTP: `/v2/pipeline`) and, for what that client does not send (Hrana 3's `/v3/pipeline`,
 * `/v3/cursor`, `get_autocommit`, `is_autocommit`), by hand-written requests as the spec writes.
 */
import assert from "node:assert/strict";
import { type Client, createClient, type InStatement, LibsqlError } from "@libsql/client";
import { type HranaServer, type HranaServerOptions, startHranaServer } from "./hrana_server.ts";
import { withTempDir } from "./helpers.ts";

async function withServer(
  options: Omit<HranaServerOptions, "path">,
  fn: (server: HranaServer, client: Client) => Promise<void>,
): Promise<void> {
  await withTempDir(async (dir) => {
    const server = await startHranaServer({ path: `${dir}/primary.db`, ...options });
    const client = createClient({ url: server.url, authToken: options.authToken });
    try {
      await fn(server, client);
    } finally {
      client.close();
      await server.close();
    }
  });
}

async function post(server: HranaServer, path: string, body: unknown): Promise<Response> {
  return await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

const text = (value: string) => ({ type: "text", value });
const integer = (value: number) => ({ type: "integer", value: String(value) });

Deno.test("hrana server: execute, and each value type round-trips", async () => {
  await withServer({}, async (server) => {
    const client = createClient({ url: server.url, intMode: "bigint" });
    try {
      await client.execute("CREATE TABLE v (i INTEGER, r REAL, t TEXT, b BLOB, n)");
      const inserted = await client.execute({
        sql: "INSERT INTO v VALUES (?, ?, ?, ?, ?)",
        args: [
          9_007_199_254_740_993n,
          1.25,
          "Grüße \u{1F4B8}",
          new Uint8Array([0, 1, 254, 255]),
          null,
        ],
      });
      assert.equal(inserted.rowsAffected, 1);
      assert.equal(inserted.lastInsertRowid, 1n);
      const read = await client.execute("SELECT i, r, t, b, n, typeof(i), typeof(r) FROM v");
      assert.deepEqual(read.columns, ["i", "r", "t", "b", "n", "typeof(i)", "typeof(r)"]);
      assert.deepEqual(read.columnTypes, ["INTEGER", "REAL", "TEXT", "BLOB", "", "", ""]);
      const row = read.rows[0];
      assert.equal(row.i, 9_007_199_254_740_993n);
      assert.equal(row.r, 1.25);
      assert.equal(row.t, "Grüße \u{1F4B8}");
      assert.deepEqual(new Uint8Array(row.b as ArrayBuffer), new Uint8Array([0, 1, 254, 255]));
      assert.equal(row.n, null);
      assert.equal(row["typeof(i)"], "integer");
      assert.equal(row["typeof(r)"], "real");
      assert.equal(read.rowsAffected, 0);
      // Named arguments, with and without their prefix. The client sends a JS number as a float.
      const named = await client.execute({
        sql: "SELECT :a AS a, @b AS b, $c AS c",
        args: { a: 1, "@b": "two", c: null },
      });
      assert.deepEqual({ ...named.rows[0] }, { a: 1, b: "two", c: null });
    } finally {
      client.close();
    }
  });
});

Deno.test("hrana server: a statement's errors are the spec's, the stream goes on", async () => {
  await withServer({}, async (_server, client) => {
    await client.execute("CREATE TABLE u (k TEXT PRIMARY KEY)");
    await client.execute({ sql: "INSERT INTO u VALUES (?)", args: ["a"] });
    const refused = async (statement: InStatement) => {
      try {
        await client.execute(statement);
      } catch (error) {
        assert.ok(error instanceof LibsqlError);
        return { code: error.code, message: error.message };
      }
      assert.fail("the statement was accepted");
    };
    assert.deepEqual(await refused({ sql: "INSERT INTO u VALUES (?)", args: ["a"] }), {
      code: "SQLITE_CONSTRAINT",
      message: "SQLITE_CONSTRAINT: SQLite error: UNIQUE constraint failed: u.k",
    });
    assert.equal((await refused("SELECT * FROM missing"))?.code, "SQLITE_ERROR");
    assert.equal((await refused("SELECT 1; SELECT 2"))?.code, "SQL_MANY_STATEMENTS");
    assert.equal((await refused("  -- nothing\n"))?.code, "SQL_NO_STATEMENT");
    assert.equal((await refused({ sql: "SELECT ?, ?", args: [1] }))?.code, "ARGS_INVALID");
    assert.equal((await refused({ sql: "SELECT :a", args: { b: 1 } }))?.code, "ARGS_INVALID");
    // A question mark inside a string is no parameter.
    const quoted = await client.execute({ sql: "SELECT '?' AS q, ? AS p", args: [2] });
    assert.deepEqual({ ...quoted.rows[0] }, { q: "?", p: 2 });
  });
});

Deno.test("hrana server: transactions commit and roll back", async () => {
  await withServer({}, async (_server, client) => {
    await client.execute("CREATE TABLE ledger (id INTEGER PRIMARY KEY, cents INTEGER NOT NULL)");
    const committed = await client.transaction("write");
    await committed.execute({ sql: "INSERT INTO ledger (cents) VALUES (?)", args: [100] });
    await committed.execute({ sql: "INSERT INTO ledger (cents) VALUES (?)", args: [-100] });
    const inside = await committed.execute("SELECT count(*) AS n FROM ledger");
    assert.equal(inside.rows[0].n, 2);
    await committed.commit();

    const rolledBack = await client.transaction("write");
    await rolledBack.execute({ sql: "INSERT INTO ledger (cents) VALUES (?)", args: [7] });
    await rolledBack.rollback();

    const after = await client.execute("SELECT sum(cents) AS total, count(*) AS n FROM ledger");
    assert.deepEqual({ ...after.rows[0] }, { total: 0, n: 2 });
  });
});

Deno.test("hrana server: batches stop at the first failure and roll back", async () => {
  await withServer({}, async (_server, client) => {
    await client.execute("CREATE TABLE t (k TEXT PRIMARY KEY)");
    const results = await client.batch([
      { sql: "INSERT INTO t VALUES (?)", args: ["a"] },
      { sql: "INSERT INTO t VALUES (?)", args: ["b"] },
      "SELECT k FROM t ORDER BY k",
    ], "write");
    assert.deepEqual(results[2].rows.map((r) => r.k), ["a", "b"]);
    // The client's batch is BEGIN, each step on the previous one's ok, COMMIT, then ROLLBACK on
    // not ok(COMMIT): a failing step skips the rest and the whole batch is undone.
    await assert.rejects(
      () =>
        client.batch([
          { sql: "INSERT INTO t VALUES (?)", args: ["c"] },
          { sql: "INSERT INTO t VALUES (?)", args: ["a"] },
        ], "write"),
      (error: unknown) => error instanceof LibsqlError && error.code === "SQLITE_CONSTRAINT",
    );
    const rows = await client.execute("SELECT k FROM t ORDER BY k");
    assert.deepEqual(rows.rows.map((r) => r.k), ["a", "b"]);
    await client.executeMultiple("INSERT INTO t VALUES ('x'); INSERT INTO t VALUES ('y');");
    assert.equal((await client.execute("SELECT count(*) AS n FROM t")).rows[0].n, 4);
  });
});

Deno.test("hrana server: Hrana 3 pipeline conditions, get_autocommit and the cursor", async () => {
  await withServer({}, async (server) => {
    const stmt = (sql: string, args: unknown[] = []) => ({ sql, args, want_rows: true });
    const piped = await post(server, "/v3/pipeline", {
      baton: null,
      requests: [
        { type: "execute", stmt: stmt("CREATE TABLE c (n INTEGER)") },
        {
          type: "batch",
          batch: {
            steps: [
              { stmt: stmt("BEGIN") },
              { condition: { type: "is_autocommit" }, stmt: stmt("SELECT 'skipped'") },
              { stmt: stmt("INSERT INTO c VALUES (?)", [integer(1)]) },
              { stmt: stmt("INSERT INTO nowhere VALUES (1)") },
              { condition: { type: "error", step: 3 }, stmt: stmt("SELECT 'error seen'") },
              {
                condition: {
                  type: "and",
                  conds: [{ type: "ok", step: 2 }, {
                    type: "not",
                    cond: { type: "is_autocommit" },
                  }],
                },
                stmt: stmt("SELECT n FROM c"),
              },
              {
                condition: {
                  type: "or",
                  conds: [{ type: "ok", step: 1 }, { type: "ok", step: 3 }],
                },
                stmt: stmt("SELECT 'never'"),
              },
            ],
          },
        },
        { type: "get_autocommit" },
        { type: "store_sql", sql_id: 1, sql: "SELECT ? AS echo" },
        { type: "execute", stmt: { sql_id: 1, args: [text("stored")] } },
        { type: "close_sql", sql_id: 1 },
      ],
    });
    assert.equal(piped.status, 200);
    const body = await piped.json();
    assert.equal(typeof body.baton, "string");
    assert.equal(body.base_url, null);
    const [created, batch, autocommit, stored, echo, closedSql] = body.results;
    assert.deepEqual(created, {
      type: "ok",
      response: {
        type: "execute",
        result: { cols: [], rows: [], affected_row_count: 0, last_insert_rowid: null },
      },
    });
    const { step_results, step_errors } = batch.response.result;
    assert.deepEqual(step_results.map((r: unknown) => r !== null), [
      true,
      false,
      true,
      false,
      true,
      true,
      false,
    ]);
    assert.deepEqual(step_errors.map((e: { code: string } | null) => e?.code ?? null), [
      null,
      null,
      null,
      "SQLITE_ERROR",
      null,
      null,
      null,
    ]);
    assert.deepEqual(step_results[5].rows, [[integer(1)]]);
    assert.deepEqual(autocommit.response, { type: "get_autocommit", is_autocommit: false });
    assert.deepEqual(stored.response, { type: "store_sql" });
    assert.deepEqual(echo.response.result.rows, [[text("stored")]]);
    assert.deepEqual(closedSql.response, { type: "close_sql" });

    // The cursor runs a batch on the same stream (its transaction still open) and streams lines.
    const cursor = await post(server, "/v3/cursor", {
      baton: body.baton,
      batch: {
        steps: [
          { stmt: stmt("INSERT INTO c VALUES (2)") },
          { stmt: stmt("SELECT n FROM c ORDER BY n") },
          { stmt: stmt("SELECT * FROM nowhere") },
          { condition: { type: "ok", step: 2 }, stmt: stmt("SELECT 'skipped'") },
          { stmt: stmt("COMMIT") },
        ],
      },
    });
    assert.equal(cursor.status, 200);
    const lines = (await cursor.text()).trimEnd().split("\n").map((line) => JSON.parse(line));
    assert.equal(typeof lines[0].baton, "string");
    assert.deepEqual(lines.slice(1).map((l) => l.type), [
      "step_begin",
      "step_end",
      "step_begin",
      "row",
      "row",
      "step_end",
      "step_error",
      "step_begin",
      "step_end",
    ]);
    assert.deepEqual(lines[1], { type: "step_begin", step: 0, cols: [] });
    assert.deepEqual(lines[2], { type: "step_end", affected_row_count: 1, last_insert_rowid: "2" });
    assert.deepEqual(lines[4], { type: "row", row: [integer(1)] });
    assert.equal(lines[7].step, 2);
    assert.equal(lines[7].error.code, "SQLITE_ERROR");
    assert.equal(lines[8].step, 4);

    // The old baton was used: it is refused; the new one closes the stream.
    assert.equal(
      (await post(server, "/v3/pipeline", { baton: body.baton, requests: [] })).status,
      400,
    );
    const closing = await post(server, "/v3/pipeline", {
      baton: lines[0].baton,
      requests: [{ type: "close" }],
    });
    assert.deepEqual(await closing.json(), {
      baton: null,
      base_url: null,
      results: [{ type: "ok", response: { type: "close" } }],
    });
  });
});

Deno.test("hrana server: what it does not understand is refused, never guessed", async () => {
  await withServer({}, async (server) => {
    const refusal = async (path: string, body: unknown) => {
      const response = await post(server, path, body);
      return { status: response.status, body: await response.text() };
    };
    assert.deepEqual(
      await refusal("/v3/pipeline", { baton: null, requests: [{ type: "frobnicate" }] }),
      {
        status: 400,
        body:
          "requests[0].type: expected close, execute, batch, sequence, describe, store_sql, close_sql or get_autocommit",
      },
    );
    assert.deepEqual(
      await refusal("/v3/pipeline", {
        requests: [{
          type: "execute",
          stmt: { sql: "SELECT ?", args: [{ type: "decimal", value: "1" }] },
        }],
      }),
      {
        status: 400,
        body: "requests[0].stmt.args[0].type: expected null, integer, float, text or blob",
      },
    );
    assert.deepEqual(
      await refusal("/v3/pipeline", {
        requests: [{
          type: "execute",
          stmt: { sql: "SELECT ?", args: [{ type: "integer", value: 1 }] },
        }],
      }),
      { status: 400, body: "requests[0].stmt.args[0].value: expected a string" },
    );
    assert.deepEqual(await refusal("/v2/pipeline", { requests: [{ type: "get_autocommit" }] }), {
      status: 400,
      body: "requests[0].type: expected a request of Hrana 2 (get_autocommit is Hrana 3)",
    });
    assert.equal((await refusal("/v3/pipeline", "{not json")).status, 400);
    assert.deepEqual(await refusal("/v3/pipeline", { baton: "forged", requests: [] }), {
      status: 400,
      body: "The baton is invalid (unknown, or already used)",
    });
    assert.equal(
      (await refusal("/v3/pipeline", {
        requests: [{
          type: "batch",
          batch: { steps: [{ condition: { type: "ok", step: 0 }, stmt: { sql: "SELECT 1" } }] },
        }],
      })).status,
      400,
    );
    assert.deepEqual(
      await refusal("/v3/pipeline", { requests: [{ type: "describe", sql: "SELECT 1" }] }),
      {
        status: 400,
        body: "describe is not supported by this contract server",
      },
    );
    const probes = await Promise.all(
      ["/v2", "/v3", "/v3-protobuf", "/v1/execute"].map(async (path) => {
        const response = await fetch(`${server.url}${path}`);
        await response.body?.cancel();
        return response.status;
      }),
    );
    assert.deepEqual(probes, [200, 200, 404, 404]);
  });
});

Deno.test("hrana server: two write transactions, the second waits for the lock or fails busy", async () => {
  await withServer({ busyTimeoutMs: 300 }, async (_server, client) => {
    await client.execute("CREATE TABLE w (n INTEGER)");
    const first = await client.transaction("write");
    await first.execute("INSERT INTO w VALUES (1)");

    // Given up after the busy timeout, as a libSQL server's connection does.
    const second = await client.transaction("write");
    const started = Date.now();
    await assert.rejects(
      () => second.execute("INSERT INTO w VALUES (2)"),
      (error: unknown) => error instanceof LibsqlError && error.code === "SQLITE_BUSY",
    );
    assert.ok(Date.now() - started >= 300, "it waited for the busy timeout");
    second.close();

    // A third waits while the first holds the lock, and goes on once it commits.
    const third = await client.transaction("write");
    const waiting = third.execute("INSERT INTO w VALUES (3)");
    await new Promise((resolve) => setTimeout(resolve, 100));
    await first.commit();
    await waiting;
    await third.commit();
    const rows = await client.execute("SELECT n FROM w ORDER BY n");
    assert.deepEqual(rows.rows.map((r) => r.n), [1, 3]);
  });
});

Deno.test("hrana server: an abandoned baton expires and its transaction rolls back", async () => {
  await withServer({ batonTtlMs: 200, busyTimeoutMs: 2_000 }, async (_server, client) => {
    await client.execute("CREATE TABLE a (n INTEGER)");
    const abandoned = await client.transaction("write");
    await abandoned.execute("INSERT INTO a VALUES (1)");
    // Another writer waits for the lock until the abandoned stream expires, then writes.
    const started = Date.now();
    await client.execute("INSERT INTO a VALUES (2)");
    assert.ok(Date.now() - started >= 150, "the lock was held until the baton expired");
    const rows = await client.execute("SELECT n FROM a");
    assert.deepEqual(rows.rows.map((r) => r.n), [2]);
    await assert.rejects(
      () => abandoned.commit(),
      (error: unknown) => error instanceof LibsqlError && error.code === "STREAM_EXPIRED",
    );
  });
});

Deno.test("hrana server: a bearer token is checked, requests are counted and delayed", async () => {
  await withServer({ authToken: "primary-secret", delayMs: 20 }, async (server, client) => {
    server.resetCount();
    const started = Date.now();
    await client.execute("SELECT 1");
    assert.ok(Date.now() - started >= 20, "the added delay was applied");
    assert.equal(server.requestCount(), 1);
    server.setDelay(0);
    const intruder = createClient({ url: server.url, authToken: "wrong" });
    try {
      await assert.rejects(
        () => intruder.execute("SELECT 1"),
        (error: unknown) =>
          error instanceof LibsqlError && error.code === "SERVER_ERROR" &&
          error.message.includes("401"),
      );
    } finally {
      intruder.close();
    }
    assert.equal(server.requestCount(), 2);
  });
});

Deno.test("hrana server: the time streams spend inside transactions is summed", async () => {
  await withServer({}, async (server, client) => {
    await client.execute("CREATE TABLE t (n INTEGER)");
    server.resetCount();
    await client.execute("INSERT INTO t VALUES (1)");
    assert.ok(server.transactionMs() < 5, "autocommit statements hold no transaction");
    const held = await client.transaction("write");
    await held.execute("INSERT INTO t VALUES (2)");
    await new Promise((resolve) => setTimeout(resolve, 100));
    await held.commit();
    assert.ok(server.transactionMs() >= 90, `${server.transactionMs()} ms in transactions`);
    const abandoned = await client.transaction("write");
    await abandoned.execute("INSERT INTO t VALUES (3)");
    await abandoned.rollback();
    server.resetCount();
    assert.equal(server.transactionMs(), 0);
  });
});
