/**
 * The one worker loop: a sweep that throws is caught, logged as one JSON line with the worker's
 * name and counted in /metrics, and the next tick sweeps again; one sweep at a time; stop drains.
 * Deno's test sanitizers fail any of these tests on an unhandled rejection.
 */
import assert from "node:assert/strict";
import { Scheduler } from "../db/scheduler.ts";
import { scheduleJob } from "../db/scheduler_store.ts";
import { WorkerLoop } from "../db/worker_loop.ts";
import type { Database } from "../db/client.ts";
import { FakeClock } from "../lib/platform/clock.ts";
import { Metrics } from "../lib/platform/metrics.ts";
import { openTempDatabase, withTempDir } from "./helpers.ts";

const NOW = Date.UTC(2026, 0, 5, 12);

/** The samples of one metric in the /metrics text, by their labels. */
function samples(metrics: Metrics, name: string): Record<string, number> {
  const found: Record<string, number> = {};
  for (const line of metrics.render({}).split("\n")) {
    const match = new RegExp(`^${name}\\{(.*)\\} (\\d+)$`).exec(line);
    if (match) found[match[1]] = Number(match[2]);
  }
  return found;
}

/** Lines written to stderr while `fn` runs, parsed as JSON; `onLine` sees each as it is written. */
async function capturingStderr<T>(
  fn: (lines: Record<string, unknown>[]) => Promise<T>,
  onLine: (line: Record<string, unknown>) => void = () => {},
): Promise<T> {
  const lines: Record<string, unknown>[] = [];
  const original = console.error;
  console.error = (text: unknown) => {
    const line = JSON.parse(String(text));
    lines.push(line);
    onLine(line);
  };
  try {
    return await fn(lines);
  } finally {
    console.error = original;
  }
}

async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

Deno.test("a scheduler sweep on a closed database is logged once and counted; the process stays up and the next tick runs the job", async () => {
  await withTempDir(async (dir) => {
    const test = await openTempDatabase(dir, "test");
    let live = await openTempDatabase(dir, "live");
    await live.writer.write(async (tx) => {
      await tx.execute(
        "INSERT INTO companies (id, name, tin, created_at) VALUES ('co_1', 'Acme', '123456789', 0)",
      );
      await scheduleJob(tx, { companyId: "co_1", kind: "note", subjectId: "n", dueAt: NOW }, NOW);
    });
    await live.close();
    // The scheduler reads its databases at every sweep, so the live one can come back.
    const databases: Record<"test" | "live", Database> = { test, live };
    const ran: string[] = [];
    const note = (_tx: unknown, job: { subjectId: string }) => {
      ran.push(job.subjectId);
      return Promise.resolve();
    };
    const metrics = new Metrics();
    const scheduler = new Scheduler(
      databases,
      { test: { note }, live: { note } },
      new FakeClock(NOW),
      { metrics },
    );
    // Opened beforehand and put back as the failure is logged, so the very next tick finds it
    // whatever the machine's load (reopening after the failure raced a 50 ms tick).
    const reopened = await openTempDatabase(dir, "live");
    await capturingStderr(async (lines) => {
      scheduler.start(50);
      await until(() => ran.length === 1, "the next tick ran the job");
      await scheduler.stop();
      assert.equal(lines.length, 1, JSON.stringify(lines));
      assert.deepEqual(Object.keys(lines[0]), ["level", "msg", "worker", "error"]);
      assert.deepEqual([lines[0].level, lines[0].msg, lines[0].worker], [
        "error",
        "worker sweep failed",
        "scheduler",
      ]);
      assert.match(String(lines[0].error), /clos/i);
    }, () => {
      databases.live = live = reopened;
    });
    assert.deepEqual(ran, ["n"]);
    assert.deepEqual(samples(metrics, "worker_sweep_errors_total"), { 'worker="scheduler"': 1 });
    assert.ok(samples(metrics, "worker_sweeps_total")['worker="scheduler"'] >= 2);
    const { rows } = await live.readClient.execute("SELECT done_at, error FROM scheduled_jobs");
    assert.deepEqual(rows.map((row) => [row.done_at, row.error]), [[NOW, null]]);
    await test.close();
    await live.close();
  });
});

Deno.test("a sweep function that throws is logged with the worker's name and counted, and the loop goes on ticking", async () => {
  const metrics = new Metrics();
  const logged: Record<string, unknown>[] = [];
  let sweeps = 0;
  const loop = new WorkerLoop({
    name: "flaky",
    intervalMs: 5,
    metrics,
    log: (entry) => logged.push(entry),
    sweep: () => {
      sweeps++;
      return sweeps === 1 ? Promise.reject(new Error("disk I/O error")) : Promise.resolve();
    },
  });
  loop.start();
  await until(() => sweeps >= 3, "three sweeps ran");
  await loop.stop();
  assert.deepEqual(logged, [
    { level: "error", msg: "worker sweep failed", worker: "flaky", error: "disk I/O error" },
  ]);
  assert.deepEqual(samples(metrics, "worker_sweep_errors_total"), { 'worker="flaky"': 1 });
  assert.equal(samples(metrics, "worker_sweeps_total")['worker="flaky"'], sweeps);
  const after = sweeps;
  await new Promise((resolve) => setTimeout(resolve, 30));
  assert.equal(sweeps, after, "no tick after stop");
});

Deno.test("stop waits for the sweep in flight; a tick during a sweep joins it instead of starting another", async () => {
  let release!: () => void;
  const released = new Promise<void>((resolve) => release = resolve);
  let started = 0;
  let finished = 0;
  const loop = new WorkerLoop({
    name: "slow",
    intervalMs: 60_000,
    sweep: async () => {
      started++;
      await released;
      finished++;
    },
  });
  const first = loop.tick();
  const second = loop.tick();
  assert.equal(started, 1, "one sweep at a time");
  let stopped = false;
  const stopping = loop.stop().then(() => stopped = true);
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(stopped, false, "stop waits while the sweep runs");
  release();
  await stopping;
  assert.equal(finished, 1, "the sweep finished before stop returned");
  await Promise.all([first, second]);
  await loop.tick();
  assert.equal(started, 1, "no sweep after stop");
});
