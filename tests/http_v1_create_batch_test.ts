/**
 * /v1 creates that arrive together are written together: the creates of one line queued at the
 * same moment run in one write unit, set-based, each still decided, refused and answered on its
 * own, as it is alone.
 */
import assert from "node:assert/strict";
import { JOBS_PER_BATCH_MAX, runDueJobs } from "../db/scheduler.ts";
import { verifyLedger } from "../lib/ledger/reports.ts";
import { readLineBalances } from "../lib/ledger/store.ts";
import { fundAcmeAuto, type HttpFixture, withHttpFixture } from "./http_fixture.ts";
import { statementTexts } from "./helpers.ts";

function create(f: HttpFixture, key: string, amount = 10, claimId = `CLM-${key}`) {
  return f.app.request("/v1/disbursements", {
    method: "POST",
    headers: {
      Authorization: `Bearer ${f.cast.acmeAutoKeyTest}`,
      "Content-Type": "application/json",
      "Idempotency-Key": key,
    },
    body: JSON.stringify({
      amount,
      claim_id: claimId,
      payee: { id: "noaction" },
      modalities: ["ach"],
    }),
  });
}

/** The line funded, its payee made, and one create answered alone (the app's first loads). */
async function prepare(f: HttpFixture, cents: number): Promise<{ holdCents: number }> {
  await fundAcmeAuto(f, cents);
  const payee = await f.app.request("/v1/payees", {
    method: "POST",
    headers: {
      Authorization: `Bearer ${f.cast.acmeAutoKeyTest}`,
      "Content-Type": "application/json",
    },
    body: JSON.stringify({ id: "noaction", email: "n@example.test" }),
  });
  assert.equal(payee.status, 201);
  const first = await create(f, "first");
  assert.equal(first.status, 201, await first.text());
  return { holdCents: (await balances(f)).reserved };
}

const balances = (f: HttpFixture) =>
  readLineBalances(f.deps.databases.test.readClient, f.cast.acme.autoLineId);

async function count(f: HttpFixture, sql: string): Promise<number> {
  return Number((await f.deps.databases.test.readClient.execute(sql)).rows[0].n);
}

/** How many statements SQLite ran (the driver's prepared statements) while `run` ran. */
async function statementsRun<T>(run: () => Promise<T>): Promise<{ value: T; statements: number }> {
  const { value, texts } = await statementTexts(run);
  return { value, statements: texts.length };
}

Deno.test("8 creates sent together: one group, about as many statements as one create, each its own row, hold, event and offer", async () => {
  await withHttpFixture(async (f) => {
    const { holdCents } = await prepare(f, 1_000_000);
    const writer = f.deps.databases.test.writer;
    const groupsBefore = writer.stats.groups;
    const { value: answers, statements } = await statementsRun(() =>
      Promise.all(Array.from({ length: 8 }, (_, i) => create(f, `k${i}`, 10 + i)))
    );
    assert.deepEqual(answers.map((r) => r.status), Array(8).fill(201));
    const bodies = await Promise.all(answers.map((r) => r.json()));
    assert.equal(writer.stats.groups - groupsBefore, 1, "one group commit for the 8");
    // One create alone runs 26 statements (the key's lookup, its reads, 11 rows, the checks).
    assert.ok(statements < 40, `8 creates together ran ${statements} statements`);
    assert.equal(new Set(bodies.map((b) => b.id)).size, 8);
    bodies.forEach((body, i) => {
      assert.equal(body.status, "created");
      assert.equal(body.amount, 10 + i);
      assert.equal(body.claim_id, `CLM-k${i}`);
    });
    const amounts = bodies.reduce((sum, b) => sum + Math.round(b.amount * 100), 0);
    const extraHold = holdCents - 1000; // the fee part of a hold, the same for each create
    assert.deepEqual(await balances(f), {
      ...(await balances(f)),
      available: 1_000_000 - holdCents - amounts - 8 * extraHold,
      reserved: holdCents + amounts + 8 * extraHold,
    });
    for (
      const [table, n] of [
        ["disbursements", 9],
        ["payouts", 9],
        ["ledger_transactions WHERE kind = 'payout.hold'", 9],
        ["payout_transitions", 9],
        ["events WHERE type = 'disbursement.created'", 9],
        ["scheduled_jobs WHERE kind = 'payout.offer'", 9],
        ["idempotency_records", 9],
      ] as const
    ) {
      assert.equal(await count(f, `SELECT count(*) AS n FROM ${table}`), n, table);
    }
    assert.equal(
      await count(
        f,
        `SELECT count(*) AS n FROM ledger_entries e JOIN ledger_transactions t
           ON t.id = e.transaction_id WHERE t.kind = 'payout.hold'`,
      ),
      18,
    );
    assert.deepEqual(await verifyLedger(f.deps.databases.test.readClient), []);
    // Each is answered again byte for byte, and read back as it was answered.
    for (const [i, body] of bodies.entries()) {
      const again = await create(f, `k${i}`, 10 + i);
      assert.equal(again.headers.get("idempotent-replayed"), "true");
      assert.deepEqual(await again.json(), body);
      const read = await f.app.request(`/v1/disbursements/${body.id}`, {
        headers: { Authorization: `Bearer ${f.cast.acmeAutoKeyTest}` },
      });
      assert.deepEqual(await read.json(), body);
    }
  }, { RATE_LIMIT_RPS: "0" });
});

