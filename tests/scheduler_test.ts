import assert from "node:assert/strict";
import { advanceOffset, latestDomainNow } from "../lib/sandbox/clock_store.ts";
import { purgeExpiredRows } from "../db/retention.ts";
import {
  advanceSandboxClock,
  batchedUnitJob,
  externalJob,
  JOBS_BUSY_REST_FACTOR,
  JOBS_BUSY_REST_MS_MAX,
  JOBS_PER_BATCH_MAX,
  runDueJobs,
  Scheduler,
  TransientJobError,
} from "../db/scheduler.ts";
import { classifyJobFailure, retryDelayMs } from "../db/job_policy.ts";
import type { Database } from "../db/client.ts";
import { Metrics } from "../lib/platform/metrics.ts";
import { FakeClock } from "../lib/platform/clock.ts";
import { markJobsDone, openJobIds, scheduleJob } from "../db/scheduler_store.ts";
import type { DueJob } from "../db/scheduler_store.ts";
import type { InStatement } from "@libsql/client";
import { RUN_ALONE, WriteGroupError, type WriteTx } from "../db/writer.ts";
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

Deno.test("while the API is busy a sweep rests between its batches, JOBS_BUSY_REST_FACTOR times each batch's length at most JOBS_BUSY_REST_MS_MAX; once it quiets the rest run at once, every job run", async () => {
  await withTempDir(async (dir) => {
    const database = await seedCompany(dir);
    await database.writer.write(async (tx) => {
      for (let i = 0; i < 32; i++) {
        await scheduleJob(
          tx,
          { companyId: "co_1", kind: "offer", subjectId: `j${i}`, dueAt: NOW + i },
          NOW,
        );
      }
    });
    const metrics = new Metrics();
    metrics.requestStarted(); // a request being answered: the API is busy
    /** When each job began and ended (performance.now()), in run order. */
    const runs: { id: string; start: number; end: number }[] = [];
    const handlers = {
      offer: (_tx: WriteTx, job: DueJob) => {
        const start = performance.now();
        while (performance.now() - start < 3); // a job's work on the service's thread
        runs.push({ id: job.subjectId, start, end: performance.now() });
        // The API quiets during the third batch.
        if (job.subjectId === "j16") metrics.requestFinished();
        return Promise.resolve();
      },
    };
    const ran = await runDueJobs(database, "co_1", NOW + 1000, handlers, {
      perBatch: 8,
      apiBusy: () => metrics.apiBusy,
    });
    assert.equal(ran, 32, "every job ran");
    const batches = [0, 8, 16, 24].map((at) => runs.slice(at, at + 8));
    const length = (batch: typeof runs) => batch.at(-1)!.end - batch[0].start;
    const gap = (i: number) => batches[i + 1][0].start - batches[i].at(-1)!.end;
    for (const i of [0, 1]) {
      const rest = Math.min(JOBS_BUSY_REST_FACTOR * length(batches[i]), JOBS_BUSY_REST_MS_MAX);
      assert.ok(gap(i) >= rest * 0.9, `busy: ${gap(i)} ms after a batch of ${length(batches[i])}`);
      assert.ok(gap(i) < JOBS_BUSY_REST_MS_MAX + 200, `busy rest bounded: ${gap(i)} ms`);
    }
    // Quiet (its last request answered more than 10 ms before): no rest after the third batch.
    assert.ok(gap(2) < 3 * length(batches[2]), `quiet: ${gap(2)} ms after ${length(batches[2])}`);
    await database.close();
  });
});

