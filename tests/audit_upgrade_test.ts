/**
 * An audit log written before the chain had a key (rows chained with an unkeyed SHA-256) upgrades:
 * the first start with the key, of the service or of the CLI, appends one keyed
 * `audit.chain_keyed` marker naming the older rows, and audit:verify accepts them only as a prefix
 * the marker follows. Before, such a log failed audit:verify at row 1 after the upgrade.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { createClient } from "@libsql/client";
import type { Database } from "../db/client.ts";
import { keyLegacyAuditChains, verifyAudit } from "../lib/audit/service.ts";
import { appendAudit } from "../lib/audit/store.ts";
import { canonicalJson } from "../lib/audit/rules.ts";
import { createDatabases } from "./admin_cli_helpers.ts";
import { openTempDatabase, withTempDir } from "./helpers.ts";
import { freePort } from "../bench/service.ts";

const root = new URL("..", import.meta.url).pathname;
const KEYS = { JWT_SECRET: "j".repeat(40), ENCRYPTION_KEY: btoa("e".repeat(32)) };
const T0 = Date.parse("2026-11-01T12:00:00Z");

type Databases = { test: Database; live: Database };

/** The unkeyed SHA-256 the log was chained with before it had a key, as that release wrote it. */
function sha256Row(row: Record<string, string | number | null>): string {
  return createHash("sha256").update(canonicalJson({
    seq: row.seq,
    id: row.id,
    at: row.at,
    environment: row.environment,
    operator_id: row.operator_id,
    operator_email: row.operator_email,
    origin: row.origin,
    action: row.action,
    object_type: row.object_type,
    object_id: row.object_id,
    company_id: row.company_id,
    before: row.before,
    after: row.after,
    prev_hash: row.prev_hash,
  })).digest("hex");
}

const INSERT =
  `INSERT INTO audit_log (seq, id, at, environment, operator_id, operator_email, origin,
  action, object_type, object_id, company_id, before, after, prev_hash, hash)
  VALUES (:seq, :id, :at, :environment, :operator_id, :operator_email, :origin, :action,
  :object_type, :object_id, :company_id, :before, :after, :prev_hash, :hash)`;

/** Appends `count` rows chained the way the log was before it had a key. */
async function writeUnkeyedRows(database: Database, count: number): Promise<void> {
  await database.writer.write(async (tx) => {
    const { rows } = await tx.execute("SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1");
    let seq = rows[0] ? Number(rows[0].seq) : 0;
    let prev = rows[0] ? String(rows[0].hash) : "0".repeat(64);
    for (let i = 0; i < count; i++) {
      seq++;
      const row = {
        seq,
        id: `aud_legacy${database.environment}${seq}`,
        at: T0 + seq * 1000,
        environment: database.environment,
        operator_id: "op_legacy",
        operator_email: "admin@ops.test",
        origin: "cli",
        action: "fees:set",
        object_type: "fee_schedule",
        object_id: `123456789:${seq}`,
        company_id: "123456789",
        before: null,
        after: canonicalJson({ payor_fee_cents: 100 * seq }),
        prev_hash: prev,
      };
      prev = sha256Row(row);
      await tx.execute({ sql: INSERT, args: { ...row, hash: prev } });
    }
  });
}

/** Appends one keyed row, as any audited change does. */
async function writeKeyedRow(database: Database): Promise<void> {
  await database.writer.write((tx) =>
    appendAudit(tx, database.environment, { operator: null, origin: "cli" }, {
      at: T0 + 100_000,
      action: "fees:set",
      objectType: "fee_schedule",
      objectId: "123456789:9",
      companyId: "123456789",
      before: null,
      after: { payor_fee_cents: 1 },
    })
  );
}

async function rowsOf(database: Database) {
  const { rows } = await database.readClient.execute("SELECT * FROM audit_log ORDER BY seq");
  return rows.map((row) => ({ ...row }) as Record<string, string | number | null>);
}

async function withDatabases(fn: (databases: Databases) => Promise<void>): Promise<void> {
  await withTempDir(async (dir) => {
    const databases = {
      test: await openTempDatabase(dir, "test"),
      live: await openTempDatabase(dir, "live"),
    };
    try {
      await fn(databases);
    } finally {
      await databases.test.close();
      await databases.live.close();
    }
  });
}

async function brokenAt(databases: Databases, environment: "test" | "live") {
  return (await verifyAudit(databases, [environment]))[environment].broken;
}

