/**
 * The audit log: the chain's rules with known values, one row per change in the change's own unit
 * (a refused change leaves none, a failed row undoes the change), tampering found by audit:verify,
 * the filters of audit:list, and no secret in any audit row or log line.
 */
import assert from "node:assert/strict";
import { createApp } from "../routes/app.ts";
import {
  AUDIT_GENESIS_HASH,
  auditRowHash,
  canonicalJson,
  checkChainLink,
  maskSecrets,
} from "../lib/audit/rules.ts";
import { newKeySecret } from "../lib/platform/keys.ts";
import { type HttpFixture, withHttpFixture } from "./http_fixture.ts";
import { ADMIN_TOKEN, adminCall, enrollmentCodeOf, makeOperator } from "./operator_helpers.ts";
import { totpCodeAt } from "../lib/operators/totp.ts";
import { testAuditKeys } from "./helpers.ts";

Deno.test("canonical JSON and the row hash: key order does not matter, every column and the key do", async () => {
  assert.equal(
    canonicalJson({ b: 1, a: [{ d: null, c: "x" }] }),
    '{"a":[{"c":"x","d":null}],"b":1}',
  );
  assert.equal(canonicalJson({ a: 1, b: undefined }), '{"a":1}');
  const row = {
    seq: 1,
    id: "aud_1",
    at: 0,
    environment: "live" as const,
    operatorId: null,
    operatorEmail: null,
    origin: "cli",
    action: "company:create",
    objectType: "company",
    objectId: "123456789",
    companyId: null,
    before: null,
    after: '{"name":"Acme"}',
    prevHash: AUDIT_GENESIS_HASH,
  };
  // HMAC-SHA256 of the canonical text under the chain key, computed independently of the code.
  const key = await crypto.subtle.importKey(
    "raw",
    new Uint8Array(testAuditKeys.chainKey),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const expected = new Uint8Array(
    await crypto.subtle.sign(
      "HMAC",
      key,
      new TextEncoder().encode(
        '{"action":"company:create","after":"{\\"name\\":\\"Acme\\"}","at":0,"before":null,' +
          '"company_id":null,"environment":"live","id":"aud_1","object_id":"123456789",' +
          '"object_type":"company","operator_email":null,"operator_id":null,"origin":"cli",' +
          `"prev_hash":"${AUDIT_GENESIS_HASH}","seq":1}`,
      ),
    ),
  );
  const chainKey = testAuditKeys.chainKey;
  const hash = auditRowHash(row, chainKey);
  assert.equal(hash, Array.from(expected, (b) => b.toString(16).padStart(2, "0")).join(""));
  for (const [column, value] of Object.entries({ seq: 2, at: 1, origin: "http", after: null })) {
    assert.notEqual(auditRowHash({ ...row, [column]: value }, chainKey), hash, column);
  }
  assert.notEqual(auditRowHash(row, new Uint8Array(32)), hash, "another key, another hash");

  const first = { ...row, hash };
  const at1 = { seq: 1, id: "aud_1", hash, legacyRows: 0, keyed: true };
  assert.deepEqual(checkChainLink(first, null, chainKey), { broken: null, position: at1 });
  const second = { ...row, seq: 2, id: "aud_2", prevHash: hash };
  const secondRow = { ...second, hash: auditRowHash(second, chainKey) };
  assert.equal(checkChainLink(secondRow, at1, chainKey).broken, null);
  assert.deepEqual(checkChainLink({ ...secondRow, after: "{}" }, at1, chainKey).broken, {
    seq: 2,
    id: "aud_2",
    reason: "its content does not match its hash: the row was altered",
  });
  assert.deepEqual(checkChainLink(secondRow, null, chainKey).broken, {
    seq: 2,
    id: "aud_2",
    reason: "row 1 is missing: the chain jumps from 0 to 2",
  });
  assert.deepEqual(checkChainLink(secondRow, { ...at1, hash: "f".repeat(64) }, chainKey).broken, {
    seq: 2,
    id: "aud_2",
    reason: "its prev_hash is not the hash of the row before it",
  });
});

Deno.test("masking: secret fields and secret shapes are masked, account numbers keep their last four", () => {
  const lineKey = newKeySecret("line", "live");
  const companyKey = newKeySecret("company");
  assert.deepEqual(
    maskSecrets({
      password: "hunter2 hunter2",
      totp_secret: "JBSWY3DPEHPK3PXP",
      secret_hash: "ab12",
      company_api_key: companyKey,
      key_hint: "sk_live_abcd…",
      note: `rotated ${lineKey} today`,
      uri: "otpauth://totp/X:a?secret=JBSWY3DPEHPK3PXP",
      hash_string: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA",
      bank_account: "000123456789",
      account_number: "000123456789",
      amount_cents: 123456789,
      tin: "123456789",
      totp_verified: true,
      nested: [{ session_token: "ops_x" }],
    }),
    {
      password: "[masked]",
      totp_secret: "[masked]",
      secret_hash: "[masked]",
      company_api_key: "[masked]",
      key_hint: "sk_live_abcd…",
      note: "rotated [masked] today",
      uri: "[masked]",
      hash_string: "[masked]",
      bank_account: "…6789",
      account_number: "[masked]",
      amount_cents: 123456789,
      tin: "123456789",
      totp_verified: true,
      nested: [{ session_token: "[masked]" }],
    },
  );
});

async function auditRows(f: HttpFixture, environment: "test" | "live") {
  const { rows } = await f.deps.databases[environment].readClient.execute(
    "SELECT * FROM audit_log ORDER BY seq",
  );
  return rows.map((row) => ({ ...row }));
}

Deno.test("every change writes its audit row in its own unit: a refusal writes none, a failed row undoes the change", async () => {
  await withHttpFixture(async (f) => {
    const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
    const admin = await makeOperator(
      f.deps,
      { email: "admin@ops.test", role: "admin" },
      f.clock.now(),
    );
    const call = adminCall(app, admin.token);
    const liveBefore = (await auditRows(f, "live")).length;

    const fees = await call("fees:set", { tin: f.cast.acme.tin, method: "2", payor: "0.75" });
    assert.equal(fees.status, 200);
    const [liveRow] = (await auditRows(f, "live")).slice(liveBefore);
    const [testRow] = (await auditRows(f, "test")).filter((row) => row.action !== "login");
    for (const [row, environment] of [[liveRow, "live"], [testRow, "test"]] as const) {
      assert.deepEqual(
        {
          environment: row.environment,
          operator: row.operator_email,
          origin: row.origin,
          action: row.action,
          object: row.object_id,
          company: row.company_id,
          before: row.before,
          after: row.after,
        },
        {
          environment,
          operator: "admin@ops.test",
          origin: "http 127.0.0.1",
          action: "fees:set",
          object: `${f.cast.acme.tin} method 2`,
          company: f.cast.acme.id,
          before: "[]",
          after:
            '[{"payee_fee_cents":0,"payment_method_id":2,"payor_fee_cents":75,"service_fee_cents":0}]',
        },
      );
    }
    const changed = await call("fees:set", { tin: f.cast.acme.tin, method: "2", payor: "1.00" });
    assert.equal(changed.status, 200);
    const latest = (await auditRows(f, "test")).at(-1)!;
    assert.equal(latest.before, testRow.after, "before is the state the last change left");

    // A refused change writes no audit row.
    const counts =
      async () => [(await auditRows(f, "live")).length, (await auditRows(f, "test")).length];
    const beforeRefusal = await counts();
    const duplicate = await call("company:create", { name: "Acme again", tin: f.cast.acme.tin });
    assert.deepEqual([duplicate.status, duplicate.body.error.code], [409, "duplicate_tin"]);
    const noRetry = await call("retry:set", { tin: "999999999", max: "1", reasons: "R01" });
    assert.equal(noRetry.status, 404);
    assert.deepEqual(await counts(), beforeRefusal);

    // The audit row cannot be written: the change it records is undone with it.
    await f.deps.databases.test.writer.write((tx) =>
      tx.execute(
        "CREATE TRIGGER audit_refused BEFORE INSERT ON audit_log BEGIN SELECT RAISE(ABORT, 'audit unavailable'); END",
      )
    );
    const originalError = console.error;
    console.error = () => {};
    try {
      const failed = await call("fees:set", { tin: f.cast.acme.tin, method: "3", payor: "2.00" });
      assert.equal(failed.status, 500);
    } finally {
      console.error = originalError;
    }
    const method3 = async (environment: "test" | "live") =>
      (await f.deps.databases[environment].readClient.execute(
        "SELECT count(*) AS n FROM fee_schedules WHERE payment_method_id = 3",
      )).rows[0].n;
    assert.equal(Number(await method3("test")), 0, "the fee was not set without its audit row");
  });
});

Deno.test("audit:verify finds a row edited or removed directly in the database, naming it", async () => {
  await withHttpFixture(async (f) => {
    const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
    const admin = await makeOperator(
      f.deps,
      { email: "admin@ops.test", role: "admin" },
      f.clock.now(),
    );
    const call = adminCall(app, admin.token);
    for (const method of ["1", "2", "3"]) {
      assert.equal(
        (await call("fees:set", { tin: f.cast.acme.tin, method, payor: "1.00" })).status,
        200,
      );
    }
    const intact = await call("audit:verify", {});
    assert.deepEqual(intact.body, {
      result: { live: "5 rows, chain intact", test: "4 rows, chain intact" },
    });

    const test = f.deps.databases.test;
    await assert.rejects(
      test.writer.write((tx) => tx.execute("UPDATE audit_log SET after = '[]' WHERE seq = 2")),
      /audit_log is append-only/,
    );
    await assert.rejects(
      test.writer.write((tx) => tx.execute("DELETE FROM audit_log WHERE seq = 2")),
      /audit_log is append-only/,
    );
    // Before: INSERT OR REPLACE deleted the row it replaced without firing the delete trigger.
    await assert.rejects(
      test.writer.write((tx) =>
        tx.execute(
          `INSERT OR REPLACE INTO audit_log (seq, id, at, environment, operator_id, operator_email,
             origin, action, object_type, object_id, company_id, before, after, prev_hash, hash)
           SELECT seq, id, at, environment, operator_id, 'someone@else.test', origin, action,
             object_type, object_id, company_id, before, after, prev_hash, hash
             FROM audit_log WHERE seq = 2`,
        )
      ),
      /audit_log is append-only/,
    );
    // Someone with the file drops the trigger and lowers the fee the row recorded.
    const [row2] = (await auditRows(f, "test")).filter((row) => row.seq === 2);
    await test.writer.write(async (tx) => {
      await tx.execute("DROP TRIGGER audit_log_no_update");
      await tx.execute({
        sql: "UPDATE audit_log SET after = replace(after, '100', '1') WHERE seq = 2",
        args: [],
      });
    });
    const edited = await call("audit:verify", {});
    assert.deepEqual([edited.status, edited.body.error], [409, {
      code: "audit_chain_broken",
      message: `the audit chain is broken at test row 2 (${row2.id}): ` +
        "its content does not match its hash: the row was altered",
    }]);
    assert.equal(
      (await call("audit:verify", { environment: "live" })).status,
      200,
      "the live chain is intact",
    );

    // Put back, the chain holds again; a row removed is then found by the gap it leaves.
    await test.writer.write((tx) =>
      tx.execute({ sql: "UPDATE audit_log SET after = ? WHERE seq = 2", args: [row2.after] })
    );
    assert.equal((await call("audit:verify", { environment: "test" })).status, 200);
    await test.writer.write(async (tx) => {
      await tx.execute("DROP TRIGGER audit_log_no_delete");
      await tx.execute("DELETE FROM audit_log WHERE seq = 2");
    });
    const removed = await call("audit:verify", { environment: "test" });
    const [row3] = (await auditRows(f, "test")).filter((row) => row.seq === 3);
    assert.equal(
      removed.body.error.message,
      `the audit chain is broken at test row 3 (${row3.id}): row 2 is missing: the chain jumps from 1 to 3`,
    );
  });
});

Deno.test("audit:list filters by operator, action, object, environment and time, newest first", async () => {
  await withHttpFixture(async (f) => {
    const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
    const start = f.clock.now();
    const admin = await makeOperator(f.deps, { email: "admin@ops.test", role: "admin" }, start);
    const clerk = await makeOperator(f.deps, { email: "clerk@ops.test", role: "clerk" }, start);
    f.clock.advance(60_000);
    await adminCall(app, admin.token)("fees:set", {
      tin: f.cast.acme.tin,
      method: "1",
      payor: "1.00",
    });
    f.clock.advance(60_000);
    await adminCall(app, admin.token)("key:revoke", { key: f.cast.beaconKeyTest });
    f.clock.advance(60_000);
    await adminCall(app, clerk.token)("jobs:retry", { "all-parked": "true", environment: "test" });
    const list = async (flags: Record<string, string>) => {
      const listed = await adminCall(app, clerk.token)("audit:list", flags);
      assert.equal(listed.status, 200, JSON.stringify(listed.body));
      return listed.body.result.rows.map((row: Record<string, unknown>) =>
        `${row.environment} ${row.action} ${row.operator ?? "-"}`
      );
    };
    assert.deepEqual(await list({ operator: "ADMIN@ops.test" }), [
      "test key:revoke admin@ops.test",
      "live fees:set admin@ops.test",
      "test fees:set admin@ops.test",
      "live login admin@ops.test",
      "test login admin@ops.test",
    ]);
    // A sign-in is logged in both environments, each filterable alone.
    assert.deepEqual(await list({ action: "login", environment: "test" }), [
      "test login clerk@ops.test",
      "test login admin@ops.test",
    ]);
    assert.deepEqual(await list({ action: "fees:set", environment: "test" }), [
      "test fees:set admin@ops.test",
    ]);
    assert.deepEqual(
      await list({ operator: clerk.id }),
      ["live login clerk@ops.test", "test login clerk@ops.test"],
      "a retry of nothing changed nothing",
    );
    const keyRows = await adminCall(app, clerk.token)("audit:list", { action: "key:revoke" });
    const keyId = keyRows.body.result.rows[0].object_id;
    assert.match(keyId, /^key_/, "a key is named by its id, never its secret");
    assert.deepEqual(await list({ object: keyId }), ["test key:revoke admin@ops.test"]);
    assert.deepEqual(
      await list({
        since: new Date(start + 60_000).toISOString(),
        until: new Date(start + 120_000).toISOString(),
      }),
      ["live fees:set admin@ops.test", "test fees:set admin@ops.test"],
    );
    assert.deepEqual(await list({ limit: "1" }), ["test key:revoke admin@ops.test"]);
    const bad = await adminCall(app, clerk.token)("audit:list", { since: "yesterday" });
    assert.deepEqual([bad.status, bad.body.error], [400, {
      code: "invalid_input",
      message: '--since "yesterday": a date or time in ISO 8601',
    }]);
    assert.equal((await adminCall(app, clerk.token)("audit:list", { limit: "1001" })).status, 400);
  });
});

Deno.test("no secret in any audit row or log line: passwords, TOTP secrets, key secrets, session tokens", async () => {
  const captured: string[] = [];
  const original = { log: console.log, error: console.error, warn: console.warn };
  const capture = (...args: unknown[]) => captured.push(args.map(String).join(" "));
  console.log = capture;
  console.error = capture;
  console.warn = capture;
  try {
    await withHttpFixture(async (f) => {
      const app = createApp({
        ...f.deps,
        adminToken: ADMIN_TOKEN,
        log: (entry) => captured.push(JSON.stringify(entry)),
      });
      const secrets: string[] = [];
      const admin = await makeOperator(
        f.deps,
        { email: "admin@ops.test", role: "admin" },
        f.clock.now(),
      );
      secrets.push(admin.password, admin.totpSecret, admin.token!);
      const call = adminCall(app, admin.token);
      const run = async (name: string, flags: Record<string, string>, input = {}) => {
        const response = await call(name, flags, input);
        assert.equal(response.status, 200, `${name}: ${JSON.stringify(response.body)}`);
        return response.body.result;
      };
      const clerkPassword = "clerk's chosen password";
      secrets.push(clerkPassword);
      await run("operator:create", { email: "clerk@ops.test", role: "clerk" });
      const invitation = await enrollmentCodeOf(f.deps, "clerk@ops.test");
      const enrolled = await run("enroll", {}, { code: invitation, password: clerkPassword });
      secrets.push(invitation, new URL(enrolled.totp_uri).searchParams.get("secret")!);
      await run("operator:reset", { email: "clerk@ops.test" });
      const again = await enrollmentCodeOf(f.deps, "clerk@ops.test");
      const reenrolled = await run("enroll", {}, {
        code: again,
        password: "clerk's second password",
      });
      secrets.push(again, "clerk's second password");
      secrets.push(new URL(reenrolled.totp_uri).searchParams.get("secret")!);
      await run("operator:create", { email: "dana@ops.test", role: "admin" });
      secrets.push(await enrollmentCodeOf(f.deps, "dana@ops.test"));
      await run("operator:password", {}, {
        current: admin.password,
        code: totpCodeAt(admin.totpSecret, f.clock.now() + 30_000),
        password: "the admin's next password",
      });
      secrets.push("the admin's next password");
      const company = await run("company:create", { name: "Cedar Re", tin: "555555555" });
      secrets.push(company.company_api_key);
      const user = await run("user:create", { email: "ops@cedar.test" });
      secrets.push(user.api_key_test, user.api_key_live);
      const line = await run("line:create", { tin: "555555555", code: "property" });
      secrets.push(line.key_test, line.key_live);
      const rotated = await run("key:rotate", { key: line.key_live });
      secrets.push(rotated.secret);
      await run("key:revoke", { key: f.cast.acmeAutoKeyLive });
      secrets.push(f.cast.acmeAutoKeyLive);
      await run("logout", {});
      // A wrong sign-in attempt is audited too, without the password tried.
      const wrong = "a wrong password tried";
      secrets.push(wrong);
      const refused = await call("login", {}, {
        email: "clerk@ops.test",
        password: wrong,
        code: "123456",
      });
      assert.equal(refused.status, 401);

      const audit = [
        ...(await auditRows(f, "live")),
        ...(await auditRows(f, "test")),
      ].map((row) => JSON.stringify(row));
      assert.ok(audit.length >= 15, `${audit.length} audit rows`);
      assert.ok(captured.length > 0, "the access log was captured");
      for (const secret of secrets) {
        assert.ok(secret.length >= 12, "a real secret");
        for (const text of [...audit, ...captured]) {
          assert.ok(!text.includes(secret), `a secret appears in: ${text.slice(0, 200)}`);
        }
      }
      const hashes = audit.filter((text) => /\$argon2|password_hash|secret_hash/.test(text));
      assert.deepEqual(hashes, [], "no password or key hash either");
    });
  } finally {
    Object.assign(console, original);
  }
});

Deno.test("an audit row appended before the keys are made waits for them: the service makes them after its first API answer", async () => {
  // A module of its own, as in a service that has not made its keys yet.
  const keysInUse: typeof import("../lib/audit/keys_in_use.ts") = await import(
    new URL("../lib/audit/keys_in_use.ts?not-made-yet", import.meta.url).href
  );
  assert.throws(() => keysInUse.currentAuditKeys(), /the audit keys are not set/);
  let make = () => {};
  keysInUse.auditKeysComing(new Promise<void>((resolve) => make = resolve));
  let made: unknown = null;
  const waiting = keysInUse.auditKeysInUse().then((keys) => made = keys);
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(made, null, "it waits");
  keysInUse.useAuditKeys(testAuditKeys);
  make();
  assert.equal(await waiting, testAuditKeys);
});
