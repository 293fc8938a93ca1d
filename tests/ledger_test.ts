import assert from "node:assert/strict";
import fc from "fast-check";
import type { Database } from "../db/client.ts";
import { postTransaction, postTransactions, readLineBalances } from "../lib/ledger/store.ts";
import { type LedgerTransactionKind, netChanges } from "../lib/ledger/postings.ts";
import type { LedgerAccountCode, Transfer } from "../lib/ledger/types.ts";
import { openTempDatabase, withTempDir } from "./helpers.ts";

async function withLine(
  fn: (database: Database, line: { companyId: string; lineId: string }) => Promise<void>,
) {
  await withTempDir(async (dir) => {
    const database = await openTempDatabase(dir);
    try {
      await database.writer.write(async (tx) => {
        await tx.execute(
          "INSERT INTO companies (id, name, tin, created_at) VALUES ('co_1', 'Acme', '123456789', 0)",
        );
        await tx.execute(
          "INSERT INTO business_lines (id, company_id, code, created_at) VALUES ('line_1', 'co_1', 'auto', 0)",
        );
      });
      await fn(database, { companyId: "co_1", lineId: "line_1" });
    } finally {
      await database.close();
    }
  });
}

// The kind is a label here: these tests post arbitrary transfers.
const post = (
  database: Database,
  transfers: Transfer[],
  kind: LedgerTransactionKind = "funding.wire_received",
) =>
  database.writer.write((tx) =>
    postTransaction(tx, { companyId: "co_1", lineId: "line_1", kind, transfers, postedAt: 0 })
  );

async function entryCounts(database: Database) {
  const { rows } = await database.readClient.execute(
    "SELECT (SELECT count(*) FROM ledger_transactions) AS t, (SELECT count(*) FROM ledger_entries) AS e",
  );
  return { transactions: Number(rows[0].t), entries: Number(rows[0].e) };
}

Deno.test("netChanges refuses programmer errors before anything is written", () => {
  assert.throws(() => netChanges([]), /at least one transfer/);
  assert.throws(
    () => netChanges([{ from: "bank", to: "available", amountCents: 0 }]),
    /positive whole number/,
  );
  assert.throws(
    () => netChanges([{ from: "bank", to: "available", amountCents: 1.5 }]),
    /positive whole number/,
  );
  assert.throws(
    () => netChanges([{ from: "bank", to: "available", amountCents: -5 }]),
    /positive whole number/,
  );
  assert.throws(
    () => netChanges([{ from: "available", to: "available", amountCents: 5 }]),
    /to itself/,
  );
  assert.deepEqual(
    [...netChanges([{ from: "bank", to: "available", amountCents: 500 }, {
      from: "available",
      to: "reserved",
      amountCents: 200,
    }])],
    [["bank", -500], ["available", 300], ["reserved", 200]],
  );
});

Deno.test("postTransaction writes balanced entries and materialized balances", async () => {
  await withLine(async (database) => {
    const funded = await post(database, [{ from: "bank", to: "available", amountCents: 10_000 }]);
    assert.ok(funded.ok);
    const held = await post(database, [{ from: "available", to: "reserved", amountCents: 2_500 }]);
    assert.ok(held.ok);
    assert.equal(held.value.balances.available, 7_500);
    const balances = await readLineBalances(database.readClient, "line_1");
    assert.deepEqual(balances, {
      available: 7_500,
      pending_funding: 0,
      reserved: 2_500,
      in_transit: 0,
      fees_payor: 0,
      fees_payee: 0,
      fees_service: 0,
      bank: -10_000,
      funding_shortfall: 0,
      unclaimed_remitted: 0,
    });
    assert.deepEqual(await entryCounts(database), { transactions: 2, entries: 4 });
  });
});

Deno.test("an overdraft of available or reserved is refused with no row written and balances unchanged", async () => {
  await withLine(async (database) => {
    assert.ok((await post(database, [{ from: "bank", to: "available", amountCents: 1_000 }])).ok);
    const before = await readLineBalances(database.readClient, "line_1");
    const short = await post(
      database,
      [{ from: "available", to: "reserved", amountCents: 1_001 }],
      "payout.hold",
    );
    assert.deepEqual(short, {
      ok: false,
      code: "insufficient_funds",
      message: "available holds 1000 cents; payout.hold needs 1001",
      details: { account: "available", balance_cents: 1000, needed_cents: 1001 },
    });
    const reservedShort = await post(database, [{
      from: "reserved",
      to: "in_transit",
      amountCents: 1,
    }]);
    assert.ok(!reservedShort.ok && reservedShort.code === "negative_balance");
    assert.deepEqual(await readLineBalances(database.readClient, "line_1"), before);
    assert.deepEqual(await entryCounts(database), { transactions: 1, entries: 2 });
  });
});

const movable = [
  "available",
  "pending_funding",
  "reserved",
  "in_transit",
  "fees_payor",
  "bank",
] as const;

/** One to three transfers between the movable accounts: one transaction. */
const transfersOfOneTransaction = fc.array(
  fc.record({
    from: fc.constantFrom(...movable),
    to: fc.constantFrom(...movable),
    amountCents: fc.integer({ min: 1, max: 50_000 }),
  }).filter((t) => t.from !== t.to),
  { minLength: 1, maxLength: 3 },
);