Deno.test("while the API is busy an external job's claim, call and record each get their own turns of the event loop; quiet, the call runs in the claim's turn", async () => {
  await withTempDir(async (dir) => {
    const database = await seedCompany(dir);
    await database.writer.write(async (tx) => {
      for (const subjectId of ["busy", "quiet"]) {
        await scheduleJob(tx, { companyId: "co_1", kind: "call", subjectId, dueAt: NOW }, NOW);
      }
    });
    /** Whether a timer set at one step had run by the next: the event loop turned in between. */
    const turned = (): () => boolean => {
      let ran = false;
      setTimeout(() => ran = true, 0);
      return () => ran;
    };
    const seen: Record<string, { afterClaim: boolean; afterCall: boolean }> = {};
    let sinceClaim: () => boolean = () => false;
    let sinceCall: () => boolean = () => false;
    let busy = true;
    const handlers = {
      call: externalJob<string, null>({
        leaseMs: 60_000,
        prepare: (_tx, job) => {
          sinceClaim = turned();
          return Promise.resolve(job.subjectId);
        },
        call: (subjectId) => {
          seen[subjectId] = { afterClaim: sinceClaim(), afterCall: false };
          sinceCall = turned();
          return Promise.resolve(null);
        },
        record: (_tx, job) => {
          seen[job.subjectId].afterCall = sinceCall();
          busy = false; // the next job runs with the API quiet
          return Promise.resolve();
        },
      }),
    };
    const ran = await runDueJobs(database, "co_1", NOW + 1000, handlers, {
      apiBusy: () => busy,
    });
    assert.equal(ran, 2);
    assert.deepEqual(seen.busy, { afterClaim: true, afterCall: true });
    // Quiet, the call follows the claim's commit at once; its record is queued for the writer's
    // next group, which a timer may or may not precede.
    assert.equal(seen.quiet.afterClaim, false);
    await database.close();
  });
});

