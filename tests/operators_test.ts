/**
 * Operators: the rules' tables, then through the admin endpoint outside dev mode: each role's
 * permissions (a refused command writes nothing), company scope, lockout, TOTP for live changes
 * and its replay, session expiry, and the bad inputs of operator:create.
 */
import assert from "node:assert/strict";
import { createApp } from "../routes/app.ts";
import { ConfigError, loadConfig } from "../lib/platform/config.ts";
import {
  afterFailedSignIn,
  authorizeCommand,
  bankFileReleaseNeedsApproval,
  checkDecision,
  checkPassword,
  type CommandReach,
  extendedExpiry,
  LOCKOUT_MS,
  type OperatorFacts,
  roleAllows,
  SESSION_ABSOLUTE_MS,
  SESSION_IDLE_MS,
  sessionState,
  totpReplayed,
} from "../lib/operators/rules.ts";
import { createFirstAdmin, signIn } from "../lib/operators/service.ts";
import { matchTotp, totpCodeAt } from "../lib/operators/totp.ts";
import { type HttpFixture, withHttpFixture } from "./http_fixture.ts";
import {
  ADMIN_TOKEN,
  adminCall,
  enrollmentCodeOf,
  makeOperator,
  operatorDepsOf,
  totpSecretOf,
} from "./operator_helpers.ts";
import { enroll } from "../lib/operators/enrollment.ts";

const MINUTE = 60_000;

Deno.test("password policy: 12 characters at least, 256 at most, not the e-mail", () => {
  const cases: [string, string | null][] = [
    ["a".repeat(11), "the password has 11 characters; at least 12 are required"],
    ["a".repeat(12), null],
    ["é".repeat(12), null],
    ["a".repeat(256), null],
    ["a".repeat(257), "the password has 257 characters; at most 256 are allowed"],
    ["Ops@Acme.test", "the password must not be the e-mail address"],
  ];
  for (const [password, refusal] of cases) {
    const checked = checkPassword(password, "ops@acme.test");
    assert.deepEqual(
      checked.ok ? null : [checked.code, checked.message],
      refusal === null ? null : ["weak_password", refusal],
      password,
    );
  }
});

Deno.test("rules: roles, lockout, session lifetimes, TOTP replay and approval decisions", () => {
  const allowed = [
    ["viewer", "viewer", true],
    ["viewer", "clerk", false],
    ["viewer", "admin", false],
    ["clerk", "viewer", true],
    ["clerk", "clerk", true],
    ["clerk", "admin", false],
    ["admin", "admin", true],
  ] as const;
  for (const [role, needed, expected] of allowed) {
    assert.equal(roleAllows(role, needed), expected, `${role} for ${needed}`);
  }
  const now = 1_000_000;
  assert.deepEqual(afterFailedSignIn(3, now), { failedAttempts: 4, lockedUntil: null });
  assert.deepEqual(afterFailedSignIn(4, now), { failedAttempts: 0, lockedUntil: now + LOCKOUT_MS });
  const session = {
    expiresAt: now + SESSION_IDLE_MS,
    absoluteExpiresAt: now + 2 * SESSION_IDLE_MS,
  };
  assert.equal(sessionState({ ...session, endedAt: null }, session.expiresAt - 1), "active");
  assert.equal(sessionState({ ...session, endedAt: null }, session.expiresAt), "expired");
  assert.equal(sessionState({ ...session, endedAt: now }, now), "ended");
  assert.equal(
    sessionState(
      { expiresAt: now + 2 * MINUTE, absoluteExpiresAt: now + MINUTE, endedAt: null },
      now + MINUTE,
    ),
    "expired",
    "the absolute limit holds whatever the idle expiry says",
  );
  assert.equal(extendedExpiry({ ...session, endedAt: null }, now + 30 * MINUTE), now + 90 * MINUTE);
  assert.equal(
    extendedExpiry({ ...session, endedAt: null }, now + 100 * MINUTE),
    session.absoluteExpiresAt,
    "never past the absolute limit",
  );
  assert.equal(totpReplayed(10, null), false);
  assert.equal(totpReplayed(10, 9), false);
  assert.equal(totpReplayed(10, 10), true);
  assert.equal(totpReplayed(9, 10), true);
  assert.equal(bankFileReleaseNeedsApproval(10_000_00, 10_000_00), false);
  assert.equal(bankFileReleaseNeedsApproval(10_000_01, 10_000_00), true);

  const pending = {
    id: "apr_1",
    status: "pending_approval" as const,
    requestedBy: "op_a",
    expiresAt: now,
  };
  const decide = (approval: typeof pending | { status: "approved" }, by: string, at: number) => {
    const decided = checkDecision({ ...pending, ...approval }, by, at);
    return decided.ok ? "ok" : decided.code;
  };
  assert.equal(decide(pending, "op_b", now - 1), "ok");
  assert.equal(decide(pending, "op_b", now), "approval_expired");
  assert.equal(decide(pending, "op_a", now - 1), "approval_own_request");
  assert.equal(decide({ status: "approved" }, "op_a", now), "approval_not_pending", "status first");

  const operator: OperatorFacts = {
    email: "c@ops.test",
    role: "clerk",
    companyScope: ["co_a"],
    totpVerified: false,
  };
  const command: CommandReach = {
    name: "fees:set",
    role: "admin",
    writesLive: true,
    companies: ["co_b"],
  };
  const authorized = (facts: Partial<typeof operator>, reach: Partial<typeof command>) => {
    const result = authorizeCommand({ ...operator, ...facts }, { ...command, ...reach }, false);
    return result.ok ? "ok" : result.code;
  };
  assert.equal(authorized({}, {}), "role_insufficient", "the role first");
  assert.equal(authorized({ role: "admin" }, {}), "totp_required", "then TOTP for live");
  assert.equal(authorized({ role: "admin", totpVerified: true }, {}), "company_not_found");
  assert.equal(authorized({ role: "admin" }, { writesLive: false, companies: ["co_a"] }), "ok");
  assert.equal(
    authorized({ role: "admin", totpVerified: true }, { companies: "installation" }),
    "operator_scoped",
  );
});