Deno.test("creates written together: each created event carries its payout's and disbursement's rowids and the documents shown, and no payout is read back", async () => {
  await withHttpFixture(async (f) => {
    await prepare(f, 1_000_000);
    const database = f.deps.databases.test;
    await database.writer.write(async (tx) => {
      // Shown to a new payout: the two of type 1. Not yet: the ACH authorization, a custom one.
      for (const [id, type, oneTime] of [["d1", 1, 0], ["d2", 1, 1], ["d3", 2, 0], ["d4", 4, 1]]) {
        await tx.execute({
          sql: `INSERT INTO documents (id, company_id, name, doc_type_id, one_time_use, sha256,
                  size_bytes, content, created_at) VALUES (?, ?, ?, ?, ?, 'x', 1, x'00', ?)`,
          args: [id, f.cast.acme.id, id, type, oneTime, f.clock.now()],
        });
      }
    });
    const { value: answers, texts } = await statementTexts(() =>
      Promise.all(["n0", "n1", "n2", "n3"].map((key) => create(f, key)))
    );
    assert.deepEqual(answers.map((r) => r.status), [201, 201, 201, 201]);
    assert.deepEqual(
      texts.filter((sql) => /FROM payouts p JOIN disbursements d/.test(sql)),
      [],
      "the numbers come back with the inserts",
    );
    const { rows } = await database.readClient.execute(
      `SELECT e.data, p.rowid AS payout_number, d.rowid AS disbursement_number
         FROM events e JOIN payouts p ON p.id = e.payout_id
         JOIN disbursements d ON d.id = p.disbursement_id
        WHERE e.type = 'disbursement.created' AND d.claim_id LIKE 'CLM-n%' ORDER BY p.rowid`,
    );
    assert.equal(rows.length, 4);
    for (const row of rows) {
      const data = JSON.parse(String(row.data));
      assert.equal(data.payee.payout_number, Number(row.payout_number));
      assert.equal(data.payee.disbursement_number, Number(row.disbursement_number));
      assert.equal(data.documents_shown, 2);
    }
  }, { RATE_LIMIT_RPS: "0" });
});

Deno.test("creates replayed together (every key answered before): one lookup answers them all, none runs alone", async () => {
  await withHttpFixture(async (f) => {
    await prepare(f, 1_000_000);
    const keys = Array.from({ length: 8 }, (_, i) => `r${i}`);
    const first = await Promise.all(keys.map((key) => create(f, key)));
    const bodies = await Promise.all(first.map((r) => r.text()));
    assert.deepEqual(first.map((r) => r.status), Array(8).fill(201));
    const writer = f.deps.databases.test.writer;
    const groupsBefore = writer.stats.groups;
    const { value: again, statements } = await statementsRun(() =>
      Promise.all(keys.map((key) => create(f, key)))
    );
    assert.equal(writer.stats.groups - groupsBefore, 1);
    assert.deepEqual(again.map((r) => r.headers.get("idempotent-replayed")), Array(8).fill("true"));
    assert.deepEqual(await Promise.all(again.map((r) => r.text())), bodies);
    // BEGIN, the unit's savepoint, the keys' lookup, its release and the COMMIT: before, the
    // batch ran with no create to make, failed, and each replay ran alone (about 50 statements).
    assert.ok(statements <= 6, `8 replays together ran ${statements} statements`);
    assert.equal(await count(f, "SELECT count(*) AS n FROM disbursements"), 9);
  }, { RATE_LIMIT_RPS: "0" });
});

