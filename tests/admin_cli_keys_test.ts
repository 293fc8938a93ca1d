/**
 * key:revoke and key:rotate of a company key mirrored in both databases under a different id in
 * each (as the HTTP fixture inserts it), run as the CLI runs them (runAdminCommand): each row is
 * changed by its own id.
 */
import assert from "node:assert/strict";
import { runAdminCommand } from "../lib/admin/commands.ts";
import type { CommandRequest } from "../lib/admin/command_kit.ts";
import { runtimeSettingsOf } from "../lib/payouts/settings.ts";
import { sha256Hex } from "../lib/platform/keys.ts";
import type { Environment } from "../lib/platform/config.ts";
import { type HttpFixture, withHttpFixture } from "./http_fixture.ts";
import { makeOperator, type TestOperator } from "./operator_helpers.ts";
import { api } from "./api_helpers.ts";

function run(f: HttpFixture, operator: TestOperator, name: string, flags: Record<string, string>) {
  const request: CommandRequest = {
    databases: f.deps.databases,
    now: f.clock.now(),
    keyGraceSeconds: 86_400,
    secretBox: f.deps.secretBox,
    runtimeSettings: runtimeSettingsOf(f.deps.config),
    dev: false,
    origin: "cli",
    sessionToken: operator.token,
    input: {},
  };
  return runAdminCommand(request, name, flags);
}

/** The id and revoked_at of the row of a key secret in one database. */
async function keyRow(f: HttpFixture, environment: Environment, secret: string) {
  const { rows } = await f.deps.databases[environment].readClient.execute({
    sql: "SELECT id, revoked_at FROM api_keys WHERE secret_hash = ?",
    args: [await sha256Hex(secret)],
  });
  assert.equal(rows.length, 1, `${environment}: one row of the key`);
  return { id: String(rows[0].id), revokedAt: rows[0].revoked_at };
}

/** The status of a Surface A balance read by Alice in `environment` with Acme's company key. */
async function balanceStatus(f: HttpFixture, environment: Environment): Promise<number> {
  const key = environment === "live" ? f.cast.alice.keyLive : f.cast.alice.keyTest;
  const response = await api(f, "GET", "/api/balance", undefined, { key, tin: f.cast.acme.tin }, {
    CompanyApiKey: f.cast.acme.companyKey,
  });
  await response.body?.cancel();
  return response.status;
}

/** What the audit rows of key:revoke in `environment` name: the object and the rows after. */
async function revokeAudit(f: HttpFixture, environment: Environment) {
  const { rows } = await f.deps.databases[environment].readClient.execute(
    "SELECT object_id, after FROM audit_log WHERE action = 'key:revoke' ORDER BY seq",
  );
  return rows.map((row) => ({
    objectId: row.object_id,
    after: (JSON.parse(String(row.after)) as { id: string; revoked_at: number }[])
      .map((key) => [key.id, key.revoked_at]),
  }));
}

Deno.test("key:revoke of a company key with a different id in each database revokes both rows, by secret or one by id", async () => {
  await withHttpFixture(async (f) => {
    const now = f.clock.now();
    const admin = await makeOperator(f.deps, { email: "admin@ops.test", role: "admin" }, now);
    const secret = f.cast.acme.companyKey;
    const live = await keyRow(f, "live", secret);
    const test = await keyRow(f, "test", secret);
    assert.notEqual(live.id, test.id, "the fixture mirrors the key under two ids");
    assert.deepEqual([await balanceStatus(f, "live"), await balanceStatus(f, "test")], [200, 200]);

    const revoked = await run(f, admin, "key:revoke", { key: secret });
    assert.deepEqual(revoked, {
      ok: true,
      value: {
        environments: ["live", "test"],
        key_ids: { live: live.id, test: test.id },
        revoked_at: new Date(now).toISOString(),
      },
    });
    assert.deepEqual(await keyRow(f, "live", secret), { id: live.id, revokedAt: now });
    assert.deepEqual(await keyRow(f, "test", secret), { id: test.id, revokedAt: now });
    assert.deepEqual([await balanceStatus(f, "live"), await balanceStatus(f, "test")], [403, 403]);
    // Each database's audit row shows its own row revoked (the object is named by one id).
    assert.deepEqual(await revokeAudit(f, "live"), [{
      objectId: test.id,
      after: [[live.id, now]],
    }]);
    assert.deepEqual(await revokeAudit(f, "test"), [{
      objectId: test.id,
      after: [[test.id, now]],
    }]);

    const again = await run(f, admin, "key:revoke", { key: secret });
    assert.deepEqual(again, {
      ok: false,
      code: "key_not_active",
      message: `key ${live.id} in live and ${test.id} in test is already revoked`,
      field: "key",
    });
    assert.equal((await revokeAudit(f, "live")).length, 1, "a refused revoke writes nothing");

    // Beacon's key revoked in live only (by its live id): a revoke by secret finishes the test row.
    const beacon = f.cast.beacon.companyKey;
    const beaconLive = await keyRow(f, "live", beacon);
    const beaconTest = await keyRow(f, "test", beacon);
    f.clock.advance(1_000);
    const byId = await run(f, admin, "key:revoke", { key: beaconLive.id });
    assert.deepEqual(byId.ok && byId.value.key_ids, { live: beaconLive.id });
    assert.deepEqual(await keyRow(f, "test", beacon), { id: beaconTest.id, revokedAt: null });
    f.clock.advance(1_000);
    const rest = await run(f, admin, "key:revoke", { key: beacon });
    assert.deepEqual(rest, {
      ok: true,
      value: {
        environments: ["test"],
        key_ids: { test: beaconTest.id },
        revoked_at: new Date(now + 2_000).toISOString(),
      },
    });
    assert.deepEqual(await keyRow(f, "live", beacon), {
      id: beaconLive.id,
      revokedAt: now + 1_000,
    });
    assert.deepEqual(await keyRow(f, "test", beacon), {
      id: beaconTest.id,
      revokedAt: now + 2_000,
    });
  });
});

Deno.test("key:rotate of a company key with a different id in each database replaces both rows with one new key", async () => {
  await withHttpFixture(async (f) => {
    const now = f.clock.now();
    const admin = await makeOperator(f.deps, { email: "admin@ops.test", role: "admin" }, now);
    const secret = f.cast.acme.companyKey;
    const live = await keyRow(f, "live", secret);
    const test = await keyRow(f, "test", secret);
    const rotated = await run(f, admin, "key:rotate", { key: secret });
    assert.ok(rotated.ok, JSON.stringify(rotated));
    assert.deepEqual(
      [rotated.value.environments, rotated.value.previous_key_id],
      [["live", "test"], live.id],
    );
    for (const [environment, old] of [["live", live], ["test", test]] as const) {
      const { rows } = await f.deps.databases[environment].readClient.execute({
        sql: "SELECT replaced_by FROM api_keys WHERE id = ?",
        args: [old.id],
      });
      assert.deepEqual(rows.map((row) => row.replaced_by), [rotated.value.key_id], environment);
      assert.equal(
        (await keyRow(f, environment, String(rotated.value.secret))).id,
        rotated.value.key_id,
      );
    }
  });
});
