/**
 * A catastrophe day's file is sent in bounded units, and requests are answered between them: the
 * embedded database holds the service's thread for each unit, and the writer starts each group
 * with setImmediate, which Deno runs before it polls for I/O.
 */
import assert from "node:assert/strict";
import { JOBS_YIELD_AFTER_MS, runDueJobs } from "../db/scheduler.ts";
import { scheduleJob } from "../db/scheduler_store.ts";
import { FILE_WORKER_ENTRIES_MIN, startFileWorker, stopFileWorker } from "../lib/ach/jobs.ts";
import {
  restUnderApiTraffic,
  SEND_ENTRIES_PER_UNIT_MAX,
  UNIT_BUSY_REST_FACTOR,
  UNIT_BUSY_REST_MS_MAX,
} from "../lib/rails/batch.ts";
import {
  type AchFixture,
  batches,
  BUILT_BY_QUERY_BUILDER,
  chooseAch,
  logLines,
  notingUnits,
  rows,
  statuses,
  withScriptedBank,
} from "./ach_helpers.ts";
import { openTempDatabase, withTempDir } from "./helpers.ts";
import { sha256Hex } from "../lib/platform/keys.ts";

const NOW = Date.UTC(2026, 0, 5, 12);
const MINUTE_SECONDS = 60;

/** A loopback server and a client asking it one request after another; answers' times kept. */
async function withRequests(fn: () => Promise<void>): Promise<number[]> {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response("ok"),
  );
  const url = `http://127.0.0.1:${server.addr.port}/`;
  const answeredAt: number[] = [];
  let stopped = false;
  const client = (async () => {
    while (!stopped) {
      await (await fetch(url)).text();
      answeredAt.push(performance.now());
    }
  })();
  try {
    // The connection is open and answering before the run starts.
    while (answeredAt.length < 3) await new Promise((resolve) => setTimeout(resolve, 5));
    await fn();
  } finally {
    stopped = true;
    await client;
    await server.shutdown();
  }
  return answeredAt;
}

Deno.test("a run of unit jobs that each hold the thread answers requests between them", async () => {
  await withTempDir(async (dir) => {
    const database = await openTempDatabase(dir);
    try {
      const jobs = 12;
      const busyMs = 2 * JOBS_YIELD_AFTER_MS;
      await database.writer.write(async (tx) => {
        await tx.execute(
          "INSERT INTO companies (id, name, tin, created_at) VALUES ('co_1', 'Acme', '123456789', 0)",
        );
        for (let i = 0; i < jobs; i++) {
          await scheduleJob(
            tx,
            { companyId: "co_1", kind: "busy", subjectId: `s${i}`, dueAt: NOW },
            NOW,
          );
        }
      });
      let ran = 0;
      let started = 0;
      let ended = 0;
      const answeredAt = await withRequests(async () => {
        started = performance.now();
        ran = await runDueJobs(database, "co_1", NOW, {
          // A unit that holds the thread as a synchronous database does.
          busy: () => {
            const until = performance.now() + busyMs;
            while (performance.now() < until) { /* holding the thread */ }
            return Promise.resolve();
          },
        });
        ended = performance.now();
      });
      assert.equal(ran, jobs);
      const during = answeredAt.filter((at) => at > started && at < ended).length;
      // Each unit holds the thread beyond the limit, so the run yields after each one.
      assert.ok(during >= jobs / 2, `${during} requests answered during ${jobs} units`);
    } finally {
      await database.close();
    }
  });
});

/**
 * Advances to the first cutoff while a timer reads `sql`'s row whenever the event loop turns: a
 * unit holds the thread from its first statement to its commit, so only what commits between
 * units shows. Answers the rows read.
 */