Deno.test("TOTP: a code matches its step within one step either way, compared with null", () => {
  const secret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";
  const now = Date.UTC(2026, 0, 5, 15, 0, 0);
  const step = Math.floor(now / 30_000);
  assert.equal(matchTotp(secret, totpCodeAt(secret, now), now), step, "the current step (delta 0)");
  assert.equal(matchTotp(secret, totpCodeAt(secret, now - 30_000), now), step - 1);
  assert.equal(matchTotp(secret, totpCodeAt(secret, now + 30_000), now), step + 1);
  assert.equal(matchTotp(secret, totpCodeAt(secret, now - 60_000), now), null);
  assert.equal(matchTotp(secret, "12345", now), null);
  assert.equal(matchTotp(secret, "abcdef", now), null);
});

async function auditCount(f: HttpFixture): Promise<[number, number]> {
  const count = async (environment: "test" | "live") =>
    Number(
      (await f.deps.databases[environment].readClient.execute(
        "SELECT count(*) AS n FROM audit_log",
      )).rows[0].n,
    );
  return [await count("live"), await count("test")];
}

async function sessionExpiry(f: HttpFixture, operatorId: string): Promise<number> {
  const { rows } = await f.deps.databases.live.readClient.execute({
    sql: "SELECT expires_at FROM operator_sessions WHERE operator_id = ? AND ended_at IS NULL",
    args: [operatorId],
  });
  return Number(rows[0].expires_at);
}