Deno.test("property: any sequence of transfers keeps every invariant and matches an independent model", async () => {
  await withLine(async (database) => {
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          transfersOfOneTransaction,
          { minLength: 1, maxLength: 30 },
        ),
        async (transactions) => {
          runs++;
          // The model starts from where earlier runs left the line and moves independently.
          const model: Record<LedgerAccountCode, number> = {
            ...(await readLineBalances(database.readClient, "line_1")),
          };
          for (const transfers of transactions) {
            const result = await post(database, transfers);
            const next = { ...model };
            for (const t of transfers) {
              next[t.from] -= t.amountCents;
              next[t.to] += t.amountCents;
            }
            const wouldOverdraw = next.available < 0 || next.reserved < 0;
            assert.equal(
              result.ok,
              !wouldOverdraw,
              "refused exactly when available or reserved would go negative",
            );
            if (result.ok) Object.assign(model, next);
            assert.deepEqual(await readLineBalances(database.readClient, "line_1"), model);
          }
          const { rows } = await database.readClient.execute(`
            SELECT
              (SELECT count(*) FROM (SELECT transaction_id FROM ledger_entries GROUP BY transaction_id HAVING sum(amount_cents) <> 0)) AS unbalanced,
              (SELECT count(*) FROM ledger_accounts a WHERE a.balance_cents <> (SELECT coalesce(sum(e.amount_cents), 0) FROM ledger_entries e WHERE e.account_id = a.id)) AS drifted,
              (SELECT count(*) FROM ledger_accounts WHERE code IN ('available', 'reserved') AND balance_cents < 0) AS negative`);
          assert.deepEqual({ ...rows[0] }, { unbalanced: 0, drifted: 0, negative: 0 });
        },
      ),
      { numRuns: 200 },
    );
    assert.equal(runs, 200);
  });
});

Deno.test("property: postTransactions posts a list of two lines' transactions as posting them one by one would, or refuses it whole with nothing written", async () => {
  await withLine(async (database) => {
    await database.writer.write(async (tx) => {
      await tx.execute(
        "INSERT INTO business_lines (id, company_id, code, created_at) VALUES ('line_2', 'co_1', 'home', 0)",
      );
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            lineId: fc.constantFrom("line_1", "line_2"),
            transfers: transfersOfOneTransaction,
          }),
          { minLength: 1, maxLength: 12 },
        ),
        async (transactions) => {
          const before = {
            line_1: await readLineBalances(database.readClient, "line_1"),
            line_2: await readLineBalances(database.readClient, "line_2"),
          };
          const counted = await entryCounts(database);
          // The model posts them one by one, each refused alone if it would overdraw.
          const model = { line_1: { ...before.line_1 }, line_2: { ...before.line_2 } };
          let refused = false;
          for (const { lineId, transfers } of transactions) {
            const balances = model[lineId as "line_1" | "line_2"];
            for (const t of transfers) {
              balances[t.from] -= t.amountCents;
              balances[t.to] += t.amountCents;
            }
            if (balances.available < 0 || balances.reserved < 0) refused = true;
          }
          const result = await database.writer.write((tx) =>
            postTransactions(
              tx,
              transactions.map(({ lineId, transfers }) => ({
                companyId: "co_1",
                lineId,
                kind: "funding.wire_received",
                transfers,
                postedAt: 0,
              })),
            )
          );
          assert.equal(result.ok, !refused, "refused exactly when one of them would overdraw");
          const after = {
            line_1: await readLineBalances(database.readClient, "line_1"),
            line_2: await readLineBalances(database.readClient, "line_2"),
          };
          assert.deepEqual(after, refused ? before : model);
          const entries = transactions.reduce((sum, t) => sum + 2 * t.transfers.length, 0);
          assert.deepEqual(
            await entryCounts(database),
            refused ? counted : {
              transactions: counted.transactions + transactions.length,
              entries: counted.entries + entries,
            },
          );
          const { rows } = await database.readClient.execute(`
            SELECT
              (SELECT count(*) FROM (SELECT transaction_id FROM ledger_entries GROUP BY transaction_id HAVING sum(amount_cents) <> 0)) AS unbalanced,
              (SELECT count(*) FROM ledger_accounts a WHERE a.balance_cents <> (SELECT coalesce(sum(e.amount_cents), 0) FROM ledger_entries e WHERE e.account_id = a.id)) AS drifted`);
          assert.deepEqual({ ...rows[0] }, { unbalanced: 0, drifted: 0 });
        },
      ),
      { numRuns: 100 },
    );
  });
});

Deno.test("the funding index holds fundings' transactions only, and every read by funding still uses it", async () => {
  await withTempDir(async (dir) => {
    const database = await openTempDatabase(dir);
    try {
      const { rows: [index] } = await database.readClient.execute(
        "SELECT sql FROM sqlite_master WHERE name = 'ledger_transactions_funding'",
      );
      // A payout's hold (every create's) has no funding: it adds no entry to the index.
      assert.match(
        String(index.sql),
        /\(`funding_id`\) WHERE "ledger_transactions"\."funding_id" IS NOT NULL$/,
      );
      // The reads by funding (lib/funding/store.ts, lib/console/file_balances.ts) as they are written.
      for (
        const sql of [
          `SELECT 1 FROM ledger_transactions WHERE funding_id = ? AND kind = 'funding.ach_initiated'
           LIMIT 1`,
          `SELECT coalesce(sum(f.amount_cents), 0) AS cents FROM fundings f
           WHERE f.line_id = ? AND f.payment_method = 'ACH' AND f.status = 'Pending'
             AND NOT EXISTS (SELECT 1 FROM ledger_transactions t
               WHERE t.funding_id = f.id AND t.kind = 'funding.ach_initiated')`,
        ]
      ) {
        const plan = await database.readClient.execute({
          sql: `EXPLAIN QUERY PLAN ${sql}`,
          args: ["x"],
        });
        const details = plan.rows.map((row) => String(row.detail));
        assert.ok(
          details.some((detail) =>
            / USING INDEX ledger_transactions_funding \(funding_id=\?\)/.test(detail)
          ),
          `${sql}\n${details.join("\n")}`,
        );
      }
    } finally {
      await database.close();
    }
  });
});
