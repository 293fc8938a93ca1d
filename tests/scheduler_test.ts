import assert from "node:assert/strict";
import { advanceOffset, latestDomainNow } from "../lib/sandbox/clock_store.ts";
import { purgeExpiredRows } from "../db/retention.ts";
import { runDueJobs, Scheduler } from "../db/scheduler.ts";
import { FakeClock } from "../lib/platform/clock.ts";
import { scheduleJob } from "../db/scheduler_store.ts";
import type { DueJob } from "../db/scheduler_store.ts";
import type { WriteTx } from "../db/writer.ts";
import { openTempDatabase, withTempDir } from "./helpers.ts";

const NOW = Date.UTC(2026, 0, 5, 12);

async function seedCompany(dir: string) {
  const database = await openTempDatabase(dir);
  await database.writer.write((tx) =>
    tx.execute(
      "INSERT INTO companies (id, name, tin, created_at) VALUES ('co_1', 'Acme', '123456789', 0)",
    )
  );
  return database;
}

Deno.test("jobs survive a restart and run once, in due order, including jobs scheduled by jobs", async () => {
  await withTempDir(async (dir) => {
    let database = await seedCompany(dir);
    await database.writer.write(async (tx) => {
      await scheduleJob(
        tx,
        { companyId: "co_1", kind: "note", subjectId: "b", dueAt: NOW + 2000 },
        NOW,
      );
      await scheduleJob(
        tx,
        { companyId: "co_1", kind: "note", subjectId: "a", dueAt: NOW + 1000 },
        NOW,
      );
      await scheduleJob(tx, {
        companyId: "co_1",
        kind: "note",
        subjectId: "late",
        dueAt: NOW + 60_000,
      }, NOW);
    });
    await database.close();
    database = await openTempDatabase(dir); // a restart: only the rows remain

    const ran: string[] = [];
    const handlers = {
      note: async (tx: WriteTx, job: DueJob) => {
        ran.push(`${job.subjectId}@${job.dueAt - NOW}`);
        if (job.subjectId === "a") {
          await scheduleJob(tx, {
            companyId: "co_1",
            kind: "note",
            subjectId: "from-a",
            dueAt: job.dueAt + 500,
          }, job.dueAt);
        }
      },
    };
    // Two runners at once, as the sweep and a clock advance may be: each job still runs once.
    const counts = await Promise.all([
      runDueJobs(database, "co_1", NOW + 5000, handlers),
      runDueJobs(database, "co_1", NOW + 5000, handlers),
    ]);
    assert.deepEqual(ran, ["a@1000", "from-a@1500", "b@2000"]);
    assert.equal(counts[0] + counts[1], 3, "each job counted by the runner that ran it");
    const { rows } = await database.readClient.execute(
      "SELECT subject_id FROM scheduled_jobs WHERE done_at IS NULL",
    );
    assert.deepEqual(rows.map((r) => r.subject_id), ["late"]);
    await database.close();
  });
});

Deno.test("a failing job is rolled back, parked with its error, and does not stall the others", async () => {
  await withTempDir(async (dir) => {
    const database = await seedCompany(dir);
    await database.writer.write(async (tx) => {
      await scheduleJob(tx, { companyId: "co_1", kind: "boom", subjectId: "x", dueAt: NOW }, NOW);
      await scheduleJob(
        tx,
        { companyId: "co_1", kind: "unknown", subjectId: "y", dueAt: NOW },
        NOW,
      );
      await scheduleJob(tx, { companyId: "co_1", kind: "note", subjectId: "z", dueAt: NOW }, NOW);
    });
    const ran: string[] = [];
    const originalError = console.error;
    console.error = () => {};
    try {
      await runDueJobs(database, "co_1", NOW, {
        boom: async (tx) => {
          await tx.execute(
            "INSERT INTO users (id, email, created_at) VALUES ('usr_partial', 'p@x.test', 0)",
          );
          throw new Error("rail timeout");
        },
        note: (_tx, job) => {
          ran.push(job.subjectId);
          return Promise.resolve();
        },
      });
    } finally {
      console.error = originalError;
    }
    assert.deepEqual(ran, ["z"]);
    const { rows } = await database.readClient.execute(
      "SELECT kind, error FROM scheduled_jobs ORDER BY rowid",
    );
    assert.deepEqual(rows.map((r) => [r.kind, r.error]), [
      ["boom", "rail timeout"],
      ["unknown", "no handler for job kind unknown"],
      ["note", null],
    ]);
    const partial = await database.readClient.execute("SELECT count(*) n FROM users");
    assert.equal(Number(partial.rows[0].n), 0, "the failed job's writes were rolled back");
    await database.close();
  });
});