Deno.test("roles: a viewer reads, a clerk replays and retries, an admin manages; a refused command writes nothing", async () => {
  await withHttpFixture(async (f) => {
    const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
    const now = f.clock.now();
    const viewer = await makeOperator(f.deps, { email: "viewer@ops.test", role: "viewer" }, now);
    const clerk = await makeOperator(f.deps, { email: "clerk@ops.test", role: "clerk" }, now);
    const admin = await makeOperator(f.deps, { email: "admin@ops.test", role: "admin" }, now);
    f.clock.advance(MINUTE);

    const feesOf = async () =>
      (await f.deps.databases.live.readClient.execute(
        "SELECT company_id, payor_fee_cents FROM fee_schedules",
      )).rows.map((row) => ({ ...row }));
    const fees = { tin: f.cast.acme.tin, method: "1", payor: "1.50" };
    const auditBefore = await auditCount(f);
    const clerkExpiry = await sessionExpiry(f, clerk.id);
    const refused = await adminCall(app, clerk.token)("fees:set", fees);
    assert.deepEqual([refused.status, refused.body], [403, {
      error: {
        code: "role_insufficient",
        message: "clerk@ops.test is a clerk: fees:set needs the admin role",
      },
    }]);
    assert.deepEqual(await feesOf(), [], "no fee was set");
    assert.deepEqual(await auditCount(f), auditBefore, "no audit row");
    assert.equal(await sessionExpiry(f, clerk.id), clerkExpiry, "not even the session's use");

    // Each role against a command of each level (all on test data, or reads).
    const commands = [
      ["company:list", {}],
      ["jobs:retry", { "all-parked": "true", environment: "test" }],
      ["key:revoke", { key: f.cast.beaconKeyTest }],
    ] as const;
    const expected: Record<string, number[]> = {
      viewer: [200, 403, 403],
      clerk: [200, 200, 403],
      admin: [200, 200, 200],
    };
    for (const operator of [viewer, clerk, admin]) {
      const role = operator.email.split("@")[0];
      const statuses = [];
      for (const [name, flags] of commands) {
        statuses.push((await adminCall(app, operator.token)(name, flags)).status);
      }
      assert.deepEqual(statuses, expected[role], role);
    }
    const replayRefused = await adminCall(app, viewer.token)("event:replay", {
      event: "evt_missing",
      environment: "test",
    });
    assert.deepEqual(
      [replayRefused.status, replayRefused.body.error.code],
      [403, "role_insufficient"],
      "a viewer may not replay, even an event that does not exist",
    );
    const set = await adminCall(app, admin.token)("fees:set", fees);
    assert.equal(set.status, 200);
    assert.deepEqual(await feesOf(), [{ company_id: f.cast.acme.id, payor_fee_cents: 150 }]);

    const anonymous = await adminCall(app, null)("company:list", {});
    assert.deepEqual([anonymous.status, anonymous.body.error], [401, {
      code: "session_required",
      message: "company:list needs an operator session: sign in with `deno task admin login`",
    }]);
  });
});

Deno.test("company scope: an operator of Acme neither sees nor acts on Beacon, and is told it does not exist", async () => {
  await withHttpFixture(async (f) => {
    const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
    const now = f.clock.now();
    const acmeAdmin = await makeOperator(f.deps, {
      email: "acme-admin@ops.test",
      role: "admin",
      companies: f.cast.acme.tin,
    }, now);
    const call = adminCall(app, acmeAdmin.token);

    const listed = await call("company:list", {});
    assert.deepEqual(listed.body.result.companies.map((c: { tin: string }) => c.tin), [
      f.cast.acme.tin,
    ]);
    const auditBefore = await auditCount(f);
    const outside = await call("fees:set", { tin: f.cast.beacon.tin, method: "1", payor: "1.00" });
    const missing = await call("fees:set", { tin: "999999999", method: "1", payor: "1.00" });
    assert.deepEqual([outside.status, outside.body], [404, {
      error: { code: "company_not_found", message: `no company with TIN ${f.cast.beacon.tin}` },
    }]);
    assert.equal(missing.status, 404, "a company that does not exist gets the same answer");
    const beaconFees = await f.deps.databases.live.readClient.execute({
      sql: "SELECT count(*) AS n FROM fee_schedules WHERE company_id = ?",
      args: [f.cast.beacon.id],
    });
    assert.equal(Number(beaconFees.rows[0].n), 0, "nothing written");
    assert.deepEqual(await auditCount(f), auditBefore);

    const revoke = await call("key:revoke", { key: f.cast.beaconKeyTest });
    assert.deepEqual([revoke.status, revoke.body.error], [404, {
      code: "key_not_found",
      message: "no key matches the given secret or id",
    }]);
    const beaconKey = await f.deps.databases.test.readClient.execute({
      sql: "SELECT revoked_at FROM api_keys WHERE line_id = ?",
      args: [f.cast.beacon.lineId],
    });
    assert.equal(beaconKey.rows[0].revoked_at, null, "Beacon's key still works");
    const tieout = await call("tieout", {
      tin: f.cast.beacon.tin,
      line: "default",
      date: "2026-01-05",
      environment: "test",
    });
    assert.deepEqual([tieout.status, tieout.body.error.code], [404, "line_not_found"]);
    const everyCompany = await call("ledger:verify", {});
    assert.deepEqual([everyCompany.status, everyCompany.body.error], [403, {
      code: "operator_scoped",
      message:
        "acme-admin@ops.test is limited to some companies: ledger:verify acts on every company",
    }]);
    assert.equal((await call("operator:list", {})).status, 403);

    const inside = await call("fees:set", { tin: f.cast.acme.tin, method: "1", payor: "1.00" });
    assert.equal(inside.status, 200);
    // The audit log shows the scoped operator only rows of their companies.
    const outsider = await makeOperator(f.deps, {
      email: "beacon-clerk@ops.test",
      role: "clerk",
      companies: f.cast.beacon.id,
    }, now);
    const beaconView = await adminCall(app, outsider.token)("audit:list", {});
    assert.deepEqual(beaconView.body.result.rows, []);
    const acmeView = await call("audit:list", { action: "fees:set" });
    assert.deepEqual(
      acmeView.body.result.rows.map((row: Record<string, unknown>) => [
        row.environment,
        row.company_id,
        row.operator,
      ]),
      [["live", f.cast.acme.id, acmeAdmin.email], ["test", f.cast.acme.id, acmeAdmin.email]],
    );
  });
});

