/**
 * Scheduled jobs across nodes on one libSQL primary (issue 22): two in-process nodes (own
 * writers) on the Hrana contract server run the same due jobs. A unit job's effect commits in the
 * unit that marks it done, so one run wins; an external job is claimed with a lease in one write,
 * and its answer commits only under the claim that called: a node that dies holding a claim
 * gives the job up when the lease ends, another node runs it, and the late answer of the first
 * commits nothing. Leases here are 500 ms.
 */
import assert from "node:assert/strict";
import type { Database } from "../db/client.ts";
import { externalJob, type JobHandlers, runDueJobs } from "../db/scheduler.ts";
import { scheduleJob } from "../db/scheduler_store.ts";
import type { WriteTx } from "../db/writer.ts";
import { FakeClock } from "../lib/platform/clock.ts";
import { migratePrimary, openNodeDatabase, startPrimary } from "./node_helpers.ts";

const COMPANY = "co_jobs";
const LEASE_MS = 500;

async function withTwoNodes(fn: (a: Database, b: Database) => Promise<void>): Promise<void> {
  const primary = await startPrimary();
  try {
    await migratePrimary(primary);
    const a = await openNodeDatabase(primary, "live");
    const b = await openNodeDatabase(primary, "live");
    try {
      await a.writer.write(async (tx) => {
        await tx.execute({
          sql:
            "INSERT INTO companies (id, name, tin, created_at) VALUES (?, 'Jobs', '555555555', 0)",
          args: [COMPANY],
        });
        // The effect each job commits, by node: counted below.
        await tx.execute("CREATE TABLE job_effects (job_id TEXT NOT NULL, node TEXT NOT NULL)");
      });
      await fn(a, b);
    } finally {
      await a.close();
      await b.close();
    }
  } finally {
    await primary.close();
  }
}

const effect = (tx: WriteTx, jobId: string, node: string) =>
  tx.execute({ sql: "INSERT INTO job_effects (job_id, node) VALUES (?, ?)", args: [jobId, node] });

async function effectsByJob(database: Database): Promise<Map<string, string[]>> {
  const { rows } = await database.readClient.execute("SELECT job_id, node FROM job_effects");
  const byJob = new Map<string, string[]>();
  for (const row of rows) {
    byJob.set(String(row.job_id), [...(byJob.get(String(row.job_id)) ?? []), String(row.node)]);
  }
  return byJob;
}

Deno.test("two nodes sweeping the same 60 due unit jobs at once: each job's effect commits once", async () => {
  await withTwoNodes(async (a, b) => {
    const ids = await a.writer.write(async (tx) => {
      const ids: string[] = [];
      for (let i = 0; i < 60; i++) {
        ids.push(
          await scheduleJob(tx, {
            companyId: COMPANY,
            kind: "test.unit",
            subjectId: `s${i}`,
            dueAt: i,
          }, 0),
        );
      }
      return ids;
    });
    const handlers = (node: string): JobHandlers => ({
      "test.unit": (tx, job) => effect(tx, job.id, node).then(() => {}),
    });
    const clock = new FakeClock(1000);
    const [ranOnA, ranOnB] = await Promise.all([
      runDueJobs(a, COMPANY, 1000, handlers("a"), { perBatch: 8, clock }),
      runDueJobs(b, COMPANY, 1000, handlers("b"), { perBatch: 8, clock }),
    ]);
    assert.equal(ranOnA + ranOnB, 60, "each job counted by the one run that did it");
    const effects = await effectsByJob(a);
    assert.equal(effects.size, 60);
    for (const id of ids) assert.equal(effects.get(id)?.length, 1, `job ${id}: one effect`);
    const { rows } = await a.readClient.execute(
      "SELECT count(*) AS n FROM scheduled_jobs WHERE done_at IS NOT NULL AND attempts = 1 AND error IS NULL",
    );
    assert.equal(Number(rows[0].n), 60);
  });
});

Deno.test("an external job claimed by a node that dies is run by another after the lease; the first node's late answer commits nothing", async () => {
  await withTwoNodes(async (a, b) => {
    const jobId = await a.writer.write((tx) =>
      scheduleJob(tx, { companyId: COMPANY, kind: "test.call", subjectId: "s", dueAt: 0 }, 0)
    );
    const calls: string[] = [];
    let releaseA!: () => void;
    const aStuck = new Promise<void>((resolve) => releaseA = resolve);
    let aCalled!: () => void;
    const aHasCalled = new Promise<void>((resolve) => aCalled = resolve);
    const handlers = (node: string): JobHandlers => ({
      "test.call": externalJob<string, string>({
        leaseMs: LEASE_MS,
        prepare: () => Promise.resolve(`ref-${jobId}`),
        call: async (reference) => {
          calls.push(`${node}:${reference}`);
          if (node === "a") {
            aCalled();
            await aStuck; // hung (or dead) past its lease
          }
          return `answer-from-${node}`;
        },
        record: (tx, job) => effect(tx, job.id, node).then(() => {}),
      }),
    });

    const clockA = new FakeClock(1000);
    const runA = runDueJobs(a, COMPANY, 1000, handlers("a"), { clock: clockA });
    await aHasCalled;
    // Within A's lease, B finds nothing to run.
    const clockB = new FakeClock(1000 + LEASE_MS - 1);
    assert.equal(await runDueJobs(b, COMPANY, 2000, handlers("b"), { clock: clockB }), 0);
    // Once the lease ends, B claims the job, calls with the same reference and records.
    clockB.set(1000 + LEASE_MS);
    assert.equal(await runDueJobs(b, COMPANY, 2000, handlers("b"), { clock: clockB }), 1);
    // A's answer comes back late: its claim is no longer the job's, so it commits nothing.
    releaseA();
    assert.equal(await runA, 0);

    assert.deepEqual(calls, [`a:ref-${jobId}`, `b:ref-${jobId}`]);
    assert.deepEqual([...(await effectsByJob(a)).entries()], [[jobId, ["b"]]]);
    const { rows } = await a.readClient.execute({
      sql: "SELECT done_at, lease_until, attempts, error FROM scheduled_jobs WHERE id = ?",
      args: [jobId],
    });
    assert.deepEqual({ ...rows[0] }, { done_at: 0, lease_until: null, attempts: 2, error: null });
  });
});
