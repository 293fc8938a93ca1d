/**
 * The operator CLI must not act on the wrong data (issue 21): it never creates a database, it
 * refuses a DATA_DIR holding none and says where it looked, and an environment-specific command
 * names the environment it acted on, or looked in when it found nothing.
 */
import assert from "node:assert/strict";
import { addFunds } from "../lib/funding/store.ts";
import { runWithoutDatabases } from "../lib/admin/commands.ts";
import { openTempDatabase, withTempDir } from "./helpers.ts";
import { createDatabases, markDevSandbox } from "./admin_cli_helpers.ts";

const root = new URL("..", import.meta.url).pathname;

/** The CLI in dev mode with `env` (DATA_DIR among it), from `cwd`, `stdin` answering its prompts. */
async function cli(
  options: { env: Record<string, string>; cwd?: string; stdin?: string },
  ...args: string[]
) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${root}cli/admin.ts`, ...args],
    env: { NO_COLOR: "1", ...options.env },
    cwd: options.cwd,
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(options.stdin ?? ""));
  await writer.close();
  const output = await child.output();
  return {
    code: output.code,
    stdout: new TextDecoder().decode(output.stdout),
    stderr: new TextDecoder().decode(output.stderr).trim(),
  };
}

const entriesOf = async (dir: string) =>
  (await Array.fromAsync(Deno.readDir(dir))).map((entry) => entry.name).sort();

const noDatabases = (dir: string, missing: string[], command: string) =>
  `no databases in ${dir}: ${missing.join(" and ")} ${
    missing.length === 1 ? "does" : "do"
  } not exist, and the CLI never creates a database. Point DATA_DIR at the service's data ` +
  `directory: DATA_DIR=/path/to/data deno task admin ${command}`;

Deno.test("the CLI refuses a DATA_DIR without databases, naming where it looked, and creates nothing", async () => {
  await withTempDir(async (dir) => {
    const env = { DATA_DIR: dir };
    const both = [`${dir}/test.db`, `${dir}/live.db`];
    // Before: exit 0 with `companies: []`, from two empty databases it had just created.
    const listed = await cli({ env }, "company:list");
    assert.deepEqual([listed.code, listed.stdout, listed.stderr], [
      1,
      "",
      `error: ${noDatabases(dir, both, "company:list")}`,
    ]);
    const json = await cli({ env }, "company:list", "--json");
    assert.deepEqual([json.code, JSON.parse(json.stderr)], [1, {
      error: { code: "databases_not_found", message: noDatabases(dir, both, "company:list") },
    }]);
    // Public commands that open the databases are refused alike: the first admin, a sign-in.
    const first = await cli(
      { env, stdin: "a long enough password\n" },
      "operator:create",
      "--first",
      "--email",
      "admin@ops.test",
    );
    assert.deepEqual(
      [first.code, first.stderr],
      [1, `error: ${noDatabases(dir, both, "operator:create")}`],
    );
    const login = await cli({ env, stdin: "admin@ops.test\npassword\n\n" }, "login");
    assert.deepEqual([login.code, login.stderr], [1, `error: ${noDatabases(dir, both, "login")}`]);
    assert.deepEqual(await entriesOf(dir), [], "no database, lock, secret or session file");

    const help = await cli({ env }, "help");
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /^usage: deno task admin <command>/);
    const usage = await cli({ env }, "company:create", "--name", "Acme");
    assert.deepEqual([usage.code, usage.stderr], [
      2,
      "error: company:create needs --tin (9-digit TIN)",
    ], "a usage error is still told first");
    assert.deepEqual(await entriesOf(dir), []);

    // A command that needs no database (needsDatabases: false) runs, and creates nothing either.
    const secrets = await cli({ env }, "secrets:generate");
    assert.equal(secrets.code, 0, secrets.stderr);
    assert.match(secrets.stdout, /^JWT_SECRET=\S{32,}\nENCRYPTION_KEY=\S{44}\n$/);
    assert.deepEqual(await entriesOf(dir), []);
  });
});

Deno.test("a relative DATA_DIR that does not exist is named by its absolute path and not created", async () => {
  await withTempDir(async (cwd) => {
    const refused = await cli({ env: { DATA_DIR: "./data" }, cwd }, "ledger:verify");
    assert.deepEqual([refused.code, refused.stderr], [
      1,
      `error: ${
        noDatabases(`${cwd}/data`, [`${cwd}/data/test.db`, `${cwd}/data/live.db`], "ledger:verify")
      }`,
    ]);
    assert.deepEqual(await entriesOf(cwd), []);
  });
});

Deno.test("one database missing is refused too, naming it; with both the CLI answers", async () => {
  await withTempDir(async (dir) => {
    await (await openTempDatabase(dir, "test")).close();
    const before = await entriesOf(dir);
    const refused = await cli({ env: { DATA_DIR: dir } }, "company:list");
    assert.deepEqual([refused.code, refused.stderr], [
      1,
      `error: ${noDatabases(dir, [`${dir}/live.db`], "company:list")}`,
    ]);
    assert.deepEqual(await entriesOf(dir), before, "live.db is not created");

    await (await openTempDatabase(dir, "live")).close();
    await markDevSandbox(dir);
    const listed = await cli({ env: { DATA_DIR: dir } }, "company:list", "--json");
    assert.deepEqual([listed.code, JSON.parse(listed.stdout)], [0, { companies: [] }]);
  });
});