Deno.test("lockout: five failed sign-ins (password or TOTP) lock the account for 15 minutes", async () => {
  await withHttpFixture(async (f) => {
    const deps = operatorDepsOf(f.deps);
    const start = f.clock.now();
    const clerk = await makeOperator(f.deps, {
      email: "clerk@ops.test",
      role: "clerk",
      signIn: false,
    }, start);
    const attempt = (password: string, at: number, code = totpCodeAt(clerk.totpSecret, at)) =>
      signIn(deps, "test", { email: clerk.email, password, code }, at);

    const wrong: string[] = [];
    for (let i = 0; i < 3; i++) {
      const failed = await attempt("not the password", start + i * 1000);
      wrong.push(failed.ok ? "ok" : failed.code);
    }
    const wrongCode = await attempt(clerk.password, start + 3000, "000000");
    wrong.push(wrongCode.ok ? "ok" : wrongCode.code);
    assert.deepEqual(wrong, [
      "sign_in_failed",
      "sign_in_failed",
      "sign_in_failed",
      "sign_in_failed",
    ]);
    const fifth = await attempt("not the password", start + 4000);
    assert.ok(!fifth.ok);
    assert.deepEqual([fifth.code, fifth.message], [
      "operator_locked",
      `operator clerk@ops.test is locked after too many failed sign-ins until ${
        new Date(start + 4000 + LOCKOUT_MS).toISOString()
      }`,
    ]);
    const stillLocked = await attempt(clerk.password, start + 4000 + LOCKOUT_MS - 31_000);
    assert.ok(!stillLocked.ok && stillLocked.code === "operator_locked", "the right password too");
    const after = await attempt(clerk.password, start + 4000 + LOCKOUT_MS);
    assert.ok(after.ok, "15 minutes later");

    // A success forgets earlier failures: four more failures do not lock.
    const later = start + 4000 + LOCKOUT_MS + MINUTE;
    for (let i = 0; i < 4; i++) await attempt("not the password", later + i * 1000);
    const row = await f.deps.databases.live.readClient.execute({
      sql: "SELECT failed_attempts, locked_until FROM operators WHERE id = ?",
      args: [clerk.id],
    });
    assert.deepEqual([row.rows[0].failed_attempts, row.rows[0].locked_until], [4, null]);
    const audit = await f.deps.databases.live.readClient.execute({
      sql: "SELECT action FROM audit_log WHERE object_id = ? AND action LIKE 'login%'",
      args: [clerk.id],
    });
    assert.equal(
      audit.rows.filter((r) => r.action === "login:failed").length,
      9,
      "every counted failure is audited (attempts refused while locked change nothing)",
    );
  });
});

