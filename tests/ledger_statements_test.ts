/**
 * The ledger's signed daily statements: each closed bank day of a line is stated once (opening,
 * movements by kind, closing of every account), chained by hash and signed; verification
 * re-derives every day from the entries and names the day of a rewritten entry, a broken chain,
 * an altered text or a wrong key. The commands print them, verify them and print the public key.
 */
import assert from "node:assert/strict";
import { ed25519KeysFrom, publicKeyText } from "../lib/audit/anchor.ts";
import { postTransaction } from "../lib/ledger/store.ts";
import {
  closeLedgerDays,
  LEDGER_MOVEMENTS_PAGE_TRANSACTIONS,
  ledgerDayClosing,
  verifyLedgerStatements,
  writeLedgerStatementFiles,
} from "../lib/ledger/statements.ts";
import {
  LEDGER_STATEMENT_GENESIS,
  statementHash,
  statementSigned,
} from "../lib/ledger/trial_balance.ts";
import { JOBS_YIELD_TURNS, Scheduler } from "../db/scheduler.ts";
import { createApp } from "../routes/app.ts";
import { openTempDatabase, testAuditKeys, testSecretBox, withTempDir } from "./helpers.ts";
import { fundAcmeAuto, type HttpFixture, withHttpFixture } from "./http_fixture.ts";
import { ADMIN_TOKEN, adminCall, makeOperator } from "./operator_helpers.ts";

/** Noon in New York on 2026-11-23, 24 and 25 (a line's days are its company's bank days). */
const DAY1 = Date.UTC(2026, 10, 23, 17);
const DAY2 = DAY1 + 86_400_000;
const DAY3 = DAY2 + 86_400_000;
const keys = testAuditKeys.ledgerStatements;

async function withLine(
  fn: (f: {
    database: Awaited<ReturnType<typeof openTempDatabase>>;
    deps: Parameters<typeof closeLedgerDays>[0];
  }) => Promise<void>,
) {
  await withTempDir(async (dir) => {
    const database = await openTempDatabase(dir, "live");
    try {
      await database.writer.write(async (tx) => {
        await tx.execute({
          sql:
            "INSERT INTO companies (id, name, tin, created_at) VALUES ('co_1', 'Acme', '123456789', ?)",
          args: [DAY1],
        });
        await tx.execute({
          sql:
            "INSERT INTO business_lines (id, company_id, code, created_at) VALUES ('line_1', 'co_1', 'auto', ?)",
          args: [DAY1],
        });
      });
      const post = (at: number, kind: "funding.wire_received" | "payout.hold", cents: number) =>
        database.writer.write(async (tx) => {
          const posted = await postTransaction(tx, {
            companyId: "co_1",
            lineId: "line_1",
            kind,
            transfers: [
              kind === "funding.wire_received"
                ? { from: "bank", to: "available", amountCents: cents }
                : { from: "available", to: "reserved", amountCents: cents },
            ],
            postedAt: at,
          });
          assert.ok(posted.ok);
        });
      await post(DAY1, "funding.wire_received", 100_000);
      await post(DAY1 + 60_000, "payout.hold", 2_500);
      await post(DAY3, "payout.hold", 1_000);
      await fn({
        database,
        deps: { database, environment: "live", secretBox: testSecretBox, keys },
      });
    } finally {
      await database.close();
    }
  });
}

/** Acme's sandbox clock moves a day on: in test, its days close on it. */
async function advanceAcmeDay(f: HttpFixture) {
  const advanced = await f.app.request("/v1/sandbox/clock/advance", {
    method: "POST",
    headers: {
      Authorization: `Bearer ${f.cast.acmeAutoKeyTest}`,
      "Content-Type": "application/json",
    },
    body: JSON.stringify({ seconds: 86_400 }),
  });
  assert.equal(advanced.status, 200);
}

Deno.test("each closed day is stated once, chained and signed; the open day waits", async () => {
  await withLine(async ({ database, deps }) => {
    const closed = await closeLedgerDays(deps, DAY3 + 60_000);
    assert.deepEqual(closed.map((s) => [s.date, s.seq]), [["2026-11-23", 1], ["2026-11-24", 2]]);
    const [first, second] = closed;
    assert.equal(first.prevHash, LEDGER_STATEMENT_GENESIS);
    assert.equal(second.prevHash, first.hash);
    assert.equal(statementHash(first.body), first.hash);
    assert.ok(statementSigned(keys.publicKey, first.hash, first.signature));
    const body = JSON.parse(first.body);
    assert.deepEqual(
      body.accounts.filter((a: { opening_cents: number; closing_cents: number }) =>
        a.opening_cents !== 0 || a.closing_cents !== 0
      ),
      [
        {
          code: "available",
          opening_cents: 0,
          movements: { "funding.wire_received": 100_000, "payout.hold": -2_500 },
          closing_cents: 97_500,
        },
        {
          code: "reserved",
          opening_cents: 0,
          movements: { "payout.hold": 2_500 },
          closing_cents: 2_500,
        },
        {
          code: "bank",
          opening_cents: 0,
          movements: { "funding.wire_received": -100_000 },
          closing_cents: -100_000,
        },
      ],
    );
    assert.deepEqual(
      [body.format, body.line, body.date, body.time_zone, body.seq],
      ["ledger-statement/1", "auto", "2026-11-23", "America/New_York", 1],
    );
    // A day with no movement is stated too: the chain has no gap.
    assert.deepEqual(
      JSON.parse(second.body).accounts.find((a: { code: string }) => a.code === "available"),
      {
        code: "available",
        opening_cents: 97_500,
        movements: {},
        closing_cents: 97_500,
      },
    );
    assert.deepEqual(await closeLedgerDays(deps, DAY3 + 60_000), [], "each day once");
    assert.deepEqual(await verifyLedgerStatements(database, keys.publicKey), {
      checked: 2,
      problems: [],
    });
  });
});

