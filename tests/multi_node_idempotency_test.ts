/**
 * Idempotency across nodes on one libSQL primary (issue 22): two in-process nodes, each with its
 * own Database handle (writer and memory), on the Hrana contract server. The database decides:
 * the same key sent at once to both creates once; another body is 422 (mismatch); a key whose
 * claim another node holds is 409 until that claim's lease ends, and then runs.
 */
import assert from "node:assert/strict";
import type { Database } from "../db/client.ts";
import { type Answer, runIdempotently } from "../lib/idempotency/service.ts";
import { claimIdempotencyKey, type IdempotencyScope } from "../lib/idempotency/store.ts";
import {
  decideIdempotency,
  requestFingerprint,
  type StoredIdempotency,
} from "../lib/idempotency/rules.ts";
import { newId } from "../lib/platform/keys.ts";
import { testSecretBox } from "./helpers.ts";
import { migratePrimary, openNodeDatabase, type Primary, startPrimary } from "./node_helpers.ts";

const LEASE_MS = 1500;

async function withTwoNodes(
  fn: (a: Database, b: Database, primary: Primary) => Promise<void>,
): Promise<void> {
  const primary = await startPrimary();
  try {
    await migratePrimary(primary);
    const a = await openNodeDatabase(primary, "test");
    const b = await openNodeDatabase(primary, "test");
    try {
      assert.equal(a.shared, true);
      await fn(a, b, primary);
    } finally {
      await a.close();
      await b.close();
    }
  } finally {
    await primary.close();
  }
}