Deno.test("TOTP: required to sign in outside dev mode and for live changes; a code is accepted once", async () => {
  await withHttpFixture(async (f) => {
    const deps = operatorDepsOf(f.deps);
    const now = f.clock.now();
    const admin = await makeOperator(f.deps, {
      email: "admin@ops.test",
      role: "admin",
      signIn: false,
    }, now);
    const noCode = await signIn(deps, "test", {
      email: admin.email,
      password: admin.password,
      code: "",
    }, now);
    assert.ok(!noCode.ok);
    assert.deepEqual([noCode.code, noCode.message], [
      "totp_required",
      "a TOTP code is required: enter the code of your app",
    ]);
    const code = totpCodeAt(admin.totpSecret, now);
    const first = await signIn(
      deps,
      "test",
      { email: admin.email, password: admin.password, code },
      now,
    );
    assert.ok(first.ok && first.value.totpVerified);
    const replayed = await signIn(deps, "test", {
      email: admin.email,
      password: admin.password,
      code,
    }, now + 5000);
    assert.ok(!replayed.ok);
    assert.deepEqual([replayed.code, replayed.message], [
      "totp_replayed",
      "this TOTP code was used already: wait for the next code of your app",
    ]);
    const next = await signIn(deps, "test", {
      email: admin.email,
      password: admin.password,
      code: totpCodeAt(admin.totpSecret, now + 30_000),
    }, now + 30_000);
    assert.ok(next.ok, "the next step's code");

    // A session signed in without TOTP (dev mode) cannot change live data outside dev mode.
    const devSession = await signIn({ ...deps, dev: true }, "test", {
      email: admin.email,
      password: admin.password,
      code: "",
    }, now + 31_000);
    assert.ok(devSession.ok && !devSession.value.totpVerified);
    const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
    const live = await adminCall(app, devSession.value.token)("fees:set", {
      tin: f.cast.acme.tin,
      method: "1",
      payor: "1.00",
    });
    assert.deepEqual([live.status, live.body.error], [403, {
      code: "totp_required",
      message: "fees:set changes live data: sign in again with a TOTP code (`login`)",
    }]);
    const testOnly = await adminCall(app, devSession.value.token)("key:revoke", {
      key: f.cast.beaconKeyTest,
    });
    assert.equal(testOnly.status, 200, "a test-environment change needs no TOTP");
    const devApp = createApp({
      ...f.deps,
      config: { ...f.deps.config, dev: true },
      adminToken: ADMIN_TOKEN,
    });
    const inDev = await adminCall(devApp, devSession.value.token)("fees:set", {
      tin: f.cast.acme.tin,
      method: "1",
      payor: "1.00",
    });
    assert.equal(inDev.status, 200, "dev mode has no TOTP");
  });
});

Deno.test("sessions: expire after 60 minutes unused, at most 8 hours in all, and end at logout", async () => {
  await withHttpFixture(async (f) => {
    const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
    const start = f.clock.now();
    const viewer = await makeOperator(f.deps, { email: "viewer@ops.test", role: "viewer" }, start);
    const list = () => adminCall(app, viewer.token)("company:list", {});

    f.clock.set(start + SESSION_IDLE_MS - 1);
    assert.equal((await list()).status, 200, "used a millisecond before it would expire");
    assert.equal(await sessionExpiry(f, viewer.id), start + 2 * SESSION_IDLE_MS - 1);
    // Used every 50 minutes, it still ends 8 hours after sign-in.
    let at = start + SESSION_IDLE_MS - 1;
    while (at + 50 * MINUTE < start + SESSION_ABSOLUTE_MS) {
      at += 50 * MINUTE;
      f.clock.set(at);
      assert.equal((await list()).status, 200);
    }
    f.clock.set(start + SESSION_ABSOLUTE_MS);
    const expired = await list();
    assert.deepEqual([expired.status, expired.body.error], [401, {
      code: "session_expired",
      message: "the operator session expired: sign in again with `login`",
    }]);

    const other = await makeOperator(f.deps, { email: "other@ops.test", role: "viewer" }, at);
    f.clock.set(at + SESSION_IDLE_MS);
    assert.equal(
      (await adminCall(app, other.token)("company:list", {})).status,
      401,
      "60 minutes unused",
    );

    const third = await makeOperator(f.deps, { email: "third@ops.test", role: "viewer" }, at);
    f.clock.set(at + MINUTE);
    const logout = await adminCall(app, third.token)("logout", {});
    assert.deepEqual(logout.body, { result: { ended: true } });
    const ended = await adminCall(app, third.token)("company:list", {});
    assert.deepEqual([ended.status, ended.body.error.code], [401, "session_invalid"]);
    assert.deepEqual(
      (await adminCall(app, "ops_" + "x".repeat(43))("company:list", {})).body.error.code,
      "session_invalid",
    );
  });
});

