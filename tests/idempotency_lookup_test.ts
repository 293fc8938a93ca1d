/**
 * The key's lookup rides with the use case's first statements (no round trip of its own on a
 * libSQL server), so a use case starts before the record is read. Whatever it does when the key
 * may not run (its first write fails on the row the first request made, it catches that failure,
 * it sends nothing), the duplicate gets the first's replay or 422, and nothing it wrote is kept.
 * Run on the embedded file and on the Hrana contract server.
 */
import assert from "node:assert/strict";
import type { Database } from "../db/client.ts";
import type { WriteTx } from "../db/writer.ts";
import { type Answer, runIdempotently, type UseCase } from "../lib/idempotency/service.ts";
import { requestFingerprint } from "../lib/idempotency/rules.ts";
import { newId } from "../lib/platform/keys.ts";
import { refuse } from "../lib/platform/result.ts";
import { openTempDatabase, testSecretBox, withTempDir } from "./helpers.ts";
import { migratePrimary, openNodeDatabase, startPrimary } from "./node_helpers.ts";

const MARKER_TIN = "999999999";

const insertCompany = (tx: WriteTx, tin: string) =>
  tx.execute({
    sql: "INSERT INTO companies (id, name, tin, created_at) VALUES (?, 'Co', ?, 0)",
    args: [newId("co"), tin],
  });

/** Use cases of the duplicate, each shaped to start before its key's record is read. */
const shapes: { name: string; useCase: (tin: string) => UseCase<unknown> }[] = [
  {
    name: "reads, then writes",
    useCase: (tin) => async (tx) => {
      await tx.execute({ sql: "SELECT id FROM companies WHERE tin = ?", args: [tin] });
      return (await insertCompany(tx, tin)).rowsAffected;
    },
  },
  {
    name: "writes first",
    useCase: (tin) => async (tx) => (await insertCompany(tx, tin)).rowsAffected,
  },
  {
    name: "catches the failure of its first statement and writes on",
    useCase: (tin) => async (tx) => {
      await insertCompany(tx, tin).catch(() => null);
      return (await insertCompany(tx, MARKER_TIN)).rowsAffected;
    },
  },
  {
    name: "turns the failure of its first statement into a refusal",
    useCase: (tin) => async (tx) => {
      try {
        return (await insertCompany(tx, tin)).rowsAffected;
      } catch {
        return tx.abort(refuse("duplicate_company", `a company with TIN ${tin} exists`));
      }
    },
  },
  {
    name: "sends nothing",
    useCase: () => (tx) => {
      tx.defer({
        sql: "INSERT INTO companies (id, name, tin, created_at) VALUES (?, 'Co', ?, 0)",
        args: [newId("co"), MARKER_TIN],
      });
      return Promise.resolve("deferred");
    },
  },
];

async function request(
  database: Database,
  key: string,
  tin: string,
  useCase: UseCase<unknown>,
) {
  return await runIdempotently(
    database,
    {
      scope: { companyId: "co_scope", scopeLine: "", key },
      fingerprint: await requestFingerprint("POST", "/companies", JSON.stringify({ tin })),
      now: Date.now(),
      leaseMs: 1500,
      ttlMs: 86_400_000,
      secretBox: testSecretBox,
    },
    useCase,
    (value): Answer => ({
      status: 201,
      contentType: "application/json",
      body: new TextEncoder().encode(JSON.stringify({ value })),
    }),
  );
}

async function companiesWithTin(database: Database, tin: string): Promise<number> {
  const { rows } = await database.readClient.execute({
    sql: "SELECT count(*) AS n FROM companies WHERE tin = ?",
    args: [tin],
  });
  return Number(rows[0].n);
}

const text = (outcome: { answer?: Answer }) => new TextDecoder().decode(outcome.answer!.body);

/** A first request creates; each shape's duplicate (same body, then another) keeps nothing. */
async function checkShapes(database: Database): Promise<void> {
  for (const [i, { name, useCase }] of shapes.entries()) {
    const key = `shape-${i}`;
    const tin = String(100_000_000 + i);
    const first = await request(database, key, tin, (tx) => insertCompany(tx, tin));
    assert.equal(first.decision, "new", name);
    const created = text(first as { answer: Answer });

    const replay = await request(database, key, tin, useCase(tin));
    assert.equal(replay.decision, "replay", `${name}: same body`);
    assert.equal(text(replay as { answer: Answer }), created, `${name}: same body`);

    const otherTin = String(200_000_000 + i);
    const mismatch = await request(database, key, otherTin, useCase(otherTin));
    assert.equal(mismatch.decision, "mismatch", `${name}: another body`);

    assert.deepEqual(
      await Promise.all([tin, otherTin, MARKER_TIN].map((t) => companiesWithTin(database, t))),
      [1, 0, 0],
      `${name}: rows`,
    );
    // The stored answer is still the first's.
    const again = await request(database, key, tin, (tx) => insertCompany(tx, tin));
    assert.equal(text(again as { answer: Answer }), created, `${name}: stored answer`);
  }
}

Deno.test("a duplicate's use case that starts before the lookup keeps nothing (embedded file)", async () => {
  await withTempDir(async (dir) => {
    const database = await openTempDatabase(dir);
    try {
      await checkShapes(database);
    } finally {
      await database.close();
    }
  });
});

Deno.test("a duplicate's use case that starts before the lookup keeps nothing (libSQL server)", async () => {
  const primary = await startPrimary();
  try {
    await migratePrimary(primary);
    const database = await openNodeDatabase(primary, "test");
    try {
      assert.equal(database.shared, true);
      await checkShapes(database);
    } finally {
      await database.close();
    }
  } finally {
    await primary.close();
  }
});