async function seenWhileCutoff(m: AchFixture["m"], sql: string) {
  const seen: Awaited<ReturnType<typeof rows>> = [];
  let watching = true;
  const watch = (async () => {
    while (watching) {
      seen.push(...await rows(m, sql));
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
  })();
  try {
    await m.advance(30 * MINUTE_SECONDS);
  } finally {
    watching = false;
    await watch;
  }
  return seen;
}

Deno.test("a transmitted file's payouts are sent SEND_ENTRIES_PER_UNIT_MAX per unit, with the event loop's turns between units", async () => {
  await withScriptedBank(async ({ m }) => {
    await m.fund(100_000_000);
    const count = 4 * SEND_ENTRIES_PER_UNIT_MAX + Math.ceil(SEND_ENTRIES_PER_UNIT_MAX / 2);
    const ids = await chooseAch(m, Array.from({ length: count }, () => 1_000));
    const before = await m.balances();
    const [{ held }] = await rows(m, "SELECT sum(held_cents) AS held FROM payouts");
    const seenRows = await seenWhileCutoff(
      m,
      `SELECT (SELECT count(*) FROM rail_batch_entries WHERE status = 'sent') AS n,
        (SELECT count(*) FROM rail_batches WHERE status = 'transmitted') AS transmitted`,
    );
    const seen = new Set(seenRows.map((row) => Number(row.n)));
    const transmittedNoneSent = seenRows.some((row) =>
      Number(row.transmitted) === 1 && Number(row.n) === 0
    );
    assert.deepEqual((await batches(m)).map((b) => [b.status, b.entry_count]), [
      ["transmitted", count],
    ]);
    // The transmission's unit sent none of a file larger than a unit (a process's first send unit
    // prepares its statements: not in the transmission's unit).
    assert.ok(transmittedNoneSent, "the file was seen transmitted before any entry was sent");
    // Every unit's count was seen: one ach.send job sends the file, a unit at a time.
    const expected = [0];
    for (let sent = SEND_ENTRIES_PER_UNIT_MAX; sent < count; sent += SEND_ENTRIES_PER_UNIT_MAX) {
      expected.push(sent);
    }
    expected.push(count);
    assert.deepEqual([...seen].sort((a, b) => a - b), expected);
    assert.deepEqual(
      await rows(m, "SELECT count(*) AS n FROM scheduled_jobs WHERE kind = 'ach.send'"),
      [{ n: 1 }],
    );
    assert.deepEqual(
      await rows(m, "SELECT status, count(*) AS n FROM rail_batch_entries GROUP BY status"),
      [{ status: "sent", n: count }],
    );
    assert.deepEqual(new Set(await statuses(m, ids)), new Set(["funds_sent"]));
    const after = await m.balances();
    assert.equal(after.reserved, before.reserved - Number(held));
    assert.equal(after.in_transit, before.in_transit + Number(held));
  });
});

Deno.test("the send asks whether the API is answering requests after each unit that leaves more to send, to rest meanwhile", async () => {
  let asked = 0;
  await withScriptedBank(async ({ m }) => {
    await m.fund(100_000_000);
    const count = 4 * SEND_ENTRIES_PER_UNIT_MAX + Math.ceil(SEND_ENTRIES_PER_UNIT_MAX / 2);
    const ids = await chooseAch(m, Array.from({ length: count }, () => 1_000));
    await m.advance(30 * MINUTE_SECONDS);
    assert.deepEqual(new Set(await statuses(m, ids)), new Set(["funds_sent"]));
    // The build's one facts unit rests before the file's one piece; ach.send sends the file: 4
    // full units, then the last, after which nothing is left to rest for.
    assert.equal(asked, 1 + 4);
  }, {
    apiBusy: () => {
      asked += 1;
      return true;
    },
  });
});

Deno.test("a send unit moves at most 10 payouts: a file of 25 is seen sent 10, 20, then 25", async () => {
  await withScriptedBank(async ({ m }) => {
    await m.fund(100_000_000);
    const ids = await chooseAch(m, Array.from({ length: 25 }, () => 1_000));
    const seen = new Set(
      (await seenWhileCutoff(
        m,
        "SELECT count(*) AS n FROM rail_batch_entries WHERE status = 'sent'",
      )).map((row) => Number(row.n)),
    );
    assert.deepEqual([...seen].sort((a, b) => a - b), [0, 10, 20, 25]);
    assert.deepEqual(new Set(await statuses(m, ids)), new Set(["funds_sent"]));
  });
});

Deno.test("under API traffic a unit is followed by a rest six times as long as it held the thread, at most 40 ms; without traffic, none", async () => {
  assert.equal(UNIT_BUSY_REST_FACTOR, 6);
  const rested = async (heldMs: number, apiBusy: boolean) => {
    const started = performance.now();
    await restUnderApiTraffic(started - heldMs, () => apiBusy);
    return performance.now() - started;
  };
  assert.ok(await rested(5, true) >= 6 * 5 - 1, "rested six times the unit");
  const long = await rested(30, true);
  assert.ok(long >= UNIT_BUSY_REST_MS_MAX - 1 && long < 6 * 30, `a long unit's rest: ${long} ms`);
  assert.equal(UNIT_BUSY_REST_MS_MAX, 40);
  assert.ok(await rested(5, false) < 5, "no rest without requests");
});

Deno.test("a page of a transmitted file is sent set-based: each payout its own send posting, timeline row and event; one submitted again meanwhile is left out and logged", async () => {
  await withScriptedBank(async ({ m, bank }) => {
    await m.fund(100_000_000);
    const ids = await chooseAch(m, [1_000, 2_000, 3_000]);
    const before = await m.balances();
    const held = new Map(
      (await rows(m, "SELECT id, held_cents FROM payouts")).map((
        r,
      ) => [r.id, Number(r.held_cents)]),
    );
    // While the bank takes the file, the second payout is submitted again (its reference moves on).
    bank.afterUpload = () => {
      void m.database.writer.write((tx) =>
        tx.execute({
          sql: "UPDATE payouts SET submission_count = submission_count + 1 WHERE id = ?",
          args: [ids[1]],
        })
      );
    };
    const logged = await logLines(() => m.advance(30 * MINUTE_SECONDS));
    assert.deepEqual(await statuses(m, ids), ["funds_sent", "modality_selected", "funds_sent"]);
    assert.deepEqual(
      await rows(m, "SELECT status, count(*) AS n FROM rail_batch_entries GROUP BY status"),
      [{ status: "sent", n: 3 }],
    );
    const sentCents = held.get(ids[0])! + held.get(ids[2])!;
    const after = await m.balances();
    assert.equal(after.reserved, before.reserved - sentCents);
    assert.equal(after.in_transit, before.in_transit + sentCents);
    // One posting per payout sent, each moving exactly its hold.
    const postings = await rows(
      m,
      `SELECT t.id, t.payout_id, e.amount_cents FROM ledger_transactions t
         JOIN ledger_entries e ON e.transaction_id = t.id AND e.amount_cents > 0
        WHERE t.kind = 'payout.send' ORDER BY t.payout_id`,
    );
    assert.deepEqual(
      postings.map((p) => [p.payout_id, p.amount_cents]),
      [[ids[0], held.get(ids[0])], [ids[2], held.get(ids[2])]].sort(),
    );
    assert.deepEqual(
      await rows(
        m,
        `SELECT payout_id, from_status, to_status, detail FROM payout_transitions
          WHERE to_status = 'funds_sent' ORDER BY payout_id`,
      ),
      [ids[0], ids[2]].sort().map((id) => ({
        payout_id: id,
        from_status: "modality_selected",
        to_status: "funds_sent",
        detail: `${id}-1`,
      })),
    );
    // Each event carries its own payout's posting and state.
    const events = await rows(
      m,
      `SELECT payout_id, json_extract(data, '$.ledger_transaction_id') AS posting,
              json_extract(data, '$.status') AS status FROM events
        WHERE type = 'disbursement.funds_sent' ORDER BY payout_id`,
    );
    assert.deepEqual(
      events,
      postings.map((p) => ({ payout_id: p.payout_id, posting: p.id, status: "funds_sent" })),
    );
    assert.ok(
      logged.some((line) =>
        line.includes("no longer waits for it") && line.includes(`"payout_id":"${ids[1]}"`)
      ),
      logged.join("\n"),
    );
  });
});

/** Runs `fn` counting the file workers started meanwhile (each still the platform's own). */
async function countingFileWorkers(fn: () => Promise<void>): Promise<number> {
  const NativeWorker = globalThis.Worker;
  let started = 0;
  globalThis.Worker = class extends NativeWorker {
    constructor(...args: ConstructorParameters<typeof Worker>) {
      super(...args);
      if (String(args[0]).endsWith("/file_worker.ts")) started += 1;
    }
  };
  try {
    await fn();
  } finally {
    globalThis.Worker = NativeWorker;
  }
  return started;
}

/** A cutoff of a file built on a worker (FILE_WORKER_ENTRIES_MIN entries), to its payouts sent. */
async function largeFileSent({ m, bank }: AchFixture): Promise<void> {
  await m.fund(100_000_000);
  const ids = await chooseAch(m, Array.from({ length: FILE_WORKER_ENTRIES_MIN }, () => 1_000));
  await m.advance(30 * MINUTE_SECONDS);
  assert.deepEqual((await batches(m)).map((b) => [b.status, b.entry_count]), [
    ["transmitted", FILE_WORKER_ENTRIES_MIN],
  ]);
  assert.equal(bank.received.length, 1);
  assert.equal(bank.received[0].accountNumbers.length, FILE_WORKER_ENTRIES_MIN);
  assert.deepEqual(new Set(await statuses(m, ids)), new Set(["funds_sent"]));
}

Deno.test("a large file is built and opened for its upload by one file worker: the one that built it is kept for the opening", async () => {
  await withScriptedBank(async (fixture) => {
    assert.equal(await countingFileWorkers(() => largeFileSent(fixture)), 1);
  });
});

Deno.test("with the file worker a service starts with its workers, a cutoff starts none", async () => {
  startFileWorker();
  try {
    await withScriptedBank(async (fixture) => {
      assert.equal(await countingFileWorkers(() => largeFileSent(fixture)), 0);
    });
  } finally {
    stopFileWorker();
  }
});

Deno.test("a kept file's sealed content is read where it is opened for its upload, in no write unit; the bank gets the file as built", async () => {
  for (const count of [3, FILE_WORKER_ENTRIES_MIN]) {
    const units: string[][] = [];
    await withScriptedBank(async ({ m, bank }) => {
      await m.fund(100_000_000);
      await chooseAch(m, Array.from({ length: count }, () => 1_000));
      await m.advance(30 * MINUTE_SECONDS);
      assert.deepEqual((await batches(m)).map((b) => b.status), ["transmitted"]);
      assert.equal(bank.received.length, 1);
      const [{ sha256 }] = await rows(m, "SELECT sha256 FROM ach_files");
      assert.equal(await sha256Hex(bank.received[0].content), sha256);
      assert.equal(bank.received[0].accountNumbers.length, count);
    }, { wrapDatabase: (database) => notingUnits(database, units) });
    const readingContent = units.flat().filter((sql) =>
      /^\s*select/i.test(sql) && sql.includes("content_sealed")
    );
    assert.deepEqual(readingContent, [], `a file of ${count}`);
  }
});

Deno.test("a transmission's claiming and recording units write the batch and its attempt with statements written once, none built by the query builder", async () => {
  const units: string[][] = [];
  await withScriptedBank(async ({ m }) => {
    await m.fund(100_000_000);
    await chooseAch(m, [1_000, 2_000]);
    await m.advance(30 * MINUTE_SECONDS);
    assert.deepEqual((await batches(m)).map((b) => b.status), ["transmitted"]);
  }, { wrapDatabase: (database) => notingUnits(database, units) });
  const transmission = units.filter((unit) =>
    unit.some((sql) => /rail_batch_attempts/i.test(sql) && /insert|update/i.test(sql))
  );
  assert.equal(transmission.length, 2, "the claiming unit and the recording unit");
  assert.deepEqual(
    transmission.flat().filter((sql) =>
      sql.startsWith(BUILT_BY_QUERY_BUILDER) && /rail_batch(es|_attempts)/.test(sql)
    ),
    [],
  );
});