Deno.test("operator:create refuses bad input: a weak password, an e-mail in use, an unknown role or company", async () => {
  await withHttpFixture(async (f) => {
    const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
    const admin = await makeOperator(
      f.deps,
      { email: "admin@ops.test", role: "admin" },
      f.clock.now(),
    );
    const call = adminCall(app, admin.token);
    const cases: [Record<string, string>, Record<string, string>, number, string, string][] = [
      [
        { email: "ADMIN@ops.test", role: "clerk" },
        {},
        409,
        "duplicate_email",
        "an operator with e-mail admin@ops.test already exists",
      ],
      [
        { email: "new@ops.test", role: "owner" },
        {},
        400,
        "invalid_input",
        '--role "owner": one of viewer, clerk, admin',
      ],
      [
        { email: "new@ops.test", role: "clerk", companies: "333333333" },
        {},
        404,
        "company_not_found",
        "no company 333333333",
      ],
      [
        { email: "not-an-email", role: "clerk" },
        {},
        400,
        "invalid_input",
        'email "not-an-email": not a valid e-mail address',
      ],
    ];
    for (const [flags, input, status, code, message] of cases) {
      const refused = await call("operator:create", flags, input);
      assert.deepEqual([refused.status, refused.body.error], [status, { code, message }], code);
    }
    const operators = await f.deps.databases.live.readClient.execute(
      "SELECT email FROM operators ORDER BY email",
    );
    assert.deepEqual(operators.rows.map((row) => row.email), ["admin@ops.test"]);

    const created = await call("operator:create", {
      email: "New@Ops.test",
      role: "clerk",
      companies: `${f.cast.acme.tin},${f.cast.beacon.id}`,
    }, { password: "a long enough password" });
    assert.equal(created.status, 200);
    // Before: the creator was shown the new operator's password and TOTP URI.
    assert.deepEqual(
      [
        created.body.result.email,
        created.body.result.companies,
        created.body.result.password,
        created.body.result.totp_uri,
        created.body.result.enrollment,
        created.body.result.enrollment_sent_to,
      ],
      [
        "new@ops.test",
        [f.cast.acme.id, f.cast.beacon.id],
        undefined,
        undefined,
        "emailed",
        "new@ops.test",
      ],
      "no credential is shown to the creator: the code goes to the operator's e-mail",
    );
    const code = await enrollmentCodeOf(f.deps, "new@ops.test");
    const deps = operatorDepsOf(f.deps);
    const now = f.clock.now();
    const weak = await enroll(deps, "test", { code, password: "short pass" }, now);
    assert.deepEqual(weak, {
      ok: false,
      code: "weak_password",
      message: "the password has 10 characters; at least 12 are required",
      field: "password",
    });
    const enrolled = await enroll(deps, "test", { code, password: "a long enough password" }, now);
    assert.ok(enrolled.ok);
    const again = await enroll(deps, "test", { code, password: "another long password" }, now);
    assert.ok(!again.ok && again.code === "enrollment_invalid", "a code works once");
    const signedIn = await signIn(deps, "test", {
      email: "new@ops.test",
      password: "a long enough password",
      code: totpCodeAt(totpSecretOf(enrolled.value.totpUri), now),
    }, now);
    assert.ok(signedIn.ok);
    const first = await call("operator:create", { email: "x@ops.test", first: "true" });
    assert.deepEqual([first.status, first.body.error.code], [409, "operators_exist"]);
  });
});

