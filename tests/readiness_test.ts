/**
 * /readyz tells the truth: 503 with a reason while writes fail on a full disk, while migrations are
 * pending or while a worker loop is stuck, and 200 again by itself once a write succeeds; /healthz
 * stays a liveness probe; /metrics has a sample per reason.
 */
import assert from "node:assert/strict";
import { Metrics } from "../lib/platform/metrics.ts";
import { createApp } from "../routes/app.ts";
import { type HttpFixture, withHttpFixture } from "./http_fixture.ts";

const v1 = (f: HttpFixture, app: ReturnType<typeof createApp>, id: string) =>
  app.request("/v1/payees", {
    method: "POST",
    headers: {
      Authorization: `Bearer ${f.cast.acmeAutoKeyTest}`,
      "Content-Type": "application/json",
    },
    body: JSON.stringify({ id, name: "N".repeat(200), email: `${id}@example.test` }),
  });

async function quietly<T>(fn: () => T | Promise<T>): Promise<T> {
  const original = console.error;
  console.error = () => {};
  try {
    return await fn();
  } finally {
    console.error = original;
  }
}

/**
 * Fills the test database: SQLite's own limit on its pages, set at what it holds, makes every
 * write that needs a page fail with SQLITE_FULL ("database or disk is full"), as a full disk does;
 * payees are created until one fails with 500.
 */
async function fillTestDatabase(f: HttpFixture, app: ReturnType<typeof createApp>) {
  await f.deps.databases.test.writer.write(async (tx) => {
    const pages = Number((await tx.execute("PRAGMA page_count")).rows[0].page_count);
    await tx.execute(`PRAGMA max_page_count = ${pages}`);
  });
  let status = 201;
  for (let i = 0; i < 2000 && status !== 500; i++) {
    status = (await quietly(() => v1(f, app, `full-${i}`))).status;
  }
  assert.equal(status, 500, "writes fail once the pages are used up");
}

const sample = (text: string, name: string) =>
  Object.fromEntries(
    [...text.matchAll(new RegExp(`^${name}\\{([^}]*)\\} (\\d+)$`, "gm"))].map((m) => [m[1], m[2]]),
  );

Deno.test("a full disk: /readyz 503 disk_full while writes fail, /healthz 200, and 200 again by itself once writes fit", async () => {
  await withHttpFixture(async (f) => {
    const app = createApp({ ...f.deps, metrics: new Metrics() });
    const ready = await app.request("/readyz");
    assert.deepEqual([ready.status, await ready.json()], [200, {
      status: "ready",
      databases: { test: "ok", live: "ok" },
    }]);

    const writer = f.deps.databases.test.writer;
    await fillTestDatabase(f, app);

    const full = await app.request("/readyz");
    assert.equal(full.status, 503);
    const body = await full.json() as { databases: Record<string, string> };
    assert.match(
      body.databases.test,
      /^disk_full: writes fail since \d{4}-\d\d-\d\dT[\d:.]+Z: .*database or disk is full/,
    );
    assert.deepEqual(body, {
      status: "not_ready",
      reason: "disk_full",
      reasons: ["disk_full"],
      databases: { test: body.databases.test, live: "ok" },
    });
    assert.deepEqual(await (await app.request("/healthz")).json(), { status: "ok" });
    const metrics = await (await app.request("/metrics")).text();
    assert.deepEqual(sample(metrics, "readiness_not_ready"), {
      'reason="writes_failing"': "0",
      'reason="disk_full"': "1",
      'reason="migrations_pending"': "0",
      'reason="worker_stalled"': "0",
    });
    assert.ok(
      Number(sample(metrics, "db_storage_failures")['environment="test",reason="disk_full"']) >= 1,
    );

    // Asked again within the probe interval: still not ready (the probe's write fails too).
    assert.equal((await app.request("/readyz")).status, 503);

    // Room again: the next probe's write commits and readiness comes back without a restart.
    await writer.write((tx) => tx.execute("PRAGMA max_page_count = 1073741823"));
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const back = await app.request("/readyz");
    assert.deepEqual([back.status, await back.json()], [200, {
      status: "ready",
      databases: { test: "ok", live: "ok" },
    }]);
    assert.equal((await v1(f, app, "after")).status, 201);
  });
});

Deno.test("a write that succeeds clears the failure at once", async () => {
  await withHttpFixture(async (f) => {
    const app = createApp({ ...f.deps, metrics: new Metrics() });
    const writer = f.deps.databases.test.writer;
    await fillTestDatabase(f, app);
    assert.equal(writer.failure?.reason, "disk_full");
    await writer.write((tx) => tx.execute("PRAGMA max_page_count = 1073741823"));
    assert.equal((await v1(f, app, "after")).status, 201);
    assert.equal(writer.failure, null);
    assert.equal((await app.request("/readyz")).status, 200);
  });
});

Deno.test("pending migrations and a stuck worker loop each make /readyz 503 with their reason", async () => {
  await withHttpFixture(async (f) => {
    const metrics = new Metrics();
    const app = createApp({ ...f.deps, metrics });
    metrics.workerSweepStarted("scheduler");
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const stalled = await app.request("/readyz");
    assert.deepEqual([stalled.status, await stalled.json()], [503, {
      status: "not_ready",
      reason: "worker_stalled",
      reasons: ["worker_stalled"],
      databases: { test: "ok", live: "ok" },
      stalled_workers: ["scheduler"],
    }]);
    metrics.workerSwept("scheduler", true);
    assert.equal((await app.request("/readyz")).status, 200);

    await f.deps.databases.live.writer.write((tx) =>
      tx.execute(
        "DELETE FROM __drizzle_migrations WHERE rowid = (SELECT max(rowid) FROM __drizzle_migrations)",
      )
    );
    const pending = await app.request("/readyz");
    assert.deepEqual([pending.status, await pending.json()], [503, {
      status: "not_ready",
      reason: "migrations_pending",
      reasons: ["migrations_pending"],
      databases: { test: "ok", live: "1 migrations not applied" },
    }]);
    assert.equal((await app.request("/healthz")).status, 200);
  }, { WORKER_STALL_MS: "1000" });
});