Deno.test("a log chained before the key upgrades: one keyed marker at the first start, then it verifies", async () => {
  await withDatabases(async (databases) => {
    await writeUnkeyedRows(databases.live, 4);
    await writeUnkeyedRows(databases.test, 2);
    // Before the marker, the unkeyed rows prove nothing: the chain is broken at its end.
    const [fourth] = (await rowsOf(databases.live)).slice(3);
    assert.deepEqual(await brokenAt(databases, "live"), {
      seq: 4,
      id: fourth.id,
      reason: "the log ends on 4 rows chained without the key, and no audit.chain_keyed marker " +
        "follows them (start the service or the CLI with the key once)",
    });

    assert.deepEqual(await keyLegacyAuditChains(databases, "service start", T0 + 60_000), [
      "live",
      "test",
    ]);
    assert.deepEqual(
      await keyLegacyAuditChains(databases, "service start", T0 + 61_000),
      [],
      "a second start appends nothing",
    );
    const live = await rowsOf(databases.live);
    assert.equal(live.length, 5);
    const { id: _id, hash: _hash, ...marker } = live[4];
    assert.deepEqual(marker, {
      seq: 5,
      at: T0 + 60_000,
      environment: "live",
      operator_id: null,
      operator_email: null,
      origin: "service start",
      action: "audit.chain_keyed",
      object_type: "audit_log",
      object_id: null,
      company_id: null,
      before: null,
      after: '{"legacy_rows":4}',
      prev_hash: fourth.hash,
    });
    await writeKeyedRow(databases.live);
    assert.deepEqual(await verifyAudit(databases, ["live", "test"]), {
      live: { rows: 6, broken: null },
      test: { rows: 3, broken: null },
    });

    // An empty log, or one that began keyed, gets no marker.
    await withDatabases(async (fresh) => {
      await writeKeyedRow(fresh.test);
      assert.deepEqual(await keyLegacyAuditChains(fresh, "cli", T0), []);
      assert.deepEqual((await rowsOf(fresh.test)).map((row) => row.action), ["fees:set"]);
    });
  });
});

Deno.test("an upgraded log is broken, at the row named, by a tampered unkeyed row, a removed marker or an unkeyed row after keyed ones", async () => {
  // A tampered unkeyed row: its content no longer matches its hash.
  await withDatabases(async (databases) => {
    await writeUnkeyedRows(databases.test, 3);
    await keyLegacyAuditChains(databases, "cli", T0);
    const [, row2] = await rowsOf(databases.test);
    await databases.test.writer.write(async (tx) => {
      await tx.execute("DROP TRIGGER audit_log_no_update");
      await tx.execute("UPDATE audit_log SET after = '{\"payor_fee_cents\":1}' WHERE seq = 2");
    });
    assert.deepEqual(await brokenAt(databases, "test"), {
      seq: 2,
      id: row2.id,
      reason: "its content does not match its hash: the row was altered",
    });
  });

  // Unkeyed rows re-chained without the key from row 2 on: the keyed marker pins the old last one.
  await withDatabases(async (databases) => {
    await writeUnkeyedRows(databases.test, 3);
    await keyLegacyAuditChains(databases, "cli", T0);
    const rows = await rowsOf(databases.test);
    await databases.test.writer.write(async (tx) => {
      await tx.execute("DROP TRIGGER audit_log_no_update");
      let prev = String(rows[0].hash);
      for (const row of rows.slice(1, 3)) {
        const changed = { ...row, operator_email: "someone@else.test", prev_hash: prev };
        prev = sha256Row(changed);
        await tx.execute({
          sql: "UPDATE audit_log SET operator_email = ?, prev_hash = ?, hash = ? WHERE seq = ?",
          args: [changed.operator_email, changed.prev_hash, prev, row.seq],
        });
      }
    });
    assert.deepEqual(await brokenAt(databases, "test"), {
      seq: 4,
      id: rows[3].id,
      reason: "its prev_hash is not the hash of the row before it",
    });
  });

  // The marker removed: as the last row, the log ends unkeyed; before keyed rows, a row is missing.
  await withDatabases(async (databases) => {
    await writeUnkeyedRows(databases.test, 3);
    await writeUnkeyedRows(databases.live, 3);
    await keyLegacyAuditChains(databases, "cli", T0);
    await writeKeyedRow(databases.live);
    for (const database of [databases.test, databases.live]) {
      await database.writer.write(async (tx) => {
        await tx.execute("DROP TRIGGER audit_log_no_delete");
        await tx.execute("DELETE FROM audit_log WHERE seq = 4");
      });
    }
    const test = await rowsOf(databases.test);
    assert.deepEqual(await brokenAt(databases, "test"), {
      seq: 3,
      id: test[2].id,
      reason: "the log ends on 3 rows chained without the key, and no audit.chain_keyed marker " +
        "follows them (start the service or the CLI with the key once)",
    });
    const live = await rowsOf(databases.live);
    assert.deepEqual(await brokenAt(databases, "live"), {
      seq: 5,
      id: live[3].id,
      reason: "row 4 is missing: the chain jumps from 3 to 5",
    });
  });

  // Keyed rows after unkeyed ones without the marker (the log an upgrade without it left).
  await withDatabases(async (databases) => {
    await writeUnkeyedRows(databases.test, 2);
    await writeKeyedRow(databases.test);
    const rows = await rowsOf(databases.test);
    assert.deepEqual(await brokenAt(databases, "test"), {
      seq: 3,
      id: rows[2].id,
      reason: "it follows 2 rows chained without the key but is not the audit.chain_keyed " +
        "marker naming them",
    });
  });

  // An unkeyed row appended after keyed rows, by someone without the key.
  await withDatabases(async (databases) => {
    await writeUnkeyedRows(databases.test, 2);
    await keyLegacyAuditChains(databases, "cli", T0);
    await writeKeyedRow(databases.test);
    await writeUnkeyedRows(databases.test, 1);
    const rows = await rowsOf(databases.test);
    assert.deepEqual(await brokenAt(databases, "test"), {
      seq: 5,
      id: rows[4].id,
      reason: "it is chained without the key after keyed rows: rows written since the key " +
        "cannot be unkeyed",
    });
    assert.deepEqual(
      await keyLegacyAuditChains(databases, "cli", T0),
      ["test"],
      "a marker after it does not mend it",
    );
    assert.equal((await brokenAt(databases, "test"))?.seq, 5);
  });
});