Deno.test("verification names the day of a rewritten entry, a broken chain, an altered text and a wrong key", async () => {
  await withLine(async ({ database, deps }) => {
    await closeLedgerDays(deps, DAY3 + 86_400_000);
    const verify = () => verifyLedgerStatements(database, keys.publicKey);
    assert.equal((await verify()).problems.length, 0);
    const exec = (sql: string) => database.writer.write((tx) => tx.execute(sql));

    // A past entry rewritten (both of its sides, so the ledger still balances).
    await exec(`UPDATE ledger_entries SET amount_cents = amount_cents * 2 WHERE transaction_id =
      (SELECT id FROM ledger_transactions WHERE kind = 'payout.hold' ORDER BY posted_at LIMIT 1)`);
    assert.deepEqual((await verify()).problems, [{
      lineId: "line_1",
      line: "auto",
      date: "2026-11-23",
      seq: 1,
      reason:
        "the ledger entries of 2026-11-23 were rewritten: available moved -2500 cents by payout.hold, the entries give -5000",
    }]);
    await exec(`UPDATE ledger_entries SET amount_cents = amount_cents / 2 WHERE transaction_id =
      (SELECT id FROM ledger_transactions WHERE kind = 'payout.hold' ORDER BY posted_at LIMIT 1)`);

    // A statement's text altered: its hash no longer matches.
    await exec(
      "UPDATE ledger_statements SET body = replace(body, '97500', '97600') WHERE seq = 2",
    );
    assert.deepEqual((await verify()).problems.map((p) => [p.date, p.reason]), [
      ["2026-11-24", "its text does not hash to its hash"],
    ]);
    const restored = await closeLedgerDays(deps, 0);
    assert.deepEqual(restored, []);

    // Another key cannot vouch for them.
    const other = ed25519KeysFrom(btoa("o".repeat(32)), "another installation");
    const byOther = await verifyLedgerStatements(database, other.publicKey);
    assert.deepEqual(byOther.problems.map((p) => [p.date, p.reason]), [
      ["2026-11-23", "its signature does not verify with the public key"],
    ]);

    // A day taken out of the chain.
    await exec("DELETE FROM ledger_statements WHERE seq = 2");
    assert.deepEqual((await verify()).problems.map((p) => [p.date, p.reason]), [
      ["2026-11-25", "the chain goes from 1 to 3"],
    ]);
  });
});

Deno.test("a day opens at the last statement's closings: an entry of a closed day rewritten afterwards moves no later day's openings, and verification names its day", async () => {
  await withLine(async ({ database, deps }) => {
    assert.deepEqual((await closeLedgerDays(deps, DAY2)).map((s) => s.date), ["2026-11-23"]);
    await database.writer.write((tx) =>
      tx.execute(`UPDATE ledger_entries SET amount_cents = amount_cents * 2 WHERE transaction_id =
        (SELECT id FROM ledger_transactions WHERE kind = 'payout.hold' ORDER BY posted_at LIMIT 1)`)
    );
    const [next] = await closeLedgerDays(deps, DAY3);
    assert.equal(next.date, "2026-11-24");
    const openings = JSON.parse(next.body).accounts
      .filter((a: { opening_cents: number }) => a.opening_cents !== 0)
      .map((a: { code: string; opening_cents: number }) => [a.code, a.opening_cents]);
    assert.deepEqual(openings, [["available", 97_500], ["reserved", 2_500], ["bank", -100_000]]);
    assert.deepEqual(
      (await verifyLedgerStatements(database, keys.publicKey)).problems.map((p) => p.date),
      ["2026-11-23"],
    );
  });
});