/** A create: a company whose TIN is the request's, answered with its id. */
async function createCompany(
  database: Database,
  key: string,
  body: { tin: string },
  now: number,
  useCase?: () => Promise<unknown>,
) {
  const scope: IdempotencyScope = { companyId: "co_scope", scopeLine: "", key };
  return await runIdempotently(
    database,
    {
      scope,
      fingerprint: await requestFingerprint("POST", "/companies", JSON.stringify(body)),
      now,
      leaseMs: LEASE_MS,
      ttlMs: 86_400_000,
      secretBox: testSecretBox,
    },
    async (tx) => {
      await useCase?.();
      const id = newId("co");
      await tx.execute({
        sql: "INSERT INTO companies (id, name, tin, created_at) VALUES (?, 'Co', ?, ?)",
        args: [id, body.tin, now],
      });
      return id;
    },
    (id): Answer => ({
      status: 201,
      contentType: "application/json",
      body: new TextEncoder().encode(JSON.stringify({ id })),
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

/** Commits a claim on `key` through `node`, as its request does before running; true if taken. */
async function holdClaim(
  node: Database,
  key: string,
  fingerprint: string,
  now: number,
): Promise<boolean> {
  await node.writer.write((tx) => {
    claimIdempotencyKey(tx, { companyId: "co_scope", scopeLine: "", key }, fingerprint, {
      now,
      leaseUntil: now + LEASE_MS,
    });
    return Promise.resolve();
  });
  const { rows } = await node.readClient.execute({
    sql: "SELECT fingerprint, status, lease_until FROM idempotency_records WHERE key = ?",
    args: [key],
  });
  return rows[0]?.status === "in_progress" && rows[0].fingerprint === fingerprint &&
    Number(rows[0].lease_until) === now + LEASE_MS;
}

const text = (answer: Answer) => new TextDecoder().decode(answer.body);

Deno.test("the same key sent at once to two nodes creates once; every other answer is the replay or 409", async () => {
  await withTwoNodes(async (a, b) => {
    const now = Date.now();
    for (let round = 0; round < 8; round++) {
      const tin = String(100_000_000 + round);
      const key = `key-${round}`;
      const outcomes = await Promise.all(
        [a, b, a, b].map((node) => createCompany(node, key, { tin }, now)),
      );
      assert.equal(await companiesWithTin(a, tin), 1, `round ${round}: created once`);
      const created = outcomes.filter((o) => o.decision === "new");
      assert.equal(created.length, 1, JSON.stringify(outcomes.map((o) => o.decision)));
      const body = text((created[0] as { answer: Answer }).answer);
      for (const outcome of outcomes) {
        assert.ok(["new", "replay", "in_progress"].includes(outcome.decision));
        if (outcome.decision === "replay") assert.equal(text(outcome.answer), body);
      }
      // Afterwards every node replays the same bytes.
      for (const node of [a, b]) {
        const again = await createCompany(node, key, { tin }, now + 10);
        assert.equal(again.decision, "replay");
        assert.equal(text((again as { answer: Answer }).answer), body);
      }
    }
  });
});

Deno.test("another body under a key used on another node is 422, whether its request is done or still running", async () => {
  await withTwoNodes(async (a, b) => {
    const now = Date.now();
    assert.equal((await createCompany(a, "done", { tin: "200000001" }, now)).decision, "new");
    assert.equal(
      (await createCompany(b, "done", { tin: "200000002" }, now + 1)).decision,
      "mismatch",
    );

    // Node A holds a claim on "running" (its answer not yet committed).
    const fingerprint = await requestFingerprint(
      "POST",
      "/companies",
      JSON.stringify({ tin: "200000003" }),
    );
    assert.equal(await holdClaim(a, "running", fingerprint, now), true);
    assert.equal(
      (await createCompany(b, "running", { tin: "200000004" }, now + 1)).decision,
      "mismatch",
    );
    assert.equal(await companiesWithTin(b, "200000002"), 0);
    assert.equal(await companiesWithTin(b, "200000004"), 0);
  });
});

Deno.test("a key claimed on a node that died is 409 on the other until the claim's lease ends, then it runs once", async () => {
  await withTwoNodes(async (a, b) => {
    const now = Date.now();
    const body = { tin: "300000001" };
    const fingerprint = await requestFingerprint("POST", "/companies", JSON.stringify(body));
    // Node A committed its claim and died before its answer committed.
    assert.equal(await holdClaim(a, "orphan", fingerprint, now), true);
    assert.equal(await holdClaim(b, "orphan", fingerprint, now + 10), false, "held by A");
    assert.equal((await createCompany(b, "orphan", body, now + 10)).decision, "in_progress");
    assert.equal(
      (await createCompany(b, "orphan", body, now + LEASE_MS - 1)).decision,
      "in_progress",
    );
    assert.equal(await companiesWithTin(b, body.tin), 0);

    const retried = await createCompany(b, "orphan", body, now + LEASE_MS);
    assert.equal(retried.decision, "new");
    assert.equal(await companiesWithTin(b, body.tin), 1);
    assert.equal((await createCompany(a, "orphan", body, now + LEASE_MS + 1)).decision, "replay");
  });
});

Deno.test("a use case that fails gives its claim up at once: the other node may run the key", async () => {
  await withTwoNodes(async (a, b) => {
    const now = Date.now();
    const body = { tin: "400000001" };
    await assert.rejects(
      createCompany(a, "fails", body, now, () => Promise.reject(new Error("rail down"))),
      /rail down/,
    );
    const { rows } = await a.readClient.execute(
      "SELECT count(*) AS n FROM idempotency_records WHERE key = 'fails'",
    );
    assert.equal(Number(rows[0].n), 0, "no claim left behind");
    assert.equal((await createCompany(b, "fails", body, now + 1)).decision, "new");
    assert.equal(await companiesWithTin(b, body.tin), 1);
  });
});

Deno.test("the claim's SQL condition takes a key exactly when decideIdempotency says new", async () => {
  await withTwoNodes(async (a) => {
    const now = 1_000_000;
    const cases: { name: string; record: StoredIdempotency | null; fingerprint: string }[] = [
      { name: "none", record: null, fingerprint: "f" },
      {
        name: "expired, other body",
        record: { fingerprint: "g", status: "complete", leaseUntil: null, expiresAt: now },
        fingerprint: "f",
      },
      {
        name: "complete",
        record: { fingerprint: "f", status: "complete", leaseUntil: null, expiresAt: now + 1 },
        fingerprint: "f",
      },
      {
        name: "running, same body",
        record: {
          fingerprint: "f",
          status: "in_progress",
          leaseUntil: now + 1,
          expiresAt: now + 1,
        },
        fingerprint: "f",
      },
      {
        name: "lease over, same body",
        record: { fingerprint: "f", status: "in_progress", leaseUntil: now, expiresAt: now + 9 },
        fingerprint: "f",
      },
      {
        name: "lease over, other body",
        record: { fingerprint: "g", status: "in_progress", leaseUntil: now, expiresAt: now + 9 },
        fingerprint: "f",
      },
      {
        name: "no lease (an earlier version's), same body",
        record: { fingerprint: "f", status: "in_progress", leaseUntil: null, expiresAt: now + 9 },
        fingerprint: "f",
      },
    ];
    for (const [i, { name, record, fingerprint }] of cases.entries()) {
      const key = `rule-${i}`;
      if (record) {
        await a.writer.write((tx) =>
          tx.execute({
            sql: `INSERT INTO idempotency_records
                    (company_id, scope_line, key, fingerprint, status, lease_until, created_at, expires_at)
                  VALUES ('co_scope', '', ?, ?, ?, ?, 0, ?)`,
            args: [key, record.fingerprint, record.status, record.leaseUntil, record.expiresAt],
          })
        );
      }
      assert.equal(
        await holdClaim(a, key, fingerprint, now),
        decideIdempotency(record, fingerprint, now) === "new",
        name,
      );
    }
  });
});
