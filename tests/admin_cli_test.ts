/** The operator CLI as an operator runs it, and the admin endpoint it uses while the service runs. */
import assert from "node:assert/strict";
import { createClient } from "@libsql/client";
import { freePort } from "../bench/service.ts";
import { createApp } from "../routes/app.ts";
import { runDueJobs } from "../db/scheduler.ts";
import { scheduleJob } from "../db/scheduler_store.ts";
import { fundAcmeAuto, openHttpFixture, withHttpFixture } from "./http_fixture.ts";
import { openTempDatabase } from "./helpers.ts";
import { createDatabases } from "./admin_cli_helpers.ts";
import {
  ADMIN_TOKEN,
  adminCall,
  enrollmentCodeOf,
  makeOperator,
  type TestOperator,
} from "./operator_helpers.ts";
import { api, payee } from "./api_helpers.ts";
import { addFunds } from "../lib/funding/store.ts";
import { coreCommands } from "../lib/admin/commands.ts";
import { totpCodeAt } from "../lib/operators/totp.ts";
import { validSettingsJson } from "./bank_helpers.ts";

const root = new URL("..", import.meta.url).pathname;

/** The CLI in dev mode (no JWT_SECRET or ENCRYPTION_KEY), `stdin` answering its prompts. */
export async function adminWithInput(dataDir: string, stdin: string, ...args: string[]) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${root}cli/admin.ts`, ...args],
    env: { DATA_DIR: dataDir, NO_COLOR: "1" },
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
    stderr: new TextDecoder().decode(output.stderr),
  };
}

/**
 * The CLI without input. Every `--json` answer is checked for the one key style: snake_case, like
 * the API (no key anywhere in it has an uppercase letter).
 */
async function admin(dataDir: string, ...args: string[]) {
  const result = await adminWithInput(dataDir, "", ...args);
  if (args.includes("--json") && result.code === 0) assertSnakeCaseKeys(JSON.parse(result.stdout));
  return result;
}

/** Every key of a JSON value, at any depth. */
function keysOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(keysOf);
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([key, item]) => [key, ...keysOf(item)]);
}

function assertSnakeCaseKeys(value: unknown): void {
  assert.deepEqual(keysOf(value).filter((key) => /[A-Z]/.test(key)), [], JSON.stringify(value));
}

/** The first admin of a fresh DATA_DIR, signed in (dev mode: no TOTP code). */
async function signInFirstAdmin(dataDir: string): Promise<void> {
  const created = await adminWithInput(
    dataDir,
    "first admin password\n",
    "operator:create",
    "--first",
    "--email",
    "admin@ops.test",
  );
  assert.equal(created.code, 0, created.stderr);
  const login = await adminWithInput(dataDir, "admin@ops.test\nfirst admin password\n\n", "login");
  assert.equal(login.code, 0, login.stderr);
}

Deno.test("CLI on a stopped service: every command, --json output, refusals and usage errors", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "disbursement-cli-" });
  try {
    await createDatabases(dataDir, { dev: true });
    const help = await admin(dataDir, "help");
    assert.equal(help.code, 0);
    for (
      const name of [
        "company:create",
        "user:create",
        "user:add",
        "line:create",
        "key:rotate",
        "key:revoke",
        "company:list",
        "fees:set",
      ]
    ) {
      assert.match(help.stdout, new RegExp(`^  ${name} `, "m"));
    }
    assert.equal((await admin(dataDir)).code, 2, "no command is a usage error");
    const unsigned = await admin(dataDir, "company:create", "--name", "Acme", "--tin", "123456789");
    assert.deepEqual([unsigned.code, unsigned.stderr.trim()], [
      1,
      "error: company:create needs an operator session: sign in with `deno task admin login`",
    ]);
    await signInFirstAdmin(dataDir);

    const company = await admin(
      dataDir,
      "company:create",
      "--name",
      "Acme Mutual",
      "--tin",
      "123456789",
      "--json",
    );
    assert.equal(company.code, 0, company.stderr);
    const created = JSON.parse(company.stdout);
    assert.equal(created.name, "Acme Mutual");
    assert.match(created.company_api_key, /^cak_/);

    const duplicate = await admin(
      dataDir,
      "company:create",
      "--name",
      "Acme",
      "--tin",
      "123456789",
    );
    assert.equal(duplicate.code, 1);
    assert.equal(duplicate.stderr.trim(), "error: a company with TIN 123456789 already exists");
    const duplicateJson = await admin(
      dataDir,
      "company:create",
      "--name",
      "Acme",
      "--tin",
      "123456789",
      "--json",
    );
    assert.deepEqual(JSON.parse(duplicateJson.stderr), {
      error: { code: "duplicate_tin", message: "a company with TIN 123456789 already exists" },
    });

    const usage: [string[], RegExp][] = [
      [
        ["company:create", "--name", "X", "--tin", "12345"],
        /tin "12345": a TIN is exactly 9 digits/,
      ],
      [["company:create", "--name", "X"], /company:create needs --tin/],
      [
        ["company:create", "--name", "X", "--tin", "111111111", "--color", "red"],
        /company:create takes no --color/,
      ],
      [["company:delete"], /unknown command "company:delete"/],
      [
        ["fees:set", "--tin", "123456789", "--method", "1", "--payor", "1.005"],
        /--payor "1.005": dollars with at most two decimals/,
      ],
      [["fees:set", "--tin", "123456789", "--method", "9"], /method 9/],
      [["company:create", "--name"], /--name needs a value/],
    ];
    for (const [args, message] of usage) {
      const result = await admin(dataDir, ...args);
      assert.equal(result.code, 2, args.join(" "));
      assert.match(result.stderr, message, args.join(" "));
    }

    const user = JSON.parse(
      (await admin(dataDir, "user:create", "--email", "ops@acme.test", "--json")).stdout,
    );
    assert.match(user.api_key_test, /^uak_test_/);
    assert.equal(
      (await admin(dataDir, "user:add", "--email", "ops@acme.test", "--tin", "123456789")).code,
      0,
    );
    assert.equal(
      (await admin(dataDir, "user:add", "--email", "ops@acme.test", "--tin", "123456789")).code,
      1,
    );
    const line = JSON.parse(
      (await admin(dataDir, "line:create", "--tin", "123456789", "--code", "auto", "--json"))
        .stdout,
    );
    assert.match(line.key_live, /^sk_live_/);
    const fees = await admin(
      dataDir,
      "fees:set",
      "--tin",
      "123456789",
      "--method",
      "1",
      "--payor",
      "1.50",
      "--service",
      "0.25",
      "--json",
    );
    assert.deepEqual(JSON.parse(fees.stdout), {
      company: "Acme Mutual",
      payment_method_id: 1,
      currency: "USD",
      payor_fee: 1.5,
      payee_fee: 0,
      service_fee: 0.25,
    }, "dollars, as the flags take them");
    const rotated = JSON.parse(
      (await admin(dataDir, "key:rotate", "--key", line.key_test, "--json")).stdout,
    );
    assert.match(rotated.secret, /^sk_test_/);
    assert.equal((await admin(dataDir, "key:revoke", "--key", rotated.key_id)).code, 0);
    const revokedAgain = await admin(dataDir, "key:revoke", "--key", rotated.key_id);
    assert.equal(revokedAgain.code, 1);
    const verified = await admin(dataDir, "ledger:verify", "--json");
    assert.equal(verified.code, 0, verified.stderr);
    assert.deepEqual(JSON.parse(verified.stdout), { live: "balanced", test: "balanced" });
    const csv = await admin(
      dataDir,
      "tieout",
      "--tin",
      "123456789",
      "--line",
      "auto",
      "--date",
      "2026-01-05",
      "--format",
      "csv",
    );
    assert.equal(csv.code, 0, csv.stderr);
    assert.equal(
      csv.stdout,
      "line,date,currency,opening,funded,returned_funding,returned,disbursed,fees,closing,difference\n" +
        "auto,2026-01-05,USD,0.00,0.00,0.00,0.00,0.00,0.00,0.00,0.00\n" +
        "\n" +
        "funding_uuid,payment_method,amount,large_disbursement,disbursement_uuid,movements,released_disbursement_uuid,released_at\n" +
        "\n" +
        "transaction_id,kind,payout_id,claim_or_uuid,posted_at,disbursed,fees,returned\n",
    );
    assert.equal(
      (await admin(
        dataDir,
        "tieout",
        "--tin",
        "123456789",
        "--line",
        "nope",
        "--date",
        "2026-01-05",
      )).code,
      1,
    );
    assert.equal(
      (await admin(
        dataDir,
        "tieout",
        "--tin",
        "123456789",
        "--line",
        "auto",
        "--date",
        "2026-02-30",
      )).code,
      2,
    );
    const retry = await admin(
      dataDir,
      "retry:set",
      "--tin",
      "123456789",
      "--max",
      "2",
      "--reasons",
      "rail_unavailable,R01",
      "--json",
    );
    assert.deepEqual(JSON.parse(retry.stdout), {
      tin: "123456789",
      retry_max: 2,
      retry_reasons: ["rail_unavailable", "R01"],
    });
    assert.equal(
      (await admin(dataDir, "retry:set", "--tin", "123456789", "--max", "11", "--reasons", "x"))
        .code,
      2,
    );
    // A company made by company:create falls back to a mailed check 30 days after create.
    const deadlines = await admin(
      dataDir,
      "obligations:set",
      "--tin",
      "123456789",
      "--offer-expiry",
      "hold",
      "--holder-state",
      "de",
      "--json",
    );
    assert.deepEqual(JSON.parse(deadlines.stdout), {
      tin: "123456789",
      offer_expiry: "hold",
      pay_by_days: 30,
      holder_state: "DE",
      sandbox_dormancy_days: null,
    });
    const badDays = await admin(
      dataDir,
      "obligations:set",
      "--tin",
      "123456789",
      "--pay-by-days",
      "0",
    );
    assert.deepEqual(
      [badDays.code, badDays.stderr.trim()],
      [2, "error: --pay-by-days: a whole number of days from 1 to 365, or none"],
    );
    const noWire = await admin(dataDir, "wire:receive", "--funding", "fund_missing");
    assert.equal(noWire.code, 1);
    assert.equal(noWire.stderr.trim(), "error: no funding fund_missing in live");
    // A balance its entries do not explain makes ledger:verify fail.
    const tamper = createClient({ url: `file:${dataDir}/test.db` });
    await tamper.execute(
      `INSERT INTO ledger_accounts (id, company_id, line_id, code, balance_cents)
       SELECT 'acct_tampered', company_id, id, 'available', 5 FROM business_lines LIMIT 1`,
    );
    tamper.close();
    const differs = await admin(dataDir, "ledger:verify", "--environment", "test");
    assert.equal(differs.code, 1);
    assert.match(
      differs.stderr,
      /1 ledger differences found: .*available shows 5 cents; its entries sum to 0/,
    );
    const listed = JSON.parse((await admin(dataDir, "company:list", "--json")).stdout);
    assert.deepEqual(
      listed.companies.map((
        c: { tin: string; lines: string[]; users: string[] },
      ) => [c.tin, c.lines, c.users]),
      [
        ["123456789", ["auto"], ["ops@acme.test"]],
      ],
    );
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("CLI while the service runs: commands go through the loopback admin endpoint", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "disbursement-cli-live-" });
  const port = freePort();
  const service = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${root}main.ts`, "--dev"],
    env: { DATA_DIR: dataDir, PORT: String(port), LOG_FORMAT: "off" },
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
    // The sandbox's seeded admin signs in through the endpoint (dev mode: no TOTP code).
    const { operator } = JSON.parse(
      await Deno.readTextFile(`${dataDir}/sandbox-credentials.json`),
    );
    const login = await adminWithInput(
      dataDir,
      `${operator.email}\n${operator.password}\n\n`,
      "login",
    );
    assert.equal(login.code, 0, login.stderr);
    const sessionFile = `${dataDir}/operator-sessions/${encodeURIComponent(operator.email)}`;
    assert.equal((await Deno.stat(sessionFile)).mode! & 0o777, 0o600);
    const created = await admin(
      dataDir,
      "company:create",
      "--name",
      "Cedar Re",
      "--tin",
      "555555555",
      "--json",
    );
    assert.equal(created.code, 0, created.stderr);
    assert.equal(JSON.parse(created.stdout).tin, "555555555");
    const duplicate = await admin(
      dataDir,
      "company:create",
      "--name",
      "Cedar Re",
      "--tin",
      "555555555",
    );
    assert.equal(duplicate.code, 1);
    assert.match(duplicate.stderr, /a company with TIN 555555555 already exists/);
    const bad = await admin(dataDir, "company:create", "--name", "Cedar Re", "--tin", "55");
    assert.equal(bad.code, 2);
    const listed = JSON.parse((await admin(dataDir, "company:list", "--json")).stdout);
    assert.deepEqual(listed.companies.map((c: { name: string }) => c.name), [
      "Acme Mutual",
      "Beacon Casualty",
      "Cedar Re",
    ]);

    // A relative --file means the shell's directory: the CLI resolves it before the service opens it.
    const workDir = await Deno.makeTempDir({ prefix: "disbursement-cli-cwd-" });
    await Deno.writeTextFile(`${workDir}/bank.json`, JSON.stringify(validSettingsJson()));
    const bankSet = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        `${root}cli/admin.ts`,
        "bank:set",
        "--tin",
        "555555555",
        "--file",
        "bank.json",
        "--environment",
        "test",
        "--json",
      ],
      cwd: workDir,
      env: { DATA_DIR: dataDir, NO_COLOR: "1" },
    }).output();
    await Deno.remove(workDir, { recursive: true });
    const decoded = new TextDecoder().decode(bankSet.stderr);
    assert.equal(bankSet.code, 0, decoded);
    assert.equal(JSON.parse(new TextDecoder().decode(bankSet.stdout)).environment, "test");
  } finally {
    service.kill("SIGTERM");
    await service.status;
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("admin endpoint: loopback peers with the token only", async () => {
  const f = await openHttpFixture();
  try {
    const app = createApp({ ...f.deps, adminToken: "t".repeat(43) });
    const viewer = await makeOperator(
      f.deps,
      { email: "viewer@ops.test", role: "viewer" },
      f.clock.now(),
    );
    const call = (address: string, token: string) =>
      app.request("/admin/commands/company:list", {
        method: "POST",
        headers: {
          Authorization: `Bearer ${token}`,
          "Content-Type": "application/json",
          "X-Operator-Session": viewer.token!,
        },
        body: JSON.stringify({ flags: {} }),
      }, { remoteAddr: { transport: "tcp", hostname: address, port: 50000 } });
    const remote = await call("10.0.0.5", "t".repeat(43));
    assert.equal(remote.status, 403);
    assert.deepEqual(await remote.json(), {
      error: { code: "not_loopback", message: "the admin endpoint answers loopback only" },
    });
    const wrongToken = await call("127.0.0.1", "x".repeat(43));
    assert.equal(wrongToken.status, 401);
    await wrongToken.body?.cancel();
    const listed = await call("127.0.0.1", "t".repeat(43));
    assert.equal(listed.status, 200);
    assert.deepEqual((await listed.json()).result.companies.map((c: { tin: string }) => c.tin), [
      "111111111",
      "222222222",
    ]);
    const noConnInfo = await app.request("/admin/commands/company:list", { method: "POST" });
    assert.equal(noConnInfo.status, 403, "without connection information the peer is not trusted");
    await noConnInfo.body?.cancel();
    assert.equal(
      (await f.app.request("/admin/commands/company:list", { method: "POST" })).status,
      404,
      "not mounted without a token",
    );
  } finally {
    await f.close();
  }
});

Deno.test("a key revoked through the admin endpoint stops at once, although its lookup was cached", async () => {
  const f = await openHttpFixture();
  try {
    const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
    const use = () =>
      app.request("/v1/ledgers/auto/balance", {
        headers: { Authorization: `Bearer ${f.cast.acmeAutoKeyTest}` },
      });
    assert.equal((await use()).status, 200);
    const admin = await makeOperator(
      f.deps,
      { email: "admin@ops.test", role: "admin" },
      f.clock.now(),
    );
    const revoked = await adminCall(app, admin.token)("key:revoke", {
      key: f.cast.acmeAutoKeyTest,
    });
    assert.equal(revoked.status, 200);
    const after = await use();
    assert.equal(after.status, 401);
    assert.equal((await after.json() as { detail: string }).detail, "the line key was revoked");
  } finally {
    await f.close();
  }
});

Deno.test("jobs:list --parked and jobs:retry: a parked ACH cutoff is listed, re-queued, and runs once", async () => {
  const f = await openHttpFixture();
  try {
    const test = f.deps.databases.test;
    await fundAcmeAuto(f, 12_345, "ACH");
    const { rows } = await test.readClient.execute(
      "SELECT id, subject_id, due_at FROM scheduled_jobs WHERE kind = 'rail.cutoff'",
    );
    assert.equal(rows.length, 1, "the ACH funding's debit waits for the next cutoff");
    const [jobId, dueAt] = [String(rows[0].id), Number(rows[0].due_at)];
    const failure = "the bank file could not be built";

    // The cutoff fails on something a retry would not cure: it is parked.
    const originalError = console.error;
    console.error = () => {};
    try {
      await runDueJobs(test, f.cast.acme.id, dueAt, {
        ...f.deps.jobHandlers.test,
        "rail.cutoff": () => Promise.reject(new Error(failure)),
      });
    } finally {
      console.error = originalError;
    }
    f.clock.set(dueAt + 3_600_000);
    // A clerk retries jobs; a viewer would only list them.
    const clerk = await makeOperator(
      f.deps,
      { email: "clerk@ops.test", role: "clerk" },
      f.clock.now(),
    );
    const command = adminCall(createApp({ ...f.deps, adminToken: ADMIN_TOKEN }), clerk.token);

    const parked = await command("jobs:list", { parked: "true", environment: "test" });
    assert.equal(parked.status, 200);
    assert.deepEqual(parked.body, {
      result: {
        environment: "test",
        parked: true,
        jobs: [{
          id: jobId,
          kind: "rail.cutoff",
          subject: "ach",
          company_id: f.cast.acme.id,
          due: new Date(dueAt).toISOString(),
          parked_at: new Date(dueAt).toISOString(),
          attempts: 1,
          error: failure,
        }],
        has_more: false,
      },
    });
    assert.deepEqual(
      (await command("jobs:list", { parked: "true" })).body.result,
      { environment: "live", parked: true, jobs: [], has_more: false },
      "live by default, and it has no parked job",
    );

    const unknown = await command("jobs:retry", { job: "job_missing", environment: "test" });
    assert.deepEqual([unknown.status, unknown.body], [404, {
      error: { code: "job_not_found", message: "no job job_missing in test" },
    }]);
    const neither = await command("jobs:retry", { environment: "test" });
    assert.deepEqual([neither.status, neither.body.error.code], [400, "invalid_input"]);

    const retried = await command("jobs:retry", { job: jobId, environment: "test" });
    assert.deepEqual([retried.status, retried.body], [200, {
      result: { environment: "test", requeued: [jobId] },
    }]);
    const pending = await command("jobs:list", { environment: "test" });
    assert.deepEqual(
      pending.body.result.jobs.map((job: Record<string, unknown>) => [job.id, job.due, job.error]),
      [[jobId, new Date(f.clock.now()).toISOString(), failure]],
      "due now, its error kept until a run succeeds",
    );
    assert.deepEqual(
      (await command("jobs:list", { parked: "true", environment: "test" })).body
        .result.jobs,
      [],
    );

    // The next sweep runs it with the real handler, once.
    await runDueJobs(test, f.cast.acme.id, f.clock.now(), f.deps.jobHandlers.test);
    const done = await test.readClient.execute({
      sql: "SELECT done_at, error, attempts FROM scheduled_jobs WHERE id = ?",
      args: [jobId],
    });
    assert.deepEqual(
      [done.rows[0].done_at, done.rows[0].error, done.rows[0].attempts],
      [f.clock.now(), null, 2],
    );
    const again = await command("jobs:retry", { job: jobId, environment: "test" });
    assert.deepEqual([again.status, again.body], [409, {
      error: {
        code: "job_not_parked",
        message: `job ${jobId} is not parked: it is done without an error`,
      },
    }]);
  } finally {
    await f.close();
  }
});

Deno.test("CLI jobs:list --parked and jobs:retry on a stopped service: switches, refusals and exit codes", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "disbursement-cli-jobs-" });
  try {
    await createDatabases(dataDir, { dev: true });
    const live = await openTempDatabase(dataDir, "live");
    const jobId = await live.writer.write(async (tx) => {
      await tx.execute(
        "INSERT INTO companies (id, name, tin, created_at) VALUES ('co_1', 'Acme', '123456789', 0)",
      );
      const id = await scheduleJob(
        tx,
        { companyId: "co_1", kind: "payout.complete", subjectId: "po_1", dueAt: 1_000 },
        0,
      );
      await tx.execute({
        sql: "UPDATE scheduled_jobs SET done_at = 1000, attempts = 1, error = ? WHERE id = ?",
        args: ["no handler for job kind payout.complete", id],
      });
      return id;
    });
    await live.close();

    await signInFirstAdmin(dataDir);
    const listed = await admin(dataDir, "jobs:list", "--parked", "--json");
    assert.equal(listed.code, 0, listed.stderr);
    const listing = JSON.parse(listed.stdout);
    assert.deepEqual(
      [listing.environment, listing.jobs.map((job: { id: string }) => job.id)],
      ["live", [jobId]],
    );
    const unknown = await admin(dataDir, "jobs:retry", "--job", "job_missing");
    assert.deepEqual([unknown.code, unknown.stderr.trim()], [
      1,
      "error: no job job_missing in live",
    ]);
    const usage: [string[], RegExp][] = [
      [["jobs:retry"], /either --job <id> or --all-parked/],
      [["jobs:retry", "--job", jobId, "--all-parked"], /either --job <id> or --all-parked/],
      [["jobs:list", "--parked=yes"], /--parked takes no value/],
    ];
    for (const [args, message] of usage) {
      const result = await admin(dataDir, ...args);
      assert.equal(result.code, 2, args.join(" "));
      assert.match(result.stderr, message, args.join(" "));
    }
    const retried = await admin(dataDir, "jobs:retry", "--all-parked");
    assert.equal(retried.code, 0, retried.stderr);
    assert.match(retried.stdout, /^environment: live$/m);
    assert.match(retried.stdout, new RegExp(jobId));
    const after = JSON.parse((await admin(dataDir, "jobs:list", "--parked", "--json")).stdout);
    assert.deepEqual(after.jobs, []);
    const pending = JSON.parse((await admin(dataDir, "jobs:list", "--json")).stdout);
    assert.deepEqual(pending.jobs.map((job: { id: string }) => job.id), [jobId]);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("every core command answers in snake_case keys, and an environment-specific one names its environment", async () => {
  await withHttpFixture(async (f) => {
    const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
    const now = f.clock.now();
    const alice = await makeOperator(f.deps, { email: "alice@ops.test", role: "admin" }, now);
    const bruno = await makeOperator(f.deps, { email: "bruno@ops.test", role: "admin" }, now);
    const ran = new Set<string>();
    const run = async (
      operator: TestOperator,
      name: string,
      flags: Record<string, string>,
      input: Record<string, string> = {},
    ) => {
      const answer = await adminCall(app, operator.token)(name, flags, input);
      assert.equal(answer.status, 200, `${name}: ${JSON.stringify(answer.body)}`);
      assertSnakeCaseKeys(answer.body.result);
      ran.add(name);
      return answer.body.result;
    };
    const pendingLiveWire = async () => {
      const added = await f.deps.databases.live.writer.write((tx) =>
        addFunds(
          tx,
          {
            companyId: f.cast.acme.id,
            lineId: f.cast.acme.autoLineId,
            paymentMethod: "WireTransfer",
            amountCents: 10_000,
            description: "live wire",
            largeDisbursement: false,
            requestFingerprint: crypto.randomUUID(),
          },
          "live",
          f.clock.now(),
        )
      );
      if (!added.ok) throw new Error(added.message);
      return added.value.funding.id;
    };

    const cedar = await run(alice, "company:create", { name: "Cedar Re", tin: "555555555" });
    await run(alice, "user:create", { email: "ops@cedar.test" });
    await run(alice, "user:add", { email: "ops@cedar.test", tin: "555555555" });
    const line = await run(alice, "line:create", { tin: "555555555", code: "property" });
    assert.match(line.company_id, /^co_/);
    const rotated = await run(alice, "key:rotate", { key: line.key_test });
    assert.deepEqual(rotated.environments, ["test"]);
    const revoked = await run(alice, "key:revoke", { key: cedar.company_api_key });
    assert.deepEqual(revoked.environments, ["live", "test"], "a company key is in both");
    await run(alice, "company:list", {});
    await run(alice, "fees:set", { tin: f.cast.acme.tin, method: "1", payor: "1.50" });
    await run(alice, "retry:set", { tin: f.cast.acme.tin, max: "1", reasons: "rail_unavailable" });
    assert.deepEqual(await run(alice, "payee-wait:set", { tin: f.cast.acme.tin, days: "10" }), {
      tin: f.cast.acme.tin,
      payee_wait_days: 10,
    });

    const wire = await pendingLiveWire();
    const asked = await run(alice, "wire:receive", { funding: wire });
    assert.deepEqual([asked.environment, asked.funding_id], ["live", wire]);
    await run(bruno, "approvals:list", {});
    await run(bruno, "approvals:approve", { id: asked.approval_id });
    const rejectedWire = await run(alice, "wire:receive", { funding: await pendingLiveWire() });
    await run(bruno, "approvals:reject", { id: rejectedWire.approval_id, reason: "not seen" });

    await fundAcmeAuto(f, 5_000, "ACH");
    const { rows: [achFunding] } = await f.deps.databases.test.readClient.execute(
      "SELECT id FROM fundings WHERE payment_method = 'ACH'",
    );
    assert.deepEqual(
      await run(alice, "funding:return", { funding: String(achFunding.id), environment: "test" }),
      { environment: "test", funding_id: String(achFunding.id), status: "Returned" },
    );

    await fundAcmeAuto(f, 100_000);
    const created = await api(f, "POST", "/api/disbursements", {
      disbursement_uuid: "CLM-KEYS",
      large_disbursement: false,
      payees: [payee("success+paypal", 250, { allowed_payment_method_ids: [7] })],
    });
    assert.equal(created.status, 201);
    await created.body?.cancel();
    // The PayPal batch goes at the next five-minute cutoff; its first poll a minute on completes it.
    const advanced = await api(f, "POST", "/api/sandbox/clock/advance", { seconds: 6 * 60 });
    await advanced.body?.cancel();
    const { rows: [paid] } = await f.deps.databases.test.readClient.execute(
      "SELECT id FROM payouts WHERE status = 'completed'",
    );
    const returned = await run(alice, "payout:late-return", {
      payout: String(paid.id),
      reason: "refunded",
      environment: "test",
    });
    assert.equal(returned.environment, "test");
    const { rows: [event] } = await f.deps.databases.test.readClient.execute(
      "SELECT id FROM events LIMIT 1",
    );
    const replayed = await run(alice, "event:replay", {
      event: String(event.id),
      environment: "test",
    });
    assert.equal(replayed.environment, "test");
    assert.equal((await run(alice, "jobs:list", { environment: "test" })).environment, "test");
    assert.equal(
      (await run(alice, "jobs:retry", { "all-parked": "true", environment: "test" })).environment,
      "test",
    );
    await run(alice, "ledger:verify", {});
    const tieOut = { tin: f.cast.acme.tin, line: "auto", date: "2026-01-05", environment: "test" };
    assert.equal((await run(alice, "tieout", tieOut)).environment, "test");
    assert.equal((await run(alice, "tieout", { ...tieOut, format: "csv" })).environment, "test");

    const signedIn = await run(alice, "login", {}, {
      email: bruno.email,
      password: bruno.password,
      code: totpCodeAt(bruno.totpSecret, f.clock.now() + 30_000),
    });
    await run({ ...bruno, token: signedIn.session_token }, "logout", {});
    await run(alice, "operator:create", { email: "clerk@ops.test", role: "clerk" });
    await run(alice, "operator:reset", { email: "clerk@ops.test" });
    const enrolled = await run(alice, "enroll", {}, {
      code: await enrollmentCodeOf(f.deps, "clerk@ops.test"),
      password: "the clerk's own password",
    });
    assert.match(enrolled.totp_uri, /^otpauth:/);
    await run(alice, "operator:role", { email: "clerk@ops.test", role: "viewer" });
    const raised = await run(alice, "operator:role", { email: "clerk@ops.test", role: "admin" });
    assert.equal(raised.status, "pending_approval");
    await run(alice, "operator:password", {}, {
      current: alice.password,
      code: totpCodeAt(alice.totpSecret, now + 30_000),
      password: "alice's next password",
    });
    await run(alice, "operator:disable", { email: "clerk@ops.test" });
    await run(alice, "operator:list", {});
    const audit = await run(alice, "audit:list", { environment: "test" });
    assert.deepEqual(audit.environments, ["test"]);
    await run(alice, "audit:verify", {});
    const dir = await Deno.makeTempDir({ prefix: "disbursement-checkpoints-" });
    await run(alice, "audit:checkpoint", { out: dir });
    assert.equal((await run(bruno, "audit:verify", { checkpoints: dir })).checkpoints, 1);
    await Deno.remove(dir, { recursive: true });
    assert.match((await run(bruno, "audit:public-key", {})).public_key, /^ed25519:/);

    assert.deepEqual([...ran].sort(), Object.keys(coreCommands).sort(), "every core command ran");
  });
});