Deno.test("a sweep runs due jobs in batches: due order, shared commits, a failure parks only itself", async () => {
  await withTempDir(async (dir) => {
    const database = await seedCompany(dir);
    await database.writer.write(async (tx) => {
      for (let i = 0; i < 40; i++) {
        await scheduleJob(tx, {
          companyId: "co_1",
          kind: i === 7 ? "boom" : "note",
          subjectId: `j${i}`,
          dueAt: NOW + i,
        }, NOW);
      }
    });
    const ran: string[] = [];
    const handlers = {
      note: async (tx: WriteTx, job: DueJob) => {
        ran.push(job.subjectId);
        await tx.execute({
          sql: "INSERT INTO companies (id, name, tin, created_at) VALUES (?, 'x', ?, 0)",
          args: [`co_${job.subjectId}`, String(100_000_000 + ran.length)],
        });
        if (job.subjectId === "j0") {
          // Due at once, but found by a later batch.
          await scheduleJob(
            tx,
            { companyId: "co_1", kind: "note", subjectId: "from-j0", dueAt: NOW },
            NOW,
          );
        }
      },
      boom: async (tx: WriteTx) => {
        await tx.execute(
          "INSERT INTO companies (id, name, tin, created_at) VALUES ('co_boom', 'x', '999999999', 0)",
        );
        throw new Error("rail exploded");
      },
    };
    const groupsBefore = database.writer.stats.groups;
    const count = await runDueJobs(database, "co_1", NOW + 1000, handlers, { perBatch: 16 });
    assert.equal(count, 41);
    const due = (from: number, to: number) =>
      Array.from({ length: to - from }, (_, i) => `j${from + i}`).filter((id) => id !== "j7");
    // The first batch is j0–j15; the job j0 scheduled is due earliest, so the next batch starts with it.
    assert.deepEqual(ran, [...due(0, 16), "from-j0", ...due(16, 40)]);
    const groups = database.writer.stats.groups - groupsBefore;
    assert.ok(groups < 20, `41 jobs (and one parking) committed in ${groups} groups`);
    const parked = await database.readClient.execute(
      "SELECT error FROM scheduled_jobs WHERE subject_id = 'j7' AND done_at IS NOT NULL",
    );
    assert.deepEqual(parked.rows.map((r) => r.error), ["rail exploded"]);
    const companies = await database.readClient.execute(
      "SELECT count(*) AS n, sum(id = 'co_boom') AS boom FROM companies",
    );
    assert.deepEqual([companies.rows[0].n, companies.rows[0].boom], [1 + 40, 0]);
    const pending = await database.readClient.execute(
      "SELECT count(*) AS n FROM scheduled_jobs WHERE done_at IS NULL",
    );
    assert.equal(pending.rows[0].n, 0);
    await database.close();
  });
});

Deno.test("the background sweep runs what is due at each company's own time, and nothing later", async () => {
  await withTempDir(async (dir) => {
    const test = await seedCompany(dir);
    const live = await openTempDatabase(dir, "live");
    const HOUR = 3_600_000;
    await test.writer.write(async (tx) => {
      await tx.execute(
        "INSERT INTO companies (id, name, tin, created_at) VALUES ('co_2', 'Beta', '987654321', 0)",
      );
      // co_2's sandbox clock is a day ahead of real time.
      await advanceOffset(tx, "co_2", 24 * HOUR, NOW);
      const job = (companyId: string, subjectId: string, dueAt: number) =>
        scheduleJob(tx, { companyId, kind: "note", subjectId, dueAt }, NOW);
      await job("co_1", "co_1-due", NOW - 1);
      await job("co_1", "co_1-in-an-hour", NOW + HOUR);
      await job("co_2", "co_2-due-on-its-clock", NOW + 2 * HOUR);
      await job("co_2", "co_2-in-two-days", NOW + 48 * HOUR);
    });
    const ran: string[] = [];
    const note = (_tx: WriteTx, job: DueJob) => {
      ran.push(job.subjectId);
      return Promise.resolve();
    };
    const scheduler = new Scheduler(
      { test, live },
      { test: { note }, live: { note } },
      new FakeClock(NOW),
    );
    await scheduler.sweep();
    assert.deepEqual(ran.sort(), ["co_1-due", "co_2-due-on-its-clock"]);
    assert.equal(await latestDomainNow(test, NOW), NOW + 24 * HOUR);
    assert.equal(await latestDomainNow(live, NOW), NOW);
    await scheduler.stop();
    await test.close();
    await live.close();
  });
});