Deno.test("operator:disable ends the sessions and refuses the last admin; operator:reset unlocks with new secrets", async () => {
  await withHttpFixture(async (f) => {
    const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
    const now = f.clock.now();
    const admin = await makeOperator(f.deps, { email: "admin@ops.test", role: "admin" }, now);
    const clerk = await makeOperator(f.deps, { email: "clerk@ops.test", role: "clerk" }, now);
    const call = adminCall(app, admin.token);
    const last = await call("operator:disable", { email: admin.email });
    assert.deepEqual([last.status, last.body.error], [409, {
      code: "last_admin",
      message: "operator admin@ops.test is the last admin of every company: create another first",
    }]);

    const reset = await call("operator:reset", { email: clerk.email }, {});
    assert.equal(reset.status, 200);
    // Before: the admin who reset the clerk was shown the clerk's new password and TOTP URI.
    assert.deepEqual(
      [reset.body.result.password, reset.body.result.totp_uri, reset.body.result.enrollment],
      [undefined, undefined, "emailed"],
    );
    const ended = await adminCall(app, clerk.token)("company:list", {});
    assert.equal(ended.status, 401, "a reset ends the sessions");
    const deps = operatorDepsOf(f.deps);
    const oldPassword = await signIn(deps, "test", {
      email: clerk.email,
      password: clerk.password,
      code: totpCodeAt(clerk.totpSecret, now + 1000),
    }, now + 1000);
    assert.ok(!oldPassword.ok && oldPassword.code === "sign_in_failed");
    const newPassword = "the clerk's own new password";
    const enrolled = await enroll(deps, "test", {
      code: await enrollmentCodeOf(f.deps, clerk.email),
      password: newPassword,
    }, now + 1000);
    assert.ok(enrolled.ok);
    const newSecret = totpSecretOf(enrolled.value.totpUri);
    assert.notEqual(newSecret, clerk.totpSecret);
    const signedIn = await signIn(deps, "test", {
      email: clerk.email,
      password: newPassword,
      code: totpCodeAt(newSecret, now + 1000),
    }, now + 1000);
    assert.ok(signedIn.ok);

    const disabled = await call("operator:disable", { email: clerk.email });
    assert.equal(disabled.status, 200);
    assert.equal(typeof disabled.body.result.disabled_at, "string");
    const afterDisable = await adminCall(app, signedIn.value.token)("company:list", {});
    assert.deepEqual([afterDisable.status, afterDisable.body.error.code], [401, "session_invalid"]);
    const refusedSignIn = await signIn(deps, "test", {
      email: clerk.email,
      password: newPassword,
      code: totpCodeAt(newSecret, now + 60_000),
    }, now + 60_000);
    assert.ok(!refusedSignIn.ok && refusedSignIn.code === "operator_disabled");
    const listed = await call("operator:list", {});
    assert.deepEqual(
      listed.body.result.operators.map((o: Record<string, unknown>) => [
        o.email,
        o.role,
        o.disabled_at !== null,
      ]),
      [["admin@ops.test", "admin", false], ["clerk@ops.test", "clerk", true]],
    );
  });
});

Deno.test("the first admin is made once, even when two bootstraps race", async () => {
  await withHttpFixture(async (f) => {
    const deps = operatorDepsOf(f.deps);
    const now = f.clock.now();
    const raced = await Promise.all(
      ["one@ops.test", "two@ops.test"].map((email) =>
        createFirstAdmin(deps, "test", { email, password: "a long enough password" }, now)
      ),
    );
    assert.deepEqual(raced.map((r) => r.ok ? "created" : r.code).sort(), [
      "created",
      "operators_exist",
    ]);
    const { rows } = await f.deps.databases.live.readClient.execute(
      "SELECT role FROM operators",
    );
    assert.deepEqual(rows.map((row) => row.role), ["admin"]);
  });
});

