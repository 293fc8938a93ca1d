/**
 * The sandbox seed on a shared libSQL primary: `--dev` nodes started together on an empty primary
 * seed it once, decided by the seed lock row in the test database; every node writes the same
 * credentials (its own base URL) to its own DATA_DIR. A lock held by a live seeder makes a node
 * wait (bounded), a lock whose lease passed is taken over, and sealed credentials that this
 * node's ENCRYPTION_KEY cannot open stop its start.
 */
import assert from "node:assert/strict";
import type { Database } from "../db/client.ts";
import type { Environment } from "../lib/platform/config.ts";
import { systemClock } from "../lib/platform/clock.ts";
import { SecretBox } from "../lib/platform/crypto.ts";
import { auditKeysFrom, useAuditKeys } from "../lib/audit/anchor.ts";
import {
  loadOrSeedSandbox,
  SANDBOX_SEED_LEASE_MS,
  type SandboxCredentials,
  SandboxSeedError,
} from "../lib/sandbox/seed.ts";
import {
  migratePrimary,
  openNodeDatabase,
  type Primary,
  primaryClient,
  SHARED_SECRETS,
  spawnNode,
  startPrimary,
  waitReady,
} from "./node_helpers.ts";

/** Rows the seed writes, per environment: what a second seed would double. */
async function seededCounts(primary: Primary): Promise<Record<Environment, unknown>> {
  const counts = {} as Record<Environment, unknown>;
  for (const environment of ["test", "live"] as const) {
    const client = primaryClient(primary, environment);
    try {
      const { rows } = await client.execute(
        `SELECT (SELECT count(*) FROM companies) AS companies,
                (SELECT count(*) FROM users) AS users,
                (SELECT count(*) FROM business_lines) AS lines,
                (SELECT count(*) FROM fundings) AS fundings,
                (SELECT count(*) FROM operators) AS operators`,
      );
      counts[environment] = Object.fromEntries(
        Object.entries(rows[0]).map(([name, value]) => [name, Number(value)]),
      );
    } finally {
      client.close();
    }
  }
  return counts;
}

/** What one seed writes: three lines funded in test, the operator in live. */
const ONE_SEED = {
  test: { companies: 2, users: 3, lines: 3, fundings: 3, operators: 0 },
  live: { companies: 2, users: 3, lines: 3, fundings: 0, operators: 4 },
};

function withoutBaseUrl(credentials: SandboxCredentials): Omit<SandboxCredentials, "base_url"> {
  const { base_url: _, ...rest } = credentials;
  return rest;
}

// The seed appends audit rows, chained with the key a node derives from its ENCRYPTION_KEY.
useAuditKeys(auditKeysFrom(btoa("k".repeat(32))));

/** An in-process node: its own database handles on the primary and its own DATA_DIR. */
async function openNode(primary: Primary) {
  const databases: Record<Environment, Database> = {
    test: await openNodeDatabase(primary, "test"),
    live: await openNodeDatabase(primary, "live"),
  };
  const dataDir = await Deno.makeTempDir({ prefix: "disbursement-node-" });
  return {
    databases,
    config: { dataDir, baseUrl: `http://node-${crypto.randomUUID()}.test` },
    async close() {
      await databases.test.close();
      await databases.live.close();
      await Deno.remove(dataDir, { recursive: true });
    },
  };
}

Deno.test("two --dev nodes started together on an empty primary seed it once and both write the same credentials", async () => {
  const primary = await startPrimary();
  try {
    await migratePrimary(primary);
    const nodes = await Promise.all([spawnNode(primary), spawnNode(primary)]);
    try {
      await Promise.all(nodes.map((node) => waitReady(node)));
      assert.deepEqual(await seededCounts(primary), ONE_SEED);
      const files = await Promise.all(nodes.map(async (node) => {
        const file = `${node.dataDir}/sandbox-credentials.json`;
        assert.equal((await Deno.stat(file)).mode! & 0o777, 0o600, "the credentials are private");
        return JSON.parse(await Deno.readTextFile(file)) as SandboxCredentials;
      }));
      assert.deepEqual(files.map((file) => file.base_url), nodes.map((node) => node.base));
      assert.deepEqual(withoutBaseUrl(files[0]), withoutBaseUrl(files[1]));
      assert.equal(files[0].operator?.email, "admin@sandbox.test");

      // Each node's file works on both nodes: one seed, one set of keys.
      for (const [index, node] of nodes.entries()) {
        const [acme] = files[index].companies;
        for (const other of nodes) {
          const balance = await fetch(`${other.base}/v1/ledgers/${acme.lines[0].line}/balance`, {
            headers: { Authorization: `Bearer ${acme.lines[0].key_test}` },
          });
          assert.equal(balance.status, 200, `${node.base}'s key on ${other.base}`);
          assert.equal((await balance.json()).available, 1_000_000);
          const login = await fetch(`${other.base}/api/authenticate`, {
            method: "POST",
            headers: {
              Authorization: `Basic ${btoa(`${acme.tin}:${acme.users[0].api_key_test}`)}`,
            },
          });
          assert.equal(login.status, 200);
          await login.body?.cancel();
        }
      }
      const client = primaryClient(primary, "test");
      const { rows } = await client.execute(
        "SELECT count(*) AS n, count(credentials_sealed) AS sealed FROM __sandbox_seed",
      );
      client.close();
      assert.deepEqual([Number(rows[0].n), Number(rows[0].sealed)], [1, 1]);
    } finally {
      await Promise.all(nodes.map((node) => node.stop()));
    }
  } finally {
    await primary.close();
  }
});

