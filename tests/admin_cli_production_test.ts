/**
 * The operator CLI on production data: dev mode is a property of the data directory, never a
 * guess from missing variables. Without JWT_SECRET or ENCRYPTION_KEY the CLI refuses, naming the
 * missing one, and writes nothing (no secrets.json); sessions are kept per operator; the restore
 * drill of the README runs as written.
 */
import assert from "node:assert/strict";
import { createClient } from "@libsql/client";
import { totpCodeAt } from "../lib/operators/totp.ts";
import { totpSecretOf } from "./operator_helpers.ts";
import { createDatabases } from "./admin_cli_helpers.ts";
import { withTempDir } from "./helpers.ts";
import { freePort } from "../bench/service.ts";

const root = new URL("..", import.meta.url).pathname;
const KEYS = { JWT_SECRET: "j".repeat(40), ENCRYPTION_KEY: btoa("e".repeat(32)) };

/** The CLI with exactly `env` (DATA_DIR among it), `stdin` answering its prompts. */
async function cli(env: Record<string, string>, stdin: string, ...args: string[]) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${root}cli/admin.ts`, ...args],
    env: { NO_COLOR: "1", ...env },
    clearEnv: true,
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

/** Every path under `dir`, with its size, for "nothing was written". */
async function snapshot(dir: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) found.push(...(await snapshot(path)));
    else found.push(`${path} ${(await Deno.stat(path)).size}`);
  }
  return found.sort();
}

/** The first admin of a production DATA_DIR, signed in with TOTP; returns its TOTP secret. */
async function firstAdmin(dataDir: string, email: string, password: string): Promise<string> {
  const env = { DATA_DIR: dataDir, ...KEYS };
  const created = await cli(
    env,
    `${password}\n`,
    "operator:create",
    "--first",
    "--email",
    email,
    "--json",
  );
  assert.equal(created.code, 0, created.stderr);
  const secret = totpSecretOf(JSON.parse(created.stdout).totp_uri);
  const login = await cli(
    env,
    `${email}\n${password}\n${totpCodeAt(secret, Date.now())}\n`,
    "login",
  );
  assert.equal(login.code, 0, login.stderr);
  return secret;
}

/** The enrollment code last e-mailed to `email`, read from the live outbox of DATA_DIR. */
async function mailedCode(dataDir: string, email: string): Promise<string> {
  const client = createClient({ url: `file:${dataDir}/live.db` });
  try {
    const { rows } = await client.execute({
      sql: "SELECT body FROM notifications WHERE recipient = ? ORDER BY created_at DESC LIMIT 1",
      args: [email],
    });
    return /\benr_[0-9A-Za-z]{32}\b/.exec(String(rows[0]?.body))![0];
  } finally {
    client.close();
  }
}

/** Enrols `email` with the code mailed to it and signs them in; returns their TOTP secret. */
async function enrolAndSignIn(
  dataDir: string,
  env: Record<string, string>,
  email: string,
  password: string,
): Promise<string> {
  const code = await mailedCode(dataDir, email);
  const enrolled = await cli(env, `${code}\n${password}\n`, "enroll", "--json");
  assert.equal(enrolled.code, 0, enrolled.stderr);
  const secret = totpSecretOf(JSON.parse(enrolled.stdout).totp_uri);
  const login = await cli(
    env,
    `${email}\n${password}\n${totpCodeAt(secret, Date.now())}\n`,
    "login",
  );
  assert.equal(login.code, 0, login.stderr);
  return secret;
}

/** A viewer made by the signed-in admin, enrolled and signed in on the same host. */
async function signInViewer(dataDir: string, env: Record<string, string>): Promise<void> {
  const made = await cli(
    env,
    "",
    "operator:create",
    "--email",
    "v@ops.test",
    "--role",
    "viewer",
    "--json",
  );
  assert.equal(made.code, 0, made.stderr);
  await enrolAndSignIn(dataDir, env, "v@ops.test", "the viewer's own password");
}

Deno.test("the CLI on a production data directory without keys refuses, naming the missing one, and creates nothing", async () => {
  await withTempDir(async (dataDir) => {
    await createDatabases(dataDir, { dev: false });
    const before = await snapshot(dataDir);
    const missingBoth = [
      "invalid configuration:",
      "  JWT_SECRET is required outside dev mode (at least 32 bytes)",
      "  ENCRYPTION_KEY is required outside dev mode (32 bytes, base64)",
    ].join("\n");
    // Before: dev mode was guessed from the missing variables; this wrote a random secrets.json
    // beside the live databases and made an admin whose TOTP secret nothing could open.
    const first = await cli(
      { DATA_DIR: dataDir },
      "a long enough password\n",
      "operator:create",
      "--first",
      "--email",
      "admin@ops.test",
    );
    assert.deepEqual([first.code, first.stderr], [2, `error: ${missingBoth}`]);
    const verify = await cli({ DATA_DIR: dataDir }, "", "ledger:verify");
    assert.deepEqual([verify.code, verify.stderr], [2, `error: ${missingBoth}`]);
    const onlyJwt = await cli(
      { DATA_DIR: dataDir, JWT_SECRET: KEYS.JWT_SECRET },
      "",
      "company:list",
    );
    assert.deepEqual([onlyJwt.code, onlyJwt.stderr], [
      2,
      "error: invalid configuration:\n  ENCRYPTION_KEY is required outside dev mode (32 bytes, base64)",
    ]);
    const onlyKey = await cli(
      { DATA_DIR: dataDir, ENCRYPTION_KEY: KEYS.ENCRYPTION_KEY },
      "",
      "company:list",
    );
    assert.deepEqual([onlyKey.code, onlyKey.stderr], [
      2,
      "error: invalid configuration:\n  JWT_SECRET is required outside dev mode (at least 32 bytes)",
    ]);
    assert.deepEqual(await snapshot(dataDir), before, "no secrets.json, lock, session or row");

    // A command that opens no database still runs: it is how the keys are made.
    const generated = await cli({ DATA_DIR: dataDir }, "", "secrets:generate");
    assert.equal(generated.code, 0, generated.stderr);
    assert.deepEqual(await snapshot(dataDir), before);
  });
});

Deno.test("the local path needs a TOTP session for live changes, as the service path does", async () => {
  await withTempDir(async (dataDir) => {
    await createDatabases(dataDir, { dev: false });
    const env = { DATA_DIR: dataDir, ...KEYS };
    const password = "the first admin's password";
    await cli(env, `${password}\n`, "operator:create", "--first", "--email", "a@ops.test");
    // A session without TOTP cannot be had outside dev mode, so no live change runs without it.
    const noCode = await cli(env, `a@ops.test\n${password}\n\n`, "login");
    assert.deepEqual([noCode.code, noCode.stderr], [
      1,
      "error: a TOTP code is required: enter the code of your app",
    ]);
    const line = await cli(env, "", "company:create", "--name", "Acme", "--tin", "123456789");
    assert.deepEqual([line.code, line.stderr], [
      1,
      "error: company:create needs an operator session: sign in with `deno task admin login`",
    ]);
    assert.equal((await snapshot(dataDir)).some((path) => path.includes("secrets.json")), false);
  });
});

Deno.test("a dev-mode data directory is one `deno task dev` marked, whatever the environment holds", async () => {
  await withTempDir(async (dataDir) => {
    await createDatabases(dataDir, { dev: true });
    // No keys in the environment, and none needed: the sandbox's own are in its secrets.json.
    const listed = await cli({ DATA_DIR: dataDir }, "", "company:list", "--json");
    assert.deepEqual([listed.code, JSON.parse(listed.stdout)], [0, { companies: [] }]);
    // Without its secrets file the sandbox is refused rather than given new keys.
    await Deno.remove(`${dataDir}/secrets.json`);
    const refused = await cli({ DATA_DIR: dataDir }, "", "company:list");
    assert.deepEqual([refused.code, refused.stderr], [
      2,
      `error: invalid configuration:\n  ${dataDir} is a dev-mode data directory without its secrets.json: start \`deno task dev\` once, or set ENCRYPTION_KEY`,
    ]);
    assert.equal((await snapshot(dataDir)).some((path) => path.includes("secrets.json")), false);
  });
});

