/**
 * The operator CLI as a person runs it outside dev mode: the first admin, login with prompted
 * password and TOTP (the token kept in a 0600 file, never printed), bad input and exit codes,
 * audit:verify exiting 1 on a row edited in the database, and logout.
 */
import assert from "node:assert/strict";
import { createClient } from "@libsql/client";
import { totpCodeAt } from "../lib/operators/totp.ts";
import { totpSecretOf } from "./operator_helpers.ts";
import { createDatabases } from "./admin_cli_helpers.ts";

const root = new URL("..", import.meta.url).pathname;

/** The CLI outside dev mode (its secrets given), `stdin` answering its prompts. */
async function admin(dataDir: string, stdin: string, ...args: string[]) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${root}cli/admin.ts`, ...args],
    env: {
      DATA_DIR: dataDir,
      NO_COLOR: "1",
      JWT_SECRET: "j".repeat(40),
      ENCRYPTION_KEY: btoa("e".repeat(32)),
    },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(stdin));
  await writer.close();
  const output = await child.output();
  return {
    code: output.code,
    stdout: new TextDecoder().decode(output.stdout),
    stderr: new TextDecoder().decode(output.stderr).trim(),
  };
}

Deno.test("CLI outside dev mode: first admin, login with TOTP into a 0600 file, refusals, audit:verify, logout", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "disbursement-cli-operators-" });
  try {
    // The service's first start creates the databases; the CLI never does.
    await createDatabases(dataDir, { dev: false });
    const password = "the first admin's password";
    const weak = await admin(
      dataDir,
      "short\n",
      "operator:create",
      "--first",
      "--email",
      "a@ops.test",
    );
    assert.deepEqual([weak.code, weak.stderr], [
      2,
      "error: the password has 5 characters; at least 12 are required",
    ]);
    const created = await admin(
      dataDir,
      `${password}\n`,
      "operator:create",
      "--first",
      "--email",
      "admin@ops.test",
      "--json",
    );
    assert.equal(created.code, 0, created.stderr);
    const first = JSON.parse(created.stdout);
    assert.deepEqual([first.email, first.role, first.password], [
      "admin@ops.test",
      "admin",
      undefined,
    ]);
    const secret = totpSecretOf(first.totp_uri);
    const second = await admin(
      dataDir,
      `${password}\n`,
      "operator:create",
      "--first",
      "--email",
      "b@ops.test",
    );
    assert.deepEqual([second.code, second.stderr], [
      1,
      "error: operators exist already: --first creates the first admin only; sign in and run operator:create",
    ]);

    const anonymous = await admin(dataDir, "", "jobs:list", "--environment", "test");
    assert.deepEqual([anonymous.code, anonymous.stderr], [
      1,
      "error: jobs:list needs an operator session: sign in with `deno task admin login`",
    ]);
    const noCode = await admin(dataDir, `admin@ops.test\n${password}\n\n`, "login");
    assert.deepEqual([noCode.code, noCode.stderr], [
      1,
      "error: a TOTP code is required: enter the code of your app",
    ]);
    const code = totpCodeAt(secret, Date.now());
    const login = await admin(dataDir, `admin@ops.test\n${password}\n${code}\n`, "login", "--json");
    assert.equal(login.code, 0, login.stderr);
    const shown = JSON.parse(login.stdout);
    assert.deepEqual([shown.email, shown.role, shown.totp_verified, shown.session_token], [
      "admin@ops.test",
      "admin",
      true,
      undefined,
    ]);
    const sessionFile = `${dataDir}/operator-sessions/admin%40ops.test`;
    assert.equal(shown.session_file, sessionFile);
    assert.equal((await Deno.stat(sessionFile)).mode! & 0o777, 0o600);
    const token = (await Deno.readTextFile(sessionFile)).trim();
    assert.match(token, /^ops_[0-9A-Za-z]{43}$/);
    assert.ok(!login.stdout.includes(token) && !login.stderr.includes(token));

    const replayed = await admin(dataDir, `admin@ops.test\n${password}\n${code}\n`, "login");
    assert.deepEqual([replayed.code, replayed.stderr], [
      1,
      "error: this TOTP code was used already: wait for the next code of your app",
    ]);
    assert.equal(
      (await Deno.readTextFile(sessionFile)).trim(),
      token,
      "a refused login keeps the session",
    );

    const company = await admin(
      dataDir,
      "",
      "company:create",
      "--name",
      "Acme",
      "--tin",
      "123456789",
    );
    assert.equal(company.code, 0, company.stderr);
    const unknown = await admin(dataDir, "", "approvals:approve", "--id", "apr_missing");
    assert.deepEqual([unknown.code, unknown.stderr], [1, "error: no approval apr_missing"]);
    const intact = await admin(dataDir, "", "audit:verify", "--json");
    assert.equal(intact.code, 0, intact.stderr);

    // The test edits a live audit row directly (after dropping the trigger that refuses it).
    const live = createClient({ url: `file:${dataDir}/live.db` });
    const { rows } = await live.execute(
      "SELECT seq, id FROM audit_log WHERE action = 'company:create'",
    );
    await live.execute("DROP TRIGGER audit_log_no_update");
    await live.execute({
      sql: "UPDATE audit_log SET operator_email = 'someone-else@ops.test' WHERE seq = ?",
      args: [rows[0].seq],
    });
    live.close();
    const broken = await admin(dataDir, "", "audit:verify");
    assert.deepEqual([broken.code, broken.stderr], [
      1,
      `error: the audit chain is broken at live row ${rows[0].seq} (${rows[0].id}): ` +
      "its content does not match its hash: the row was altered",
    ]);

    const logout = await admin(dataDir, "", "logout");
    assert.equal(logout.code, 0, logout.stderr);
    await assert.rejects(Deno.stat(sessionFile), Deno.errors.NotFound);
    const after = await admin(dataDir, "", "company:list");
    assert.equal(after.code, 1);
    assert.match(after.stderr, /company:list needs an operator session/);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});