Deno.test("the bank-file approval limit is a setting: $100,000.00 by default, 0 for every file", () => {
  const limitOf = (value?: string) =>
    loadConfig(value === undefined ? {} : { BANK_FILE_APPROVAL_LIMIT_CENTS: value }, { dev: true })
      .limits.BANK_FILE_APPROVAL_LIMIT_CENTS;
  assert.equal(limitOf(), 10_000_000);
  assert.equal(bankFileReleaseNeedsApproval(10_000_000, limitOf()), false, "at the limit");
  assert.equal(bankFileReleaseNeedsApproval(10_000_001, limitOf()), true, "one cent over");
  assert.equal(bankFileReleaseNeedsApproval(1, limitOf("0")), true);
  assert.throws(() => limitOf("-1"), ConfigError);
});

Deno.test("resetting or raising an admin waits for a second admin; one's own credentials change only with the current password and TOTP", async () => {
  await withHttpFixture(async (f) => {
    const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
    const now = f.clock.now();
    const ana = await makeOperator(f.deps, { email: "ana@ops.test", role: "admin" }, now);
    const ben = await makeOperator(f.deps, { email: "ben@ops.test", role: "admin" }, now);
    const cai = await makeOperator(f.deps, { email: "cai@ops.test", role: "clerk" }, now);
    const call = adminCall(app, ana.token);
    const deps = operatorDepsOf(f.deps);

    // Before: operator:reset of another admin gave the caller that admin's new password and TOTP
    // URI, to sign in as them and approve one's own wire.
    const reset = await call("operator:reset", { email: ben.email });
    assert.equal(reset.status, 200);
    assert.deepEqual(
      [reset.body.result.kind, reset.body.result.status, reset.body.result.password],
      ["operator.reset_admin", "pending_approval", undefined],
    );
    const stillBen = await adminCall(app, ben.token)("company:list", {});
    assert.equal(stillBen.status, 200, "nothing changes before the approval");
    const self = await call("operator:reset", { email: ana.email });
    assert.deepEqual([self.status, self.body.error.code], [409, "own_credentials"]);

    const raise = await call("operator:role", { email: cai.email, role: "admin" });
    assert.deepEqual(
      [raise.body.result.kind, raise.body.result.status],
      ["operator.promote_admin", "pending_approval"],
    );
    const clerkStill = await f.deps.databases.live.readClient.execute({
      sql: "SELECT role FROM operators WHERE email = ?",
      args: [cai.email],
    });
    assert.equal(clerkStill.rows[0].role, "clerk");
    const promoted = await adminCall(app, ben.token)("approvals:approve", {
      id: raise.body.result.approval_id,
    });
    assert.equal(promoted.status, 200, JSON.stringify(promoted.body));
    assert.equal(promoted.body.result.result.role, "admin");
    const resetApproved = await adminCall(app, cai.token)("approvals:approve", {
      id: reset.body.result.approval_id,
    });
    assert.equal(resetApproved.status, 200, JSON.stringify(resetApproved.body));
    assert.equal(resetApproved.body.result.result.enrollment, "emailed");
    const benEnded = await adminCall(app, ben.token)("company:list", {});
    assert.equal(benEnded.status, 401);
    const benOld = await signIn(deps, "test", {
      email: ben.email,
      password: ben.password,
      code: totpCodeAt(ben.totpSecret, now + 30_000),
    }, now + 30_000);
    assert.ok(!benOld.ok && benOld.code === "sign_in_failed");

    // One's own password: the current one and a TOTP code, and a wrong one counts.
    const wrong = await call("operator:password", {}, {
      current: "not my password",
      code: totpCodeAt(ana.totpSecret, now + 30_000),
      password: "ana's brand new password",
    });
    assert.deepEqual([wrong.status, wrong.body.error.code], [401, "credentials_wrong"]);
    const noCode = await call("operator:password", {}, {
      current: ana.password,
      code: "",
      password: "ana's brand new password",
    });
    assert.deepEqual([noCode.status, noCode.body.error.code], [403, "totp_required"]);
    const changed = await call("operator:password", {}, {
      current: ana.password,
      code: totpCodeAt(ana.totpSecret, now + 30_000),
      password: "ana's brand new password",
    });
    assert.deepEqual(changed.body, { result: { email: ana.email, changed: "password" } });
    const withNew = await signIn(deps, "test", {
      email: ana.email,
      password: "ana's brand new password",
      code: totpCodeAt(ana.totpSecret, now + 60_000),
    }, now + 60_000);
    assert.ok(withNew.ok);
  });
});