Deno.test("`deno task dev` refuses a production data directory instead of seeding it", async () => {
  await withTempDir(async (dataDir) => {
    await createDatabases(dataDir, { dev: false });
    const before = await snapshot(dataDir);
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", `${root}main.ts`, "--dev"],
      env: { DATA_DIR: dataDir, PORT: String(freePort()), HOST: "127.0.0.1", NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(output.code, 2);
    assert.equal(
      new TextDecoder().decode(output.stderr).trim(),
      `cannot start: ${dataDir} holds databases that \`deno task dev\` did not create: dev mode ` +
        "never runs on a production data directory (start the service without --dev, or use another DATA_DIR)",
    );
    assert.deepEqual(
      (await snapshot(dataDir)).filter((path) => !path.includes("/writer.lock")),
      before,
    );
  });
});

Deno.test("two operators keep their own sessions on one host; --as chooses between them", async () => {
  await withTempDir(async (dataDir) => {
    await createDatabases(dataDir, { dev: false });
    const env = { DATA_DIR: dataDir, ...KEYS };
    await firstAdmin(dataDir, "a@ops.test", "the first admin's password");
    await signInViewer(dataDir, env);
    // Before: one DATA_DIR/operator-session, which the second sign-in overwrote.
    assert.deepEqual(
      (await Array.fromAsync(Deno.readDir(`${dataDir}/operator-sessions`), (e) => e.name)).sort(),
      ["a%40ops.test", "v%40ops.test"],
    );
    const unnamed = await cli(env, "", "operator:list");
    assert.deepEqual([unnamed.code, unnamed.stderr], [
      2,
      "error: several operators are signed in on this host (a@ops.test, v@ops.test): choose one with --as EMAIL",
    ]);
    const asAdmin = await cli(env, "", "operator:list", "--as", "a@ops.test", "--json");
    assert.equal(asAdmin.code, 0, asAdmin.stderr);
    const asViewer = await cli(env, "", "operator:list", "--as", "v@ops.test");
    assert.deepEqual([asViewer.code, asViewer.stderr], [
      1,
      "error: v@ops.test is a viewer: operator:list needs the admin role",
    ]);
    const out = await cli(env, "", "logout", "--as", "v@ops.test");
    assert.equal(out.code, 0, out.stderr);
    const alone = await cli(env, "", "operator:list", "--json");
    assert.equal(alone.code, 0, alone.stderr);
  });
});

Deno.test("the restore drill of the README runs as written: restore, then login and ledger:verify with the service's keys", async () => {
  await withTempDir(async (work) => {
    const dataDir = `${work}/data`;
    await Deno.mkdir(dataDir);
    await createDatabases(dataDir, { dev: false });
    const password = "the first admin's password";
    const secret = await firstAdmin(dataDir, "a@ops.test", password);
    // The checkpoint a scheduled backup takes just before its copy.
    const checkpoint = await cli(
      { DATA_DIR: dataDir, ...KEYS },
      "",
      "audit:checkpoint",
      "--out",
      `${work}/copies`,
    );
    assert.equal(checkpoint.code, 0, checkpoint.stderr);
    const backup = await cli(
      { DATA_DIR: dataDir, ...KEYS },
      "",
      "backup",
      "--out",
      `${work}/b.tar`,
    );
    assert.equal(backup.code, 0, backup.stderr);
    // On another machine: no service, no keys in the shell yet.
    const drill = `${work}/drill`;
    const restored = await cli({}, "", "restore", "--from", `${work}/b.tar`, "--data-dir", drill);
    assert.equal(restored.code, 0, restored.stderr);
    const withoutKeys = await cli({ DATA_DIR: drill }, "", "ledger:verify");
    assert.equal(withoutKeys.code, 2, withoutKeys.stderr);
    const env = { DATA_DIR: drill, ...KEYS };
    // The next TOTP step: the one the first sign-in used is refused as a replay.
    const later = Date.now() + 30_000;
    const login = await cli(
      env,
      `a@ops.test\n${password}\n${totpCodeAt(secret, later)}\n`,
      "login",
    );
    assert.equal(login.code, 0, login.stderr);
    const verified = await cli(env, "", "ledger:verify", "--json");
    assert.deepEqual([verified.code, JSON.parse(verified.stdout || "{}")], [0, {
      live: "balanced",
      test: "balanced",
    }]);
    const audit = await cli(env, "", "audit:verify", "--checkpoints", `${work}/copies`, "--json");
    assert.equal(audit.code, 0, audit.stderr);
    assert.equal(JSON.parse(audit.stdout).checkpoints, 1);
    assert.equal((await snapshot(drill)).some((path) => path.includes("secrets.json")), false);
  });
});

Deno.test("a first install reaches two admins by the documented path, from an empty data directory", async () => {
  await withTempDir(async (dataDir) => {
    const port = freePort();
    const env = { DATA_DIR: dataDir, ...KEYS };
    // The service's first start, outside dev mode, creates and migrates the databases.
    const service = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", `${root}main.ts`],
      env: {
        ...env,
        PORT: String(port),
        HOST: "127.0.0.1",
        LOG_FORMAT: "off",
        LIVE_NOTIFICATIONS: "off",
      },
      stdout: "null",
      stderr: "null",
    }).spawn();
    try {
      for (let i = 0; i < 600; i++) {
        const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) =>
          r.body?.cancel().then(() => r.ok)
        ).catch(() => false);
        if (ready) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await firstAdmin(dataDir, "first@ops.test", "the first admin's password");
      // Before: creating an admin needed another admin's approval, which nobody could give.
      const second = await cli(
        env,
        "",
        "operator:create",
        "--email",
        "second@ops.test",
        "--role",
        "admin",
        "--json",
      );
      assert.equal(second.code, 0, second.stderr);
      const invited = JSON.parse(second.stdout);
      assert.deepEqual(
        [
          invited.email,
          invited.role,
          invited.enrollment,
          invited.enrollment_sent_to,
          invited.totp_uri,
        ],
        ["second@ops.test", "admin", "emailed", "second@ops.test", undefined],
      );
      await enrolAndSignIn(dataDir, env, "second@ops.test", "the second admin's password");

      // With two admins, a third waits for the one who did not ask.
      const third = await cli(
        env,
        "",
        "operator:create",
        "--email",
        "third@ops.test",
        "--role",
        "admin",
        "--as",
        "first@ops.test",
        "--json",
      );
      assert.equal(third.code, 0, third.stderr);
      const approval = JSON.parse(third.stdout);
      assert.equal(approval.status, "pending_approval");
      const own = await cli(
        env,
        "",
        "approvals:approve",
        "--id",
        approval.approval_id,
        "--as",
        "first@ops.test",
      );
      assert.equal(own.code, 1);
      assert.match(own.stderr, /another admin must decide it/);
      const approved = await cli(
        env,
        "",
        "approvals:approve",
        "--id",
        approval.approval_id,
        "--as",
        "second@ops.test",
        "--json",
      );
      assert.equal(approved.code, 0, approved.stderr);
      assert.equal(JSON.parse(approved.stdout).status, "approved");
      const listed = await cli(env, "", "operator:list", "--as", "second@ops.test", "--json");
      assert.deepEqual(
        JSON.parse(listed.stdout).operators.map((
          o: { email: string; role: string },
        ) => [o.email, o.role]),
        [["first@ops.test", "admin"], ["second@ops.test", "admin"], ["third@ops.test", "admin"]],
      );
      // The sole-admin invitation is audited as such.
      const audit = await cli(
        env,
        "",
        "audit:list",
        "--action",
        "operator:create",
        "--as",
        "first@ops.test",
        "--json",
      );
      const rows = JSON.parse(audit.stdout).rows as { after: Record<string, unknown> }[];
      assert.deepEqual(
        rows.map((row) => [row.after.email, row.after.second_admin ?? null]).reverse(),
        [
          ["first@ops.test", null],
          ["second@ops.test", "invited by the only admin, without approval"],
          ["third@ops.test", null],
        ],
      );
    } finally {
      service.kill("SIGTERM");
      await service.status;
    }
  });
});