Deno.test("a command that opens the databases is never run without them", async () => {
  const request = {
    now: 0,
    keyGraceSeconds: 86_400,
    databaseSettings: {
      urls: { live: "file:./data/live.db", test: "file:./data/test.db" },
      authToken: null,
      busyTimeoutMs: 5000,
    },
    dev: true,
    origin: "cli",
    sessionToken: null,
    input: {},
  };
  await assert.rejects(
    runWithoutDatabases(request, "company:list", {}),
    /company:list is not a public command without databases/,
  );
  assert.deepEqual(await runWithoutDatabases(request, "company:nope", {}), {
    ok: false,
    code: "usage",
    message: 'unknown command "company:nope"; see `deno task admin help`',
  });
});

Deno.test("environment-specific commands name the environment they acted on, or looked in", async () => {
  await withTempDir(async (dir) => {
    await createDatabases(dir, { dev: true });
    const test = await openTempDatabase(dir, "test");
    const funding = await test.writer.write(async (tx) => {
      await tx.execute(
        "INSERT INTO companies (id, name, tin, created_at) VALUES ('co_1', 'Acme', '123456789', 0)",
      );
      await tx.execute(
        "INSERT INTO business_lines (id, company_id, code, created_at) VALUES ('line_1', 'co_1', 'auto', 0)",
      );
      return await addFunds(
        tx,
        {
          companyId: "co_1",
          lineId: "line_1",
          paymentMethod: "ACH",
          amountCents: 5_000,
          description: "first funding",
          largeDisbursement: false,
          requestFingerprint: "f",
        },
        "test",
        0,
      );
    });
    await test.close();
    assert.ok(funding.ok, funding.ok ? "" : funding.message);
    const fundingId = funding.value.funding.id;

    const env = { DATA_DIR: dir };
    const created = await cli(
      { env, stdin: "the first admin password\n" },
      "operator:create",
      "--first",
      "--email",
      "admin@ops.test",
    );
    assert.equal(created.code, 0, created.stderr);
    const login = await cli(
      { env, stdin: "admin@ops.test\nthe first admin password\n\n" },
      "login",
    );
    assert.equal(login.code, 0, login.stderr);

    const notFound: [string[], string][] = [
      // Live by default, and it says so (before: "no funding fund_missing").
      [["funding:return", "--funding", "fund_missing"], "no funding fund_missing in live"],
      [
        ["funding:return", "--funding", "fund_missing", "--environment", "test"],
        "no funding fund_missing in test",
      ],
      [["wire:receive", "--funding", fundingId], `no funding ${fundingId} in live`],
      [
        ["payout:late-return", "--payout", "po_missing", "--reason", "R10"],
        "no payout po_missing in live",
      ],
      [["event:replay", "--event", "evt_missing"], "no event evt_missing in live"],
      [
        ["jobs:retry", "--job", "job_missing", "--environment", "test"],
        "no job job_missing in test",
      ],
      [
        ["tieout", "--tin", "123456789", "--line", "auto", "--date", "2026-01-05"],
        'no line "auto" for TIN 123456789 in live',
      ],
    ];
    for (const [args, message] of notFound) {
      const refused = await cli({ env }, ...args);
      assert.deepEqual([refused.code, refused.stderr], [1, `error: ${message}`], args.join(" "));
    }

    const returned = await cli(
      { env },
      "funding:return",
      "--funding",
      fundingId,
      "--environment",
      "test",
    );
    assert.deepEqual([returned.code, returned.stdout], [
      0,
      `environment: test\nfunding_id: ${fundingId}\nstatus: Returned\n`,
    ]);
    const listed = await cli({ env }, "jobs:list", "--json");
    assert.deepEqual(JSON.parse(listed.stdout), {
      environment: "live",
      parked: false,
      jobs: [],
      has_more: false,
    });
    // The CSV stays a clean file on stdout; the environment it came from is told beside it.
    const csv = await cli(
      { env },
      "tieout",
      "--tin",
      "123456789",
      "--line",
      "auto",
      "--date",
      "1970-01-01",
      "--environment",
      "test",
      "--format",
      "csv",
    );
    assert.deepEqual([csv.code, csv.stderr], [0, "environment: test"]);
    assert.equal(
      csv.stdout,
      "line,date,currency,opening,funded,returned_funding,returned,disbursed,fees,closing,difference\n" +
        // The ACH funding was returned before its debit went to the bank: never funded.
        "auto,1970-01-01,USD,0.00,0.00,0.00,0.00,0.00,0.00,0.00,0.00\n" +
        "\n" +
        "funding_uuid,payment_method,amount,large_disbursement,disbursement_uuid,movements,released_disbursement_uuid,released_at\n" +
        "\n" +
        "transaction_id,kind,payout_id,claim_or_uuid,posted_at,disbursed,fees,returned\n",
    );
  });
});
