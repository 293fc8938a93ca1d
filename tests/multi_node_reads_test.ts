/**
 * Reads, the sandbox clock and key revocation across nodes on one libSQL primary (issue 22): two
 * in-process apps, each with its own databases handles, credential cache and read cache, on the
 * Hrana contract server. A node reads the primary, so a GET on node B right after a write on node
 * A shows it (read-your-writes); the /v1 read cache keeps nothing on a shared database; a key
 * revoked through node A is refused on node B once B's CREDENTIAL_CACHE_TTL_MS has passed.
 */
import assert from "node:assert/strict";
import { createApp } from "../routes/app.ts";
import type { AppDeps } from "../routes/context.ts";
import { jobHandlersByEnvironment } from "../lib/payouts/runtime.ts";
import { runtimeSettingsOf } from "../lib/payouts/settings.ts";
import { CredentialCache } from "../lib/identity/credential_cache.ts";
import { revokeKey } from "../lib/identity/admin.ts";
import { fundAcmeAuto, type HttpFixture, openHttpFixture } from "./http_fixture.ts";
import { migratePrimary, openNodeDatabase, type Primary, startPrimary } from "./node_helpers.ts";

/** Node B's CREDENTIAL_CACHE_TTL_MS in these tests. */
const CACHE_TTL_MS = 1000;

interface TwoNodes {
  a: HttpFixture;
  b: { app: ReturnType<typeof createApp>; deps: AppDeps };
}

async function withTwoNodes(fn: (nodes: TwoNodes) => Promise<void>): Promise<void> {
  const primary: Primary = await startPrimary();
  try {
    await migratePrimary(primary);
    // Node A: the fixture (it inserts the cast once, through A).
    const a = await openHttpFixture(
      { RATE_LIMIT_RPS: "0" },
      { openDatabase: (_dir, environment) => openNodeDatabase(primary, environment) },
    );
    const databases = {
      test: await openNodeDatabase(primary, "test"),
      live: await openNodeDatabase(primary, "live"),
    };
    const deps: AppDeps = {
      ...a.deps,
      databases,
      jobHandlers: jobHandlersByEnvironment(
        runtimeSettingsOf(a.deps.config),
        databases,
        a.deps.secretBox,
      ),
      lineKeyCache: new CredentialCache({ ttlMs: CACHE_TTL_MS, entriesMax: 100 }),
    };
    try {
      await fn({ a, b: { app: createApp(deps), deps } });
    } finally {
      await databases.test.close();
      await databases.live.close();
      await a.close();
    }
  } finally {
    await primary.close();
  }
}

function call(
  app: { request: (path: string, init: RequestInit) => Response | Promise<Response> },
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<Response> {
  return Promise.resolve(app.request(path, {
    method,
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  }));
}

Deno.test("a GET on node B right after a write on node A shows it; the /v1 read cache keeps nothing on a shared primary", async () => {
  await withTwoNodes(async ({ a, b }) => {
    const key = a.cast.acmeAutoKeyTest;
    await fundAcmeAuto(a, 100_000);
    const payee = await call(a.app, key, "POST", "/v1/payees", {
      id: "noaction",
      email: "noaction@example.test",
    });
    assert.equal(payee.status, 201);
    await payee.body?.cancel();
    const created = await call(a.app, key, "POST", "/v1/disbursements", {
      amount: 250.5,
      claim_id: "CLM-1",
      payee: { id: "noaction" },
      modalities: ["ach"],
    });
    assert.equal(created.status, 201);
    const body = await created.json() as Record<string, unknown>;

    const onB = await call(b.app, key, "GET", `/v1/disbursements/${body.id}`);
    assert.equal(onB.status, 200);
    assert.deepEqual(await onB.json(), body);

    const canceled = await call(a.app, key, "POST", `/v1/disbursements/${body.id}/cancel`);
    assert.equal(canceled.status, 200);
    await canceled.body?.cancel();
    // B read it a moment ago: a copy kept then would now be stale.
    const again = await call(b.app, key, "GET", `/v1/disbursements/${body.id}`);
    assert.equal(((await again.json()) as { status: string }).status, "canceled");
    const balance = await call(b.app, key, "GET", "/v1/ledgers/auto/balance");
    const amounts = await balance.json() as Record<string, number>;
    assert.deepEqual([amounts.available, amounts.reserved], [1000, 0]);

    for (const node of [a.deps, b.deps]) {
      assert.equal(node.databases.test.shared, true);
      assert.equal(node.databases.test.disbursementReads.size, 0);
    }
  });
});

Deno.test("the sandbox clock advanced on node A is the clock node B reads and runs on", async () => {
  await withTwoNodes(async ({ a, b }) => {
    const key = a.cast.acmeAutoKeyTest;
    const advanced = await call(a.app, key, "POST", "/v1/sandbox/clock/advance", {
      seconds: 86_400,
    });
    assert.equal(advanced.status, 200);
    const onA = await advanced.json() as { now: string };
    const onB = await call(b.app, key, "GET", "/v1/sandbox/clock");
    assert.deepEqual(await onB.json(), {
      object: "sandbox_clock",
      now: onA.now,
      ahead_seconds: 86_400,
    });
  });
});

Deno.test("a key revoked through node A is refused on node B within B's credential cache TTL", async () => {
  await withTwoNodes(async ({ a, b }) => {
    const key = a.cast.acmeAutoKeyTest;
    const clock = a.clock; // both nodes' clock
    const first = await call(b.app, key, "GET", "/v1/ledgers/auto/balance");
    assert.equal(first.status, 200, "B now holds the key in its cache");
    await first.body?.cancel();

    const revoked = await revokeKey(a.deps.databases, { key }, clock.now());
    assert.equal(revoked.ok, true);
    const onA = await call(a.app, key, "GET", "/v1/ledgers/auto/balance");
    assert.equal(onA.status, 401, "A reads the key afresh");
    await onA.body?.cancel();

    // The documented staleness: B may still accept it until its cached copy is CACHE_TTL_MS old.
    clock.advance(CACHE_TTL_MS - 1);
    const stale = await call(b.app, key, "GET", "/v1/ledgers/auto/balance");
    assert.equal(stale.status, 200);
    await stale.body?.cancel();

    clock.advance(1);
    const refused = await call(b.app, key, "GET", "/v1/ledgers/auto/balance");
    assert.equal(refused.status, 401);
    assert.equal(((await refused.json()) as { detail: string }).detail, "the line key was revoked");
  });
});