Deno.test("a seed lock held by a live seeder makes a node wait, then refuse; a lock whose lease passed is taken over", async () => {
  const primary = await startPrimary();
  await migratePrimary(primary);
  const node = await openNode(primary);
  const secretBox = await SecretBox.fromBase64Key(SHARED_SECRETS.ENCRYPTION_KEY);
  try {
    const client = primaryClient(primary, "test");
    const leaseUntil = Date.now() + SANDBOX_SEED_LEASE_MS;
    await client.execute({
      sql: "INSERT INTO __sandbox_seed (id, holder, lease_until) VALUES (1, 'seeder-a', ?)",
      args: [leaseUntil],
    });
    const options = { clock: systemClock, secretBox, holder: "seeder-b", waitMs: 600 };
    await assert.rejects(
      loadOrSeedSandbox(node.databases, node.config, options),
      (error: Error) => {
        assert.ok(error instanceof SandboxSeedError);
        assert.equal(
          error.message,
          `the sandbox seed lock of DATABASE_URL_TEST is held by seeder-a until ${
            new Date(leaseUntil).toISOString()
          } and no seed was recorded after 3 polls of 200 ms: another node seeds; start this ` +
            "node again after it",
        );
        return true;
      },
    );
    assert.deepEqual(await seededCounts(primary), {
      test: { companies: 0, users: 0, lines: 0, fundings: 0, operators: 0 },
      live: { companies: 0, users: 0, lines: 0, fundings: 0, operators: 0 },
    });

    // seeder-a died: its lease passes, and the next node seeds.
    await client.execute({ sql: "UPDATE __sandbox_seed SET lease_until = ?", args: [Date.now()] });
    const credentials = await loadOrSeedSandbox(node.databases, node.config, options);
    assert.deepEqual(await seededCounts(primary), ONE_SEED);
    const { rows } = await client.execute("SELECT holder, credentials_sealed FROM __sandbox_seed");
    assert.equal(rows[0].holder, "seeder-b");
    assert.deepEqual(
      JSON.parse(await secretBox.openText(String(rows[0].credentials_sealed))),
      credentials,
    );
    client.close();
  } finally {
    await node.close();
    await primary.close();
  }
});

Deno.test("in-process nodes racing on an empty primary: one seed; a node with another ENCRYPTION_KEY is refused", async () => {
  const primary = await startPrimary();
  await migratePrimary(primary);
  const nodes = await Promise.all([openNode(primary), openNode(primary), openNode(primary)]);
  const secretBox = await SecretBox.fromBase64Key(SHARED_SECRETS.ENCRYPTION_KEY);
  try {
    const loaded = await Promise.all(
      nodes.map((node) =>
        loadOrSeedSandbox(node.databases, node.config, { clock: systemClock, secretBox })
      ),
    );
    assert.deepEqual(await seededCounts(primary), ONE_SEED);
    for (const [index, credentials] of loaded.entries()) {
      assert.ok(credentials);
      assert.equal(credentials.base_url, nodes[index].config.baseUrl);
      assert.deepEqual(withoutBaseUrl(credentials), withoutBaseUrl(loaded[0]!));
      assert.deepEqual(
        JSON.parse(
          await Deno.readTextFile(`${nodes[index].config.dataDir}/sandbox-credentials.json`),
        ),
        credentials,
      );
    }

    const otherKey = await SecretBox.fromBase64Key(btoa("o".repeat(32)));
    await assert.rejects(
      loadOrSeedSandbox(nodes[0].databases, nodes[0].config, {
        clock: systemClock,
        secretBox: otherKey,
      }),
      (error: Error) => {
        assert.ok(error instanceof SandboxSeedError);
        assert.match(
          error.message,
          /^the sandbox credentials another node sealed in DATABASE_URL_TEST do not open with this node's ENCRYPTION_KEY \(.+\): give every node the same ENCRYPTION_KEY and JWT_SECRET$/,
        );
        return true;
      },
    );
    assert.deepEqual(await seededCounts(primary), ONE_SEED);
  } finally {
    await Promise.all(nodes.map((node) => node.close()));
    await primary.close();
  }
});