Deno.test("a create of a batch that available cannot cover is refused 409 alone, as it would be alone; the others are created", async () => {
  await withHttpFixture(async (f) => {
    const { holdCents } = await prepare(f, 100_000);
    const feeCents = holdCents - 1000; // what a hold takes beyond the amount
    const available = (await balances(f)).available;
    // Two of these fit in available, not three.
    const cents = Math.floor(available * 0.4) - feeCents;
    const answers = await Promise.all(["a", "b", "c"].map((key) => create(f, key, cents / 100)));
    assert.deepEqual(answers.map((r) => r.status), [201, 201, 409]);
    const refused = await answers[2].text();
    const left = available - 2 * (cents + feeCents);
    assert.deepEqual(JSON.parse(refused), {
      type: "/docs/errors#insufficient_funds",
      title: "Conflict",
      status: 409,
      detail: `available is ${dollars(left)}; this disbursement needs ${
        dollars(cents + feeCents)
      } (short by ${dollars(cents + feeCents - left)})`,
      code: "insufficient_funds",
    });
    const after = await balances(f);
    assert.deepEqual(
      { available: after.available, reserved: after.reserved },
      { available: left, reserved: holdCents + 2 * (cents + feeCents) },
    );
    assert.equal(await count(f, "SELECT count(*) AS n FROM disbursements"), 3);
    assert.deepEqual(await verifyLedger(f.deps.databases.test.readClient), []);
    // The same request alone now is refused with the same words.
    const alone = await create(f, "d", cents / 100);
    assert.equal(alone.status, 409);
    assert.equal(await alone.text(), refused);
    // The refusal was kept for its key: it is answered again, not tried again.
    const again = await create(f, "c", cents / 100);
    assert.equal(again.headers.get("idempotent-replayed"), "true");
    assert.equal(await again.text(), refused);
  }, { RATE_LIMIT_RPS: "0" });
});

const dollars = (cents: number) =>
  `$${Math.floor(cents / 100).toLocaleString("en-US")}.${String(cents % 100).padStart(2, "0")}`;

Deno.test("the same key twice among creates sent together: one create, the duplicate told 409 in progress, then replayed", async () => {
  await withHttpFixture(async (f) => {
    const { holdCents } = await prepare(f, 1_000_000);
    const answers = await Promise.all([create(f, "twice"), create(f, "other"), create(f, "twice")]);
    assert.deepEqual(answers.map((r) => r.status), [201, 201, 409]);
    assert.equal((await answers[2].json()).code, "idempotency_request_in_progress");
    const first = await answers[0].text();
    assert.equal(await count(f, "SELECT count(*) AS n FROM disbursements"), 3);
    assert.equal((await balances(f)).reserved, holdCents * 3);
    const replay = await create(f, "twice");
    assert.equal(replay.status, 201);
    assert.equal(replay.headers.get("idempotent-replayed"), "true");
    assert.equal(await replay.text(), first);
  }, { RATE_LIMIT_RPS: "0" });
});