/** Both databases of a production DATA_DIR holding a log chained before the key. */
async function legacyDataDir(dataDir: string): Promise<void> {
  await createDatabases(dataDir, { dev: false });
  for (const environment of ["test", "live"] as const) {
    const database = await openTempDatabase(dataDir, environment);
    await writeUnkeyedRows(database, 3);
    await database.close();
  }
}

async function actionsIn(dataDir: string, environment: "test" | "live"): Promise<string[]> {
  const client = createClient({ url: `file:${dataDir}/${environment}.db` });
  try {
    const { rows } = await client.execute("SELECT action, origin FROM audit_log ORDER BY seq");
    return rows.map((row) => `${row.action} ${row.origin}`);
  } finally {
    client.close();
  }
}

Deno.test("the CLI's first run with the key, and the service's first start, key an old log", async () => {
  const legacy = ["fees:set cli", "fees:set cli", "fees:set cli"];
  await withTempDir(async (dataDir) => {
    await legacyDataDir(dataDir);
    for (let run = 0; run < 2; run++) {
      const output = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", `${root}cli/admin.ts`, "audit:public-key", "--json"],
        env: { NO_COLOR: "1", DATA_DIR: dataDir, ...KEYS },
        clearEnv: true,
        stdout: "piped",
        stderr: "piped",
      }).output();
      // Signed in or not, the command runs after the log is keyed.
      assert.equal(output.code, 1, new TextDecoder().decode(output.stderr));
    }
    for (const environment of ["test", "live"] as const) {
      assert.deepEqual(await actionsIn(dataDir, environment), [
        ...legacy,
        "audit.chain_keyed cli",
      ]);
    }
  });

  await withTempDir(async (dataDir) => {
    await legacyDataDir(dataDir);
    const port = freePort();
    const service = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", `${root}main.ts`],
      env: {
        DATA_DIR: dataDir,
        ...KEYS,
        PORT: String(port),
        HOST: "127.0.0.1",
        LOG_FORMAT: "off",
        LIVE_NOTIFICATIONS: "off",
      },
      stdout: "null",
      stderr: "null",
    }).spawn();
    try {
      let marked = false;
      for (let i = 0; i < 300 && !marked; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        marked = (await actionsIn(dataDir, "test").catch(() => [])).length === 4 &&
          (await actionsIn(dataDir, "live").catch(() => [])).length === 4;
      }
      for (const environment of ["test", "live"] as const) {
        assert.deepEqual(await actionsIn(dataDir, environment), [
          ...legacy,
          "audit.chain_keyed service start",
        ]);
      }
    } finally {
      service.kill("SIGTERM");
      await service.status;
    }
  });
});