Deno.test("a batched job kind: the jobs of a batch run in one call of many, those it leaves run alone, a throw runs each alone, each job done once", async () => {
  await withTempDir(async (dir) => {
    const database = await seedCompany(dir);
    await database.writer.write(async (tx) => {
      for (let i = 0; i < 6; i++) {
        await scheduleJob(
          tx,
          { companyId: "co_1", kind: "offer", subjectId: `j${i}`, dueAt: NOW + i },
          NOW,
        );
      }
    });
    const calls: string[] = [];
    let throwing = false;
    const handlers = {
      offer: batchedUnitJob({
        one: (_tx, job) => {
          calls.push(`one ${job.subjectId}`);
          return Promise.resolve();
        },
        many: (_tx, jobs) => {
          calls.push(`many ${jobs.map((job) => job.subjectId).join(",")}`);
          if (throwing) throw new Error("a statement of the batch failed");
          return Promise.resolve(jobs.map((job) => job.subjectId === "j1" ? RUN_ALONE : undefined));
        },
      }),
    };
    const run = (until: number) =>
      runDueJobs(database, "co_1", until, handlers, { perBatch: JOBS_PER_BATCH_MAX });
    assert.equal(await run(NOW + 3), 4);
    assert.deepEqual(calls, ["many j0,j1,j2,j3", "one j1"]);
    throwing = true;
    calls.length = 0;
    assert.equal(await run(NOW + 5), 2);
    assert.deepEqual(calls, ["many j4,j5", "one j4", "one j5"]);
    const done = await database.readClient.execute(
      "SELECT count(*) AS n, sum(attempts) AS attempts FROM scheduled_jobs WHERE done_at IS NOT NULL AND error IS NULL",
    );
    assert.deepEqual([done.rows[0].n, done.rows[0].attempts], [6, 6]);
    assert.equal(await run(NOW + 10), 0);
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

Deno.test("the sweep purges expired idempotency records and jobs done 30 days ago, once a minute, never a parked job or a pending retry", async () => {
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
      await job("retry-pending", null, "write group was not committed: disk full");
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
    assert.deepEqual(await subjects(), [
      "done-29-days-ago",
      "parked-a-year-ago",
      "pending",
      "retry-pending",
    ]);
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
    assert.deepEqual(await subjects(), ["parked-a-year-ago", "pending", "retry-pending"]);
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

/** The JSON lines written to stderr while `fn` runs. */
async function capturingStderr<T>(
  fn: (lines: Record<string, unknown>[]) => Promise<T>,
): Promise<T> {
  const lines: Record<string, unknown>[] = [];
  const original = console.error;
  console.error = (text: unknown) => void lines.push(JSON.parse(String(text)));
  try {
    return await fn(lines);
  } finally {
    console.error = original;
  }
}

async function jobRow(database: Database, subjectId: string) {
  const { rows } = await database.readClient.execute({
    sql: `SELECT id, due_at, done_at, error, attempts, lease_until FROM scheduled_jobs
          WHERE subject_id = ?`,
    args: [subjectId],
  });
  assert.equal(rows.length, 1);
  const row = rows[0];
  return {
    id: String(row.id),
    dueAt: Number(row.due_at),
    doneAt: row.done_at === null ? null : Number(row.done_at),
    error: row.error,
    attempts: Number(row.attempts),
    leaseUntil: row.lease_until === null ? null : Number(row.lease_until),
  };
}

const jobFailures = (metrics: Metrics) =>
  metrics.render({}).split("\n").filter((line) => line.startsWith("scheduled_job_failures_total{"));

Deno.test("a job that fails on storage is retried 5 s later, then 30 s later, and its effect commits once on the third run", async () => {
  await withTempDir(async (dir) => {
    const test = await openTempDatabase(dir, "test");
    const live = await openTempDatabase(dir, "live");
    await live.writer.write(async (tx) => {
      await tx.execute(
        "INSERT INTO companies (id, name, tin, created_at) VALUES ('co_1', 'Acme', '123456789', 0)",
      );
      await scheduleJob(tx, { companyId: "co_1", kind: "flaky", subjectId: "f", dueAt: NOW }, NOW);
    });
    let runs = 0;
    const flaky = async (tx: WriteTx) => {
      runs++;
      await tx.execute({
        sql: "INSERT INTO companies (id, name, tin, created_at) VALUES (?, 'x', '999999999', 0)",
        args: ["co_effect"],
      });
      if (runs < 3) throw new WriteGroupError(new Error("SQLITE_FULL: database or disk is full"));
    };
    const clock = new FakeClock(NOW);
    const metrics = new Metrics();
    const scheduler = new Scheduler(
      { test, live },
      {
        test: {},
        live: { flaky },
      },
      clock,
      { metrics },
    );
    const effects = async () =>
      Number(
        (await live.readClient.execute(
          "SELECT count(*) AS n FROM companies WHERE id = 'co_effect'",
        ))
          .rows[0].n,
      );
    await capturingStderr(async (lines) => {
      await scheduler.sweep();
      const message = "write group was not committed: SQLITE_FULL: database or disk is full";
      const first = await jobRow(live, "f");
      assert.deepEqual(first, {
        id: first.id,
        dueAt: NOW + 5_000,
        doneAt: null,
        error: message,
        attempts: 1,
        leaseUntil: null,
      });
      assert.equal(await effects(), 0, "the failed run rolled back");
      clock.advance(4_999);
      await scheduler.sweep();
      assert.equal(runs, 1, "not before its retry is due");
      clock.advance(1);
      await scheduler.sweep();
      assert.equal(runs, 2);
      assert.deepEqual(
        { ...(await jobRow(live, "f")), id: first.id },
        { ...first, dueAt: NOW + 35_000, attempts: 2 },
      );
      clock.advance(29_999);
      await scheduler.sweep();
      assert.equal(runs, 2);
      clock.advance(1);
      await scheduler.sweep();
      assert.equal(runs, 3);
      assert.deepEqual(await jobRow(live, "f"), {
        id: first.id,
        dueAt: NOW + 35_000,
        doneAt: NOW + 35_000,
        error: null,
        attempts: 3,
        leaseUntil: null,
      });
      assert.equal(await effects(), 1);
      clock.advance(3_600_000);
      await scheduler.sweep();
      assert.equal(runs, 3, "done for good");
      assert.deepEqual(lines, [
        {
          level: "warn",
          msg: "job failed",
          job_id: first.id,
          kind: "flaky",
          attempts: 1,
          outcome: "retried",
          retry_at: new Date(NOW + 5_000).toISOString(),
          error: message,
        },
        {
          level: "warn",
          msg: "job failed",
          job_id: first.id,
          kind: "flaky",
          attempts: 2,
          outcome: "retried",
          retry_at: new Date(NOW + 35_000).toISOString(),
          error: message,
        },
      ]);
    });
    assert.deepEqual(jobFailures(metrics), [
      'scheduled_job_failures_total{kind="flaky",outcome="retried"} 2',
    ]);
    await scheduler.stop();
    await test.close();
    await live.close();
  });
});

Deno.test("a job that fails on a programming error is parked after one run and never run again", async () => {
  await withTempDir(async (dir) => {
    const test = await seedCompany(dir);
    const live = await openTempDatabase(dir, "live");
    await test.writer.write((tx) =>
      scheduleJob(tx, { companyId: "co_1", kind: "broken", subjectId: "b", dueAt: NOW }, NOW)
    );
    let runs = 0;
    const broken = () => {
      runs++;
      return Promise.reject(new TypeError("Cannot read properties of undefined (reading 'id')"));
    };
    const clock = new FakeClock(NOW);
    const metrics = new Metrics();
    const scheduler = new Scheduler({ test, live }, { test: { broken }, live: {} }, clock, {
      metrics,
    });
    await capturingStderr(async (lines) => {
      await scheduler.sweep();
      clock.advance(86_400_000);
      await scheduler.sweep();
      const row = await jobRow(test, "b");
      assert.deepEqual(row, {
        id: row.id,
        dueAt: NOW,
        doneAt: NOW,
        error: "Cannot read properties of undefined (reading 'id')",
        attempts: 1,
        leaseUntil: null,
      });
      assert.deepEqual(lines, [{
        level: "error",
        msg: "job failed",
        job_id: row.id,
        kind: "broken",
        attempts: 1,
        outcome: "parked",
        error: "Cannot read properties of undefined (reading 'id')",
      }]);
    });
    assert.equal(runs, 1);
    assert.deepEqual(jobFailures(metrics), [
      'scheduled_job_failures_total{kind="broken",outcome="parked"} 1',
    ]);
    await scheduler.stop();
    await test.close();
    await live.close();
  });
});

Deno.test("a test-environment job's retry is due 5 s after its company's sandbox time, not real time", async () => {
  await withTempDir(async (dir) => {
    const test = await seedCompany(dir);
    const live = await openTempDatabase(dir, "live");
    const DAY = 86_400_000;
    await test.writer.write(async (tx) => {
      await advanceOffset(tx, "co_1", DAY, NOW);
      await scheduleJob(
        tx,
        { companyId: "co_1", kind: "flaky", subjectId: "f", dueAt: NOW + DAY - 60_000 },
        NOW,
      );
    });
    const flaky = () => Promise.reject(new TransientJobError("the bank answered 503"));
    const scheduler = new Scheduler(
      { test, live },
      { test: { flaky }, live: {} },
      new FakeClock(NOW),
    );
    await capturingStderr(() => scheduler.sweep());
    const row = await jobRow(test, "f");
    assert.deepEqual([row.dueAt, row.doneAt, row.error], [
      NOW + DAY + 5_000,
      null,
      "the bank answered 503",
    ]);
    await scheduler.stop();
    await test.close();
    await live.close();
  });
});

Deno.test("failures are told apart: storage and network errors are transient, everything else permanent; the backoff is capped at an hour", () => {
  const cases: [unknown, "transient" | "permanent"][] = [
    [new WriteGroupError(new Error("database is locked")), "transient"],
    [new TransientJobError("provider answered 502"), "transient"],
    [
      new TypeError("error sending request for url (https://bank.test/): connection refused"),
      "transient",
    ],
    [new DOMException("The signal has been aborted", "AbortError"), "transient"],
    [new DOMException("Signal timed out.", "TimeoutError"), "transient"],
    [new Deno.errors.ConnectionRefused("Connection refused (os error 111)"), "transient"],
    [Object.assign(new Error("connect failed"), { code: "ECONNREFUSED" }), "transient"],
    [new Error("rail call failed", { cause: new Deno.errors.TimedOut("timed out") }), "transient"],
    [new TypeError("Cannot read properties of undefined (reading 'id')"), "permanent"],
    [new Error("payout po_1 cannot move from paid to sent"), "permanent"],
    [new RangeError("Invalid time value"), "permanent"],
    ["a thrown string", "permanent"],
  ];
  for (const [error, expected] of cases) {
    assert.equal(classifyJobFailure(error), expected, String(error));
  }
  assert.deepEqual(
    [1, 2, 3, 4, 5, 6, 50].map(retryDelayMs),
    [5_000, 30_000, 120_000, 600_000, 3_600_000, 3_600_000, 3_600_000],
  );
});

/** A rail call as the second wave makes them: prepared in the claim, called, recorded. */
function railJob(
  database: () => Database,
  log: string[],
  call: (reference: string) => Promise<string>,
) {
  return externalJob<{ reference: string }, { railReference: string }>({
    leaseMs: 60_000,
    prepare: async (tx, job) => {
      // The reference is the job's own: a run after a crash sends the same one again.
      log.push(`prepare ${job.subjectId}`);
      await tx.execute({
        sql: "INSERT INTO rail_log (entry) VALUES (?)",
        args: [`prepared ${job.subjectId}`],
      });
      return job.subjectId === "nothing" ? null : { reference: `ref_${job.subjectId}` };
    },
    call: async (request, job) => {
      log.push(`call ${request.reference}`);
      // Outside every unit: the claim is durable, and the writer is free for other units.
      const claimed = await database().readClient.execute({
        sql: "SELECT lease_until, done_at FROM scheduled_jobs WHERE id = ?",
        args: [job.id],
      });
      assert.notEqual(claimed.rows[0].lease_until, null, "the claim committed before the call");
      assert.equal(claimed.rows[0].done_at, null);
      await database().writer.write((tx) => tx.execute("SELECT 1"));
      return { railReference: await call(request.reference) };
    },
    record: async (tx, job, answer) => {
      log.push(`record ${job.subjectId} ${answer.railReference}`);
      await tx.execute({
        sql: "INSERT INTO rail_log (entry) VALUES (?)",
        args: [`recorded ${job.subjectId} ${answer.railReference}`],
      });
    },
  });
}

async function seedRailLog(dir: string): Promise<Database> {
  const database = await seedCompany(dir);
  await database.writer.write((tx) => tx.execute("CREATE TABLE rail_log (entry TEXT NOT NULL)"));
  return database;
}

async function railLog(database: Database): Promise<string[]> {
  const { rows } = await database.readClient.execute("SELECT entry FROM rail_log ORDER BY rowid");
  return rows.map((row) => String(row.entry));
}

Deno.test("an external job is claimed with a real-time lease, called outside every unit, and recorded once", async () => {
  await withTempDir(async (dir) => {
    const database = await seedRailLog(dir);
    await database.writer.write(async (tx) => {
      await scheduleJob(tx, { companyId: "co_1", kind: "rail", subjectId: "a", dueAt: NOW }, NOW);
      await scheduleJob(
        tx,
        { companyId: "co_1", kind: "rail", subjectId: "nothing", dueAt: NOW + 1 },
        NOW,
      );
    });
    const log: string[] = [];
    const rail = railJob(() => database, log, (reference) => Promise.resolve(`rail_${reference}`));
    // The sandbox clock runs a day ahead of the process clock: leases follow the process clock.
    const clock = new FakeClock(NOW - 86_400_000);
    const ran = await runDueJobs(database, "co_1", NOW + 1, { rail }, { clock });
    assert.equal(ran, 2);
    assert.deepEqual(log, [
      "prepare a",
      "call ref_a",
      "record a rail_ref_a",
      "prepare nothing",
    ]);
    assert.deepEqual(await railLog(database), [
      "prepared a",
      "recorded a rail_ref_a",
      "prepared nothing",
    ]);
    for (const [subject, dueAt] of [["a", NOW], ["nothing", NOW + 1]] as const) {
      const row = await jobRow(database, subject);
      assert.deepEqual({ ...row, id: "" }, {
        id: "",
        dueAt,
        doneAt: dueAt,
        error: null,
        attempts: 1,
        leaseUntil: null,
      });
    }
    assert.equal(await runDueJobs(database, "co_1", NOW + 1, { rail }, { clock }), 0);
    await database.close();
  });
});

Deno.test("two runners race for one external job: one claims and calls, the other passes", async () => {
  await withTempDir(async (dir) => {
    const database = await seedRailLog(dir);
    await database.writer.write((tx) =>
      scheduleJob(tx, { companyId: "co_1", kind: "rail", subjectId: "a", dueAt: NOW }, NOW)
    );
    const log: string[] = [];
    const rail = railJob(() => database, log, async (reference) => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      return `rail_${reference}`;
    });
    const clock = new FakeClock(NOW);
    const counts = await Promise.all([
      runDueJobs(database, "co_1", NOW, { rail }, { clock }),
      runDueJobs(database, "co_1", NOW, { rail }, { clock, perBatch: JOBS_PER_BATCH_MAX }),
    ]);
    assert.deepEqual(counts.sort(), [0, 1]);
    assert.deepEqual(log, ["prepare a", "call ref_a", "record a rail_ref_a"]);
    assert.deepEqual(await railLog(database), ["prepared a", "recorded a rail_ref_a"]);
    assert.equal((await jobRow(database, "a")).attempts, 1);
    await database.close();
  });
});

Deno.test("a crash between the call and its record: the claim holds until its lease ends, then the job calls again with the same reference and records once", async () => {
  await withTempDir(async (dir) => {
    let database = await seedRailLog(dir);
    await database.writer.write((tx) =>
      scheduleJob(tx, { companyId: "co_1", kind: "rail", subjectId: "a", dueAt: NOW }, NOW)
    );
    const calls: string[] = [];
    let crash = true;
    const log: string[] = [];
    const rail = railJob(() => database, log, async (reference) => {
      calls.push(reference);
      if (crash) {
        // The rail accepted the submission; the process dies before recording its answer.
        crash = false;
        await database.close();
      }
      return `rail_${reference}`;
    });
    const clock = new FakeClock(NOW);
    await capturingStderr(async (lines) => {
      await assert.rejects(
        runDueJobs(database, "co_1", NOW, { rail }, { clock }),
        /the writer is closed/,
      );
      assert.deepEqual(lines.map((line) => [line.msg, line.outcome]), [
        ["job failed", "unrecorded"],
      ]);
    });

    database = await openTempDatabase(dir); // the restart
    const claimed = await jobRow(database, "a");
    assert.deepEqual([claimed.doneAt, claimed.attempts, claimed.leaseUntil], [
      null,
      1,
      NOW + 60_000,
    ]);
    clock.advance(59_999);
    assert.equal(await runDueJobs(database, "co_1", NOW, { rail }, { clock }), 0);
    assert.deepEqual(calls, ["ref_a"], "the claim keeps other runs away until its lease ends");
    clock.advance(1);
    assert.equal(await runDueJobs(database, "co_1", NOW, { rail }, { clock }), 1);
    assert.deepEqual(calls, ["ref_a", "ref_a"], "called again with the same reference");
    assert.deepEqual(await railLog(database), [
      "prepared a",
      "prepared a",
      "recorded a rail_ref_a",
    ]);
    const done = await jobRow(database, "a");
    assert.deepEqual([done.doneAt, done.attempts, done.leaseUntil, done.error], [
      NOW,
      2,
      null,
      null,
    ]);
    await database.close();
  });
});

Deno.test("an external call that fails transiently is retried with backoff; one refused for good parks the job", async () => {
  await withTempDir(async (dir) => {
    const database = await seedRailLog(dir);
    await database.writer.write(async (tx) => {
      await scheduleJob(tx, { companyId: "co_1", kind: "rail", subjectId: "a", dueAt: NOW }, NOW);
      await scheduleJob(tx, { companyId: "co_1", kind: "rail", subjectId: "b", dueAt: NOW }, NOW);
    });
    let failuresLeft = 1;
    const calls: string[] = [];
    const rail = railJob(() => database, [], (reference) => {
      calls.push(reference);
      if (reference === "ref_b") {
        return Promise.reject(new Error("the rail refused the account number format"));
      }
      if (failuresLeft-- > 0) {
        return Promise.reject(new TransientJobError("the rail answered 503"));
      }
      return Promise.resolve(`rail_${reference}`);
    });
    const clock = new FakeClock(NOW);
    const metrics = new Metrics();
    await capturingStderr(async (lines) => {
      assert.equal(await runDueJobs(database, "co_1", NOW, { rail }, { clock, metrics }), 2);
      assert.deepEqual(
        lines.map((line) => [line.kind, line.attempts, line.outcome, line.error]),
        [
          ["rail", 1, "retried", "the rail answered 503"],
          ["rail", 1, "parked", "the rail refused the account number format"],
        ],
      );
    });
    const retrying = await jobRow(database, "a");
    assert.deepEqual([retrying.dueAt, retrying.doneAt, retrying.leaseUntil, retrying.attempts], [
      NOW + 5_000,
      null,
      null,
      1,
    ]);
    const parked = await jobRow(database, "b");
    assert.deepEqual([parked.doneAt, parked.leaseUntil, parked.attempts, parked.error], [
      NOW,
      null,
      1,
      "the rail refused the account number format",
    ]);
    clock.advance(5_000);
    assert.equal(await runDueJobs(database, "co_1", NOW + 4_999, { rail }, { clock }), 0);
    assert.equal(await runDueJobs(database, "co_1", NOW + 5_000, { rail }, { clock }), 1);
    assert.deepEqual(calls, ["ref_a", "ref_b", "ref_a"]);
    assert.deepEqual(await railLog(database), [
      "prepared a",
      "prepared b",
      "prepared a",
      "recorded a rail_ref_a",
    ]);
    const done = await jobRow(database, "a");
    assert.deepEqual([done.doneAt, done.attempts, done.error], [NOW + 5_000, 2, null]);
    assert.deepEqual(jobFailures(metrics), [
      'scheduled_job_failures_total{kind="rail",outcome="retried"} 1',
      'scheduled_job_failures_total{kind="rail",outcome="parked"} 1',
    ]);
    await database.close();
  });
});

Deno.test("a sandbox clock advance runs an external job's claim, call and record before the next job", async () => {
  await withTempDir(async (dir) => {
    const database = await seedRailLog(dir);
    await database.writer.write(async (tx) => {
      const job = (kind: string, subjectId: string, seconds: number) =>
        scheduleJob(tx, { companyId: "co_1", kind, subjectId, dueAt: NOW + seconds * 1000 }, NOW);
      await job("note", "first", 1);
      await job("rail", "a", 2);
      await job("note", "third", 3);
    });
    const log: string[] = [];
    const rail = railJob(() => database, log, async (reference) => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      return `rail_${reference}`;
    });
    const note = (_tx: WriteTx, job: DueJob) => {
      log.push(`note ${job.subjectId}`);
      return Promise.resolve();
    };
    const advanced = await advanceSandboxClock(database, "co_1", 10, NOW, { rail, note }, {
      clock: new FakeClock(NOW),
    });
    assert.equal(advanced.jobsRun, 3);
    assert.deepEqual(log, [
      "note first",
      "prepare a",
      "call ref_a",
      "record a rail_ref_a",
      "note third",
    ]);
    await database.close();
  });
});

Deno.test("a sandbox clock advance answers only after a job another run claimed has recorded its answer", async () => {
  await withTempDir(async (dir) => {
    const database = await seedRailLog(dir);
    await database.writer.write((tx) =>
      scheduleJob(tx, { companyId: "co_1", kind: "rail", subjectId: "a", dueAt: NOW + 1000 }, NOW)
    );
    const log: string[] = [];
    let release!: () => void;
    const released = new Promise<void>((resolve) => release = resolve);
    let started!: () => void;
    const running = new Promise<void>((resolve) => started = resolve);
    const rail = railJob(() => database, log, async (reference) => {
      started();
      await released;
      return `rail_${reference}`;
    });
    const clock = new FakeClock(NOW);
    // The background sweep claims the job and is in the rail's call when the advance comes.
    const sweep = runDueJobs(database, "co_1", NOW + 1000, { rail }, { clock });
    await running;
    let answered = false;
    const advance = advanceSandboxClock(database, "co_1", 10, NOW, { rail }, { clock })
      .then((advanced) => {
        answered = true;
        return advanced;
      });
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(answered, false, "the advance waits for the claimed job");
    release();
    await sweep;
    await advance;
    assert.deepEqual(log, ["prepare a", "call ref_a", "record a rail_ref_a"]);
    await database.close();
  });
});

Deno.test("a run whose call outlived its lease records nothing once another run has claimed the job", async () => {
  await withTempDir(async (dir) => {
    const database = await seedRailLog(dir);
    await database.writer.write((tx) =>
      scheduleJob(tx, { companyId: "co_1", kind: "rail", subjectId: "a", dueAt: NOW }, NOW)
    );
    const held = () => {
      let release!: () => void;
      const released = new Promise<void>((resolve) => release = resolve);
      let started!: () => void;
      const running = new Promise<void>((resolve) => started = resolve);
      return { release, released, started, running };
    };
    const slowCall = held();
    const secondCall = held();
    let callsMade = 0;
    const rail = railJob(() => database, [], async (reference) => {
      const call = ++callsMade === 1 ? slowCall : secondCall;
      call.started();
      await call.released;
      return `${call === slowCall ? "slow" : "second"}_${reference}`;
    });
    const clock = new FakeClock(NOW);
    await capturingStderr(async (lines) => {
      const slow = runDueJobs(database, "co_1", NOW, { rail }, { clock });
      await slowCall.running;
      clock.advance(60_000);
      const second = runDueJobs(database, "co_1", NOW, { rail }, { clock });
      await secondCall.running;
      // The slow answer arrives while the second run's claim holds the job.
      slowCall.release();
      assert.equal(await slow, 0, "the slow run's answer is not recorded");
      secondCall.release();
      assert.equal(await second, 1);
      assert.deepEqual(lines.map((line) => [line.level, line.msg]), [
        ["warn", "job answer not recorded: its claim ended and another run took the job"],
      ]);
    });
    assert.deepEqual(await railLog(database), [
      "prepared a",
      "prepared a",
      "recorded a second_ref_a",
    ]);
    const done = await jobRow(database, "a");
    assert.deepEqual([done.doneAt, done.attempts, done.leaseUntil], [NOW, 2, null]);
    await database.close();
  });
});

Deno.test("a batch's jobs are read open and marked done by primary key, whatever the backlog of open jobs", async () => {
  await withTempDir(async (dir) => {
    const database = await seedCompany(dir);
    await database.writer.write((tx) =>
      tx.execute(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
         INSERT INTO scheduled_jobs (id, company_id, kind, subject_id, due_at, created_at)
         SELECT 'job_' || i, 'co_1', 'payout.offer', 'po_' || i, ${NOW} + i, ${NOW} FROM n`,
      )
    );
    const batch = Array.from({ length: JOBS_PER_BATCH_MAX }, (_, i) => ({
      id: `job_${i + 1}`,
      dueAt: NOW + i + 1,
    }));
    const statements: InStatement[] = [];
    const open = await database.writer.write(async (tx) => {
      const seeing = {
        execute(statement: InStatement) {
          statements.push(statement);
          return tx.execute(statement);
        },
      } as WriteTx;
      const open = await openJobIds(seeing, [...batch.map((job) => job.id), "job_missing"]);
      await markJobsDone(seeing, batch);
      return open;
    });
    assert.deepEqual([...open].sort(), batch.map((job) => job.id).sort());
    const counts = await database.readClient.execute(
      "SELECT count(*) AS done, sum(attempts) AS attempts FROM scheduled_jobs WHERE done_at IS NOT NULL",
    );
    assert.deepEqual({ ...counts.rows[0] }, {
      done: JOBS_PER_BATCH_MAX,
      attempts: JOBS_PER_BATCH_MAX,
    });
    assert.equal(statements.length, 2);
    for (const statement of statements) {
      const { sql, args } = typeof statement === "string"
        ? { sql: statement, args: [] }
        : statement;
      const plan = await database.readClient.execute({ sql: `EXPLAIN QUERY PLAN ${sql}`, args });
      const details = plan.rows.map((row) => String(row.detail));
      assert.deepEqual(
        details,
        ["SEARCH scheduled_jobs USING INDEX sqlite_autoindex_scheduled_jobs_1 (id=?)"],
        sql,
      );
    }
    await database.close();
  });
});