Deno.test("a statement of a batch that fails: the batch is undone, each create runs alone, the failing one fails alone and its neighbours are created", async () => {
  await withHttpFixture(async (f) => {
    const { holdCents } = await prepare(f, 1_000_000);
    // A payout row the database refuses: its create's statement fails, in the batch and alone.
    await f.deps.databases.test.writer.write((tx) =>
      tx.execute(`CREATE TRIGGER refuse_1313 BEFORE INSERT ON payouts
                  WHEN NEW.amount_cents = 1313 BEGIN SELECT RAISE(ABORT, 'refused row'); END`)
    );
    const answers = await Promise.all([
      create(f, "a"),
      create(f, "bad", 13.13),
      create(f, "c"),
    ]);
    assert.deepEqual(answers.map((r) => r.status), [201, 500, 201]);
    assert.equal(await count(f, "SELECT count(*) AS n FROM disbursements"), 3);
    assert.equal((await balances(f)).reserved, holdCents * 3);
    assert.equal(await count(f, "SELECT count(*) AS n FROM idempotency_records"), 3);
    assert.deepEqual(await verifyLedger(f.deps.databases.test.readClient), []);
    // Nothing was kept for the failed key: once the row is accepted, the same request creates.
    await f.deps.databases.test.writer.write((tx) => tx.execute("DROP TRIGGER refuse_1313"));
    const retried = await create(f, "bad", 13.13);
    assert.equal(retried.status, 201);
    assert.equal(retried.headers.get("idempotent-replayed"), null);
  }, { RATE_LIMIT_RPS: "0" });
});

Deno.test("a batch whose group cannot commit leaves none of its creates, and each may be sent again", async () => {
  await withHttpFixture(async (f) => {
    const { holdCents } = await prepare(f, 1_000_000);
    const database = f.deps.databases.test;
    await database.writer.write((tx) =>
      tx.execute(
        "CREATE TABLE commit_probe(parent TEXT REFERENCES payouts(id) DEFERRABLE INITIALLY DEFERRED)",
      )
    );
    const groupsBefore = database.writer.stats.groups;
    // A unit of the same group whose deferred foreign key fails only at COMMIT, after the batch.
    const [breaking, ...answers] = await Promise.allSettled([
      database.writer.write((tx) => tx.execute("INSERT INTO commit_probe VALUES ('missing')")),
      ...["a", "b", "c"].map((key) => create(f, key)),
    ]);
    assert.equal(breaking.status, "rejected");
    assert.deepEqual(
      answers.map((r) => r.status === "fulfilled" ? r.value.status : r.status),
      [500, 500, 500],
    );
    assert.equal(database.writer.stats.groups, groupsBefore, "no group was committed");
    assert.equal(await count(f, "SELECT count(*) AS n FROM disbursements"), 1);
    assert.equal(await count(f, "SELECT count(*) AS n FROM idempotency_records"), 1);
    assert.equal((await balances(f)).reserved, holdCents);
    const again = await Promise.all(["a", "b", "c"].map((key) => create(f, key)));
    assert.deepEqual(again.map((r) => r.status), [201, 201, 201]);
    assert.ok(again.every((r) => r.headers.get("idempotent-replayed") === null));
    assert.equal(await count(f, "SELECT count(*) AS n FROM disbursements"), 4);
  }, { RATE_LIMIT_RPS: "0" });
});

Deno.test("the offers of creates written together are made together: each payout offered once, with its transition, event, notice and next step", async () => {
  await withHttpFixture(async (f) => {
    await prepare(f, 1_000_000);
    const database = f.deps.databases.test;
    const runOffers = () =>
      runDueJobs(database, f.cast.acme.id, f.clock.now(), f.deps.jobHandlers.test, {
        perBatch: JOBS_PER_BATCH_MAX,
      });
    assert.equal(await runOffers(), 1); // the first create's, alone
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => create(f, `k${i}`)));
    assert.deepEqual(answers.map((r) => r.status), Array(8).fill(201));
    const { value: offered, statements } = await statementsRun(runOffers);
    assert.equal(offered, 8);
    // One offer alone runs 19 statements with its job's read and its group's.
    assert.ok(statements < 60, `8 offers together ran ${statements} statements`);
    for (
      const [table, n] of [
        ["payouts WHERE status = 'modality_offered'", 9],
        ["payout_transitions WHERE to_status = 'modality_offered'", 9],
        ["events WHERE type = 'disbursement.modality_offered'", 9],
        ["notifications", 9],
        ["scheduled_jobs WHERE kind = 'payout.offer' AND done_at IS NOT NULL AND error IS NULL", 9],
        ["scheduled_jobs WHERE kind IN ('payout.remind_offer', 'payout.expire_offer')", 9],
      ] as const
    ) {
      assert.equal(await count(f, `SELECT count(*) AS n FROM ${table}`), n, table);
    }
    assert.equal(await runOffers(), 0, "nothing runs twice");
  }, { RATE_LIMIT_RPS: "0" });
});