Deno.test("a day of more than a page of transactions is summed a page at a time, with the event loop's turns between pages, into the same statement", async () => {
  await withLine(async ({ database, deps }) => {
    const count = 2 * LEDGER_MOVEMENTS_PAGE_TRANSACTIONS + 10;
    await database.writer.write(async (tx) => {
      for (let i = 0; i < count; i++) {
        const posted = await postTransaction(tx, {
          companyId: "co_1",
          lineId: "line_1",
          kind: "payout.hold",
          transfers: [{ from: "available", to: "reserved", amountCents: 1 }],
          postedAt: DAY2 + (i % 7),
        });
        assert.ok(posted.ok);
      }
    });
    let turns = 0;
    let counting = true;
    const turn = () => {
      turns += 1;
      if (counting) setTimeout(turn, 0);
    };
    setTimeout(turn, 0);
    const closed = await closeLedgerDays(deps, DAY3);
    counting = false;
    assert.deepEqual(closed.map((s) => s.date), ["2026-11-23", "2026-11-24"]);
    const available = JSON.parse(closed[1].body).accounts
      .find((a: { code: string }) => a.code === "available");
    assert.deepEqual(available, {
      code: "available",
      opening_cents: 97_500,
      movements: { "payout.hold": -count },
      closing_cents: 97_500 - count,
    });
    assert.ok(turns >= 2 * JOBS_YIELD_TURNS, `${turns} turns of the event loop`);
    assert.deepEqual(await verifyLedgerStatements(database, keys.publicKey), {
      checked: 2,
      problems: [],
    });
  });
});

Deno.test("statements are written as files: the signed text, its hash and signature", async () => {
  await withLine(async ({ deps }) => {
    const closed = await closeLedgerDays(deps, DAY2 + 86_400_000);
    await withTempDir(async (dir) => {
      const paths = await writeLedgerStatementFiles(dir, "live", closed);
      assert.deepEqual(paths, [
        `${dir}/live/line_1-2026-11-23.json`,
        `${dir}/live/line_1-2026-11-24.json`,
      ]);
      const file = JSON.parse(await Deno.readTextFile(paths[0]));
      assert.equal(file.hash, closed[0].hash);
      assert.equal(file.statement.date, "2026-11-23");
      assert.equal((await Deno.stat(paths[0])).mode! & 0o777, 0o600);
    });
  });
});

Deno.test("ledger:statements closes and lists, --verify checks, ledger:public-key prints the key", async () => {
  await withHttpFixture(async (f) => {
    const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
    const now = f.clock.now();
    const ana = await makeOperator(f.deps, { email: "ana@ops.test", role: "admin" }, now);
    const call = adminCall(app, ana.token);
    const key = await call("ledger:public-key", {});
    assert.deepEqual(key.body.result, { public_key: publicKeyText(keys.publicKey) });
    assert.notEqual(key.body.result.public_key, publicKeyText(testAuditKeys.publicKey));
    await fundAcmeAuto(f, 5_000);
    const open = await call("ledger:statements", { environment: "test" });
    assert.equal(open.status, 200, JSON.stringify(open.body));
    assert.deepEqual(open.body.result, { test: { closed: [], statements: 0 } }, "the day is open");
    await advanceAcmeDay(f);
    const closed = await call("ledger:statements", { environment: "test" });
    assert.equal(closed.status, 200, JSON.stringify(closed.body));
    const [day] = closed.body.result.test.closed;
    assert.deepEqual(closed.body.result, {
      test: {
        closed: [{
          line: "auto",
          line_id: f.cast.acme.autoLineId,
          date: "2026-01-05",
          seq: 1,
          hash: day.hash,
        }],
        statements: 1,
      },
    });
    const verified = await call("ledger:statements", { environment: "test", verify: "true" });
    assert.deepEqual(verified.body.result, {
      test: "1 statements, chain and signatures intact, every day re-derived",
    });
    await f.deps.databases.test.writer.write((tx) =>
      tx.execute("UPDATE ledger_entries SET amount_cents = amount_cents * 3")
    );
    const broken = await call("ledger:statements", { environment: "test", verify: "true" });
    assert.deepEqual([broken.status, broken.body.error.code], [409, "ledger_statements_broken"]);
    assert.equal(
      broken.body.error.message,
      "test line auto on 2026-01-05: the ledger entries of 2026-01-05 were rewritten: available moved 5000 cents by funding.wire_received, the entries give 15000",
    );
  });
});

Deno.test("the scheduler closes a line's day shortly after its midnight, once, with no backup and no command", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 5_000);
    const scheduler = new Scheduler(
      f.deps.databases,
      f.deps.jobHandlers,
      f.clock,
      { upkeep: [ledgerDayClosing({ secretBox: f.deps.secretBox, keys }, f.clock)] },
    );
    const statements = async () =>
      (await f.deps.databases.test.readClient.execute(
        "SELECT line_id, statement_date, seq FROM ledger_statements ORDER BY seq",
      )).rows.map((r) => [r.line_id, r.statement_date, r.seq]);
    await scheduler.sweep();
    assert.deepEqual(await statements(), [], "the day is open");
    await advanceAcmeDay(f);
    await scheduler.sweep();
    await scheduler.sweep();
    assert.deepEqual(await statements(), [[f.cast.acme.autoLineId, "2026-01-05", 1]]);
    assert.deepEqual(await verifyLedgerStatements(f.deps.databases.test, keys.publicKey), {
      checked: 1,
      problems: [],
    });
  });
});