Deno.test("the sweep purges expired idempotency records and jobs done 30 days ago, once a minute, never a parked job", async () => {
  await withTempDir(async (dir) => {
    const test = await seedCompany(dir);
    const live = await openTempDatabase(dir, "live");
    const DAY = 86_400_000;
    await test.writer.write(async (tx) => {
      const job = async (subjectId: string, doneAt: number | null, error: string | null) => {
        const id = await scheduleJob(tx, {
          companyId: "co_1",
          kind: "note",
          subjectId,
          dueAt: NOW + DAY,
        }, NOW);
        await tx.execute({
          sql: "UPDATE scheduled_jobs SET done_at = ?, error = ? WHERE id = ?",
          args: [doneAt, error, id],
        });
      };
      await job("done-31-days-ago", NOW - 31 * DAY, null);
      await job("done-30-days-ago", NOW - 30 * DAY, null);
      await job("done-29-days-ago", NOW - 29 * DAY, null);
      await job("parked-a-year-ago", NOW - 365 * DAY, "no handler");
      await job("pending", null, null);
      await tx.execute(
        "UPDATE scheduled_jobs SET due_at = due_at + 365 * 86400000 WHERE done_at IS NULL",
      );
      const record = (key: string, expiresAt: number) =>
        tx.execute({
          sql: `INSERT INTO idempotency_records
                  (company_id, scope_line, key, fingerprint, status, created_at, expires_at)
                VALUES ('co_1', '', ?, 'f', 'complete', ?, ?)`,
          args: [key, expiresAt - DAY, expiresAt],
        });
      await record("expired", NOW);
      await record("an-hour-left", NOW + 3_600_000);
    });
    const subjects = async () =>
      (await test.readClient.execute("SELECT subject_id FROM scheduled_jobs ORDER BY subject_id"))
        .rows.map((row) => String(row.subject_id));
    const keys = async () =>
      (await test.readClient.execute("SELECT key FROM idempotency_records ORDER BY key")).rows
        .map((row) => String(row.key));
    const clock = new FakeClock(NOW);
    const scheduler = new Scheduler({ test, live }, { test: {}, live: {} }, clock);
    await scheduler.sweep();
    assert.deepEqual(await subjects(), ["done-29-days-ago", "parked-a-year-ago", "pending"]);
    assert.deepEqual(await keys(), ["an-hour-left"]);
    clock.advance(3_600_000 - 30_000);
    await scheduler.sweep();
    assert.deepEqual(await keys(), ["an-hour-left"], "an hour has not passed");
    clock.advance(59_999);
    await scheduler.sweep();
    assert.deepEqual(
      await keys(),
      ["an-hour-left"],
      "expired, but the last purge was 59.999 s ago",
    );
    clock.advance(1);
    await scheduler.sweep();
    assert.deepEqual(await keys(), []);
    clock.advance(DAY);
    await scheduler.sweep();
    assert.deepEqual(await subjects(), ["parked-a-year-ago", "pending"]);
    await scheduler.stop();
    await test.close();
    await live.close();
  });
});

Deno.test("a purge deletes a backlog larger than one unit", async () => {
  await withTempDir(async (dir) => {
    const test = await seedCompany(dir);
    await test.writer.write(async (tx) => {
      for (let i = 0; i < 1_234; i++) {
        await tx.execute({
          sql:
            `INSERT INTO scheduled_jobs (id, company_id, kind, subject_id, due_at, done_at, created_at)
                VALUES (?, 'co_1', 'note', 's', 0, 0, 0)`,
          args: [`job_${i}`],
        });
      }
    });
    const unitsBefore = test.writer.stats.units;
    assert.deepEqual(await purgeExpiredRows(test, NOW), { idempotencyRecords: 0, doneJobs: 1_234 });
    // 500 rows a unit: one (empty) for idempotency records, three for the jobs.
    assert.equal(test.writer.stats.units - unitsBefore, 4);
    await test.close();
  });
});
