/**
 * The bank and sanctions commands (issue 18): bank:set refuses a bad file naming the field and
 * writes nothing; in test it saves at once, in live it waits for a second admin and saves sealed;
 * bank:show masks; ofac:load loads and replaces the list; sanctions:reviews, :clear and :reject
 * decide a held payout, audited with the operator. Through the admin endpoint, and the CLI binary.
 */
import assert from "node:assert/strict";
import { createApp } from "../routes/app.ts";
import { readBankSettings } from "../lib/ach/bank_store.ts";
import { createDisbursement, loadPayout } from "../lib/payouts/store.ts";
import { screenBeforeSubmission } from "../lib/sanctions/service.ts";
import { sha256Hex } from "../lib/platform/keys.ts";
import { fundAcmeAuto, type HttpFixture, withHttpFixture } from "./http_fixture.ts";
import { ADMIN_TOKEN, adminCall, makeOperator } from "./operator_helpers.ts";
import { createDatabases } from "./admin_cli_helpers.ts";
import { validSettingsJson } from "./bank_helpers.ts";

const root = new URL("..", import.meta.url).pathname;

async function writeJson(dir: string, name: string, value: unknown): Promise<string> {
  const path = `${dir}/${name}`;
  await Deno.writeTextFile(path, JSON.stringify(value));
  return path;
}

const withSettings = (changes: Record<string, unknown>) => ({ ...validSettingsJson(), ...changes });

async function rowsOf(f: HttpFixture, environment: "test" | "live", sql: string) {
  const { rows } = await f.deps.databases[environment].readClient.execute(sql);
  return rows.map((row) => ({ ...row }));
}

async function twoAdmins(f: HttpFixture) {
  const now = f.clock.now();
  return {
    alice: await makeOperator(f.deps, { email: "alice@ops.test", role: "admin" }, now),
    bruno: await makeOperator(f.deps, { email: "bruno@ops.test", role: "admin" }, now),
  };
}

Deno.test("bank:set refuses a bad file naming the field and writes nothing; in test it saves at once and bank:show reads it back masked", async () => {
  await withHttpFixture(async (f) => {
    const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
    const { alice } = await twoAdmins(f);
    const call = adminCall(app, alice.token);
    const dir = await Deno.makeTempDir({ prefix: "bank-set-" });
    try {
      const tin = f.cast.acme.tin;
      const bad: [Record<string, unknown>, string, string][] = [
        [
          withSettings({ odfi_routing: "021000022" }),
          "odfi_routing",
          '--file: odfi_routing "021000022": the check digit does not match (not an ABA routing number)',
        ],
        [
          withSettings({ company_name: "CEDAR REINSURANCE" }),
          "company_name",
          '--file: company_name "CEDAR REINSURANCE": 1 to 16 characters, got 17',
        ],
        [
          withSettings({
            cutoffs: [{ time: "10:30", kind: "same_day" }, { time: "5pm", kind: "next_day" }],
          }),
          "cutoffs[1].time",
          '--file: cutoffs[1].time: "5pm": a time HH:MM, 00:00 to 23:59',
        ],
      ];
      for (const [settings, field, message] of bad) {
        const file = await writeJson(dir, "bad.json", settings);
        const refused = await call("bank:set", { tin, file, environment: "test" });
        assert.equal(refused.status, 400, JSON.stringify(refused.body));
        assert.deepEqual(refused.body.error.code, "invalid_input");
        assert.equal(refused.body.error.message, message);
        assert.ok(refused.body.error.message.startsWith(`--file: ${field}`));
      }
      await Deno.writeTextFile(`${dir}/broken.json`, "{ not json");
      const broken = await call("bank:set", {
        tin,
        file: `${dir}/broken.json`,
        environment: "test",
      });
      assert.equal(broken.status, 400);
      assert.match(broken.body.error.message, /not JSON/);
      const missing = await call("bank:set", {
        tin,
        file: `${dir}/none.json`,
        environment: "test",
      });
      assert.equal(missing.status, 400);
      assert.match(missing.body.error.message, /no such file/);
      const relative = await call("bank:set", { tin, file: "settings.json", environment: "test" });
      assert.match(relative.body.error.message, /give an absolute path/);
      assert.deepEqual(await rowsOf(f, "test", "SELECT * FROM bank_settings"), []);
      assert.deepEqual(
        await rowsOf(f, "test", "SELECT * FROM audit_log WHERE action = 'bank:set'"),
        [],
        "a refused bank:set writes nothing, not even an audit row",
      );

      const sandbox = await call("bank:show", { tin, environment: "test" });
      assert.equal(sandbox.status, 200);
      assert.equal(sandbox.body.result.source, "sandbox_bank");
      assert.equal(sandbox.body.result.settings.odfi_routing, "021000021");
      assert.equal(sandbox.body.result.environment, "test");

      const file = await writeJson(dir, "good.json", validSettingsJson());
      const saved = await call("bank:set", { tin, file, environment: "test" });
      assert.equal(saved.status, 200, JSON.stringify(saved.body));
      assert.equal(saved.body.result.environment, "test");
      assert.equal(saved.body.result.previous_fingerprint, null);
      assert.match(saved.body.result.fingerprint, /^[0-9a-f]{64}$/);
      const shown = await call("bank:show", { tin, environment: "test" });
      assert.equal(shown.body.result.source, "stored");
      assert.equal(shown.body.result.fingerprint, saved.body.result.fingerprint);
      assert.deepEqual(shown.body.result.settings.funding_account, {
        routing_number: "011000015",
        account_number: "••••9012",
        account_type: "checking",
        name: "CEDAR RE OPERATING",
      });
      assert.equal(shown.body.result.settings.settlement_account.account_number, "••••3210");
      assert.ok(!JSON.stringify(shown.body).includes("123456789012"));
      const audit = await rowsOf(
        f,
        "test",
        "SELECT action, operator_email, object_type, before, after FROM audit_log WHERE action = 'bank:set'",
      );
      assert.equal(audit.length, 1);
      assert.equal(audit[0].operator_email, "alice@ops.test");
      assert.equal(audit[0].before, "[]", "no settings before");
      assert.equal(
        JSON.parse(String(audit[0].after))[0].fingerprint,
        saved.body.result.fingerprint,
      );
      assert.ok(!JSON.stringify(audit).includes("123456789012"));
      assert.ok(
        !JSON.stringify(await rowsOf(f, "test", "SELECT * FROM bank_settings")).includes(
          "123456789012",
        ),
      );

      const liveNone = await call("bank:show", { tin });
      assert.deepEqual([liveNone.status, liveNone.body.error], [404, {
        code: "bank_settings_not_found",
        message: `no bank settings for Acme Mutual (TIN ${tin}) in live: set them with bank:set`,
      }]);
      const sftpInTest = await call("bank:set", {
        tin,
        file: await writeJson(
          dir,
          "sftp.json",
          withSettings({
            sftp: {
              host: "sftp.bank.example",
              username: "acme",
              password: "secret-password",
              host_key_fingerprint: "SHA256:" + "B".repeat(43),
              outbound_dir: "/out",
              inbound_dir: "/in",
            },
          }),
        ),
        environment: "test",
      });
      assert.equal(sftpInTest.status, 400);
      assert.match(sftpInTest.body.error.message, /test files never leave the machine/);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});

Deno.test("bank:set in live waits for a second admin; the requester cannot approve; the approval saves it sealed and the audit log holds no secret", async () => {
  await withHttpFixture(async (f) => {
    const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
    const { alice, bruno } = await twoAdmins(f);
    const dir = await Deno.makeTempDir({ prefix: "bank-set-live-" });
    try {
      const tin = f.cast.acme.tin;
      const sftp = {
        host: "sftp.bank.example",
        port: 2222,
        username: "acme",
        password: "sftp-password-never-logged",
        host_key_fingerprint: "SHA256:" + "C".repeat(43),
        outbound_dir: "/outbound",
        inbound_dir: "/inbound",
      };
      const noFingerprint = await adminCall(app, alice.token)("bank:set", {
        tin,
        file: await writeJson(
          dir,
          "nofp.json",
          withSettings({ sftp: { ...sftp, host_key_fingerprint: null } }),
        ),
      });
      assert.equal(noFingerprint.status, 400);
      assert.match(
        noFingerprint.body.error.message,
        /^--file: sftp\.host_key_fingerprint: required in live/,
      );

      const file = await writeJson(dir, "live.json", withSettings({ sftp }));
      const requested = await adminCall(app, alice.token)("bank:set", { tin, file });
      assert.equal(requested.status, 200, JSON.stringify(requested.body));
      const result = requested.body.result;
      assert.equal(result.environment, "live");
      assert.equal(result.status, "pending_approval");
      assert.equal(result.kind, "bank_settings.change");
      assert.equal(
        result.summary,
        `bank:set Acme Mutual (TIN ${tin}): ODFI 021000021, 2 cutoffs in America/New_York, SFTP sftp.bank.example`,
      );
      assert.deepEqual(
        await rowsOf(f, "live", "SELECT * FROM bank_settings"),
        [],
        "nothing until approved",
      );
      const approvalRows = JSON.stringify(await rowsOf(f, "live", "SELECT * FROM approvals"));
      assert.ok(!approvalRows.includes("123456789012"), "the payload is sealed");
      assert.ok(!approvalRows.includes("sftp-password-never-logged"));

      const own = await adminCall(app, alice.token)("approvals:approve", {
        id: result.approval_id,
      });
      assert.equal(own.body.error.code, "approval_own_request");
      assert.deepEqual(await rowsOf(f, "live", "SELECT * FROM bank_settings"), []);

      const approved = await adminCall(app, bruno.token)("approvals:approve", {
        id: result.approval_id,
      });
      assert.equal(approved.status, 200, JSON.stringify(approved.body));
      assert.equal(approved.body.result.status, "approved");
      assert.equal(approved.body.result.result.environment, "live");
      const raw = await rowsOf(f, "live", "SELECT * FROM bank_settings");
      assert.equal(raw.length, 1);
      assert.equal(raw[0].updated_by, alice.id);
      assert.ok(
        !JSON.stringify(raw).includes("123456789012"),
        "sealed: no account number in the row",
      );
      assert.ok(!JSON.stringify(raw).includes("sftp-password-never-logged"));
      const settings = await readBankSettings(
        f.deps.databases.live.readClient,
        f.deps.secretBox,
        "live",
        f.cast.acme.id,
      );
      assert.equal(settings?.fundingAccount.accountNumber, "123456789012");
      assert.equal(settings?.sftp?.password, "sftp-password-never-logged");
      assert.equal(settings?.sftp?.port, 2222);
      assert.deepEqual(
        await rowsOf(
          f,
          "live",
          "SELECT kind, subject_id FROM scheduled_jobs WHERE kind = 'ach.poll_inbound'",
        ),
        [{ kind: "ach.poll_inbound", subject_id: f.cast.acme.id }],
        "an SFTP target starts the inbound polling",
      );

      const audit = await rowsOf(
        f,
        "live",
        "SELECT action, operator_email, object_id, before, after FROM audit_log ORDER BY seq",
      );
      const text = JSON.stringify(audit);
      for (const secret of ["123456789012", "9876543210", "sftp-password-never-logged"]) {
        assert.ok(!text.includes(secret), `the audit log holds ${secret}`);
      }
      const saved = audit.filter((row) =>
        row.action === "bank:set" && row.operator_email === "bruno@ops.test"
      );
      assert.equal(saved.length, 1);
      assert.equal(JSON.parse(String(saved[0].after)).fingerprint, raw[0].fingerprint);
      assert.ok(
        audit.some((row) =>
          row.action === "approval:request" && row.operator_email === "alice@ops.test"
        ),
      );
      assert.ok(
        audit.some((row) =>
          row.action === "approval:approve" && row.operator_email === "bruno@ops.test"
        ),
      );

      const shown = await adminCall(app, bruno.token)("bank:show", { tin });
      assert.equal(shown.body.result.environment, "live");
      assert.deepEqual(shown.body.result.settings.sftp, {
        host: "sftp.bank.example",
        port: 2222,
        username: "acme",
        auth: "password",
        configured: true,
        host_key_fingerprint: "SHA256:" + "C".repeat(43),
        outbound_dir: "/outbound",
        inbound_dir: "/inbound",
      });
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});

const SDN = [
  '36,"AEROCARIBBEAN AIRLINES",-0- ,"CUBA",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ',
  '306,"SANKTIONOV, Ivan ""Vanya""","individual","SDGT",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,"DOB 1970"',
  '173,"ANGLO-CARIBBEAN CO., LTD.",-0- ,"CUBA",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,"London"',
].join("\r\n") + "\r\n";
const ALT = '306,220,"aka","SANKTIONOFF, Ivan",-0- \r\n';

Deno.test("ofac:load loads the list as published, audited with its SHA-256 and count; a new load replaces it; a malformed or empty file is refused naming the line and writes nothing", async () => {
  await withHttpFixture(async (f) => {
    const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
    const { alice } = await twoAdmins(f);
    const call = adminCall(app, alice.token);
    const dir = await Deno.makeTempDir({ prefix: "ofac-" });
    try {
      await Deno.writeTextFile(
        `${dir}/bad.csv`,
        '36,"AEROCARIBBEAN AIRLINES",-0- ,"CUBA"\n37,"UNCLOSED,-0- ,"CUBA"\n',
      );
      const malformed = await call("ofac:load", { file: `${dir}/bad.csv` });
      assert.equal(malformed.status, 400);
      assert.equal(malformed.body.error.message, "sdn.csv line 2: text after a closing quote");
      await Deno.writeTextFile(`${dir}/empty.csv`, "\r\n");
      const empty = await call("ofac:load", { file: `${dir}/empty.csv` });
      assert.match(empty.body.error.message, /holds no entries/);
      const huge = await Deno.open(`${dir}/huge.csv`, { create: true, write: true });
      await huge.truncate(50 * 1024 * 1024 + 1);
      huge.close();
      const tooLarge = await call("ofac:load", { file: `${dir}/huge.csv` });
      assert.equal(tooLarge.status, 400);
      assert.match(tooLarge.body.error.message, /52428801 bytes, at most 52428800 are taken/);
      assert.deepEqual(await rowsOf(f, "live", "SELECT * FROM sanctions_lists"), []);
      assert.deepEqual(
        await rowsOf(f, "live", "SELECT * FROM audit_log WHERE action = 'ofac:load'"),
        [],
      );

      await Deno.writeTextFile(`${dir}/sdn.csv`, SDN);
      await Deno.writeTextFile(`${dir}/alt.csv`, ALT);
      const loaded = await call("ofac:load", { file: `${dir}/sdn.csv`, alt: `${dir}/alt.csv` });
      assert.equal(loaded.status, 200, JSON.stringify(loaded.body));
      const sha256 = await sha256Hex(new TextEncoder().encode(SDN));
      assert.deepEqual({ ...loaded.body.result, list_id: "…" }, {
        environment: "live",
        list_id: "…",
        sha256,
        alt_sha256: await sha256Hex(new TextEncoder().encode(ALT)),
        entry_count: 4,
        file_name: "sdn.csv + alt.csv",
        replaced: [],
      });
      assert.deepEqual(
        await rowsOf(
          f,
          "live",
          "SELECT entry_number, name, normalized_name, sdn_type, program FROM sanctions_entries ORDER BY entry_number, name",
        ),
        [
          {
            entry_number: 36,
            name: "AEROCARIBBEAN AIRLINES",
            normalized_name: "AEROCARIBBEAN AIRLINES",
            sdn_type: "",
            program: "CUBA",
          },
          {
            entry_number: 173,
            name: "ANGLO-CARIBBEAN CO., LTD.",
            normalized_name: "ANGLO CARIBBEAN",
            sdn_type: "",
            program: "CUBA",
          },
          {
            entry_number: 306,
            name: "SANKTIONOFF, Ivan",
            normalized_name: "IVAN SANKTIONOFF",
            sdn_type: "individual",
            program: "SDGT",
          },
          {
            entry_number: 306,
            name: 'SANKTIONOV, Ivan "Vanya"',
            normalized_name: "IVAN SANKTIONOV VANYA",
            sdn_type: "individual",
            program: "SDGT",
          },
        ],
      );
      const audit = await rowsOf(
        f,
        "live",
        "SELECT operator_email, before, after FROM audit_log WHERE action = 'ofac:load'",
      );
      assert.equal(audit.length, 1);
      assert.equal(audit[0].operator_email, "alice@ops.test");
      assert.equal(audit[0].before, null);
      assert.deepEqual(JSON.parse(String(audit[0].after)), {
        entry_count: 4,
        file_name: "sdn.csv + alt.csv",
        id: loaded.body.result.list_id,
        sha256,
      });

      const again = await call("ofac:load", { file: `${dir}/sdn.csv` });
      assert.equal(again.status, 200);
      assert.deepEqual(again.body.result.replaced, [loaded.body.result.list_id]);
      assert.equal(again.body.result.entry_count, 3);
      const lists = await rowsOf(
        f,
        "live",
        "SELECT id, replaced_at FROM sanctions_lists ORDER BY loaded_at, rowid",
      );
      assert.equal(lists.length, 2);
      assert.notEqual(lists[0].replaced_at, null);
      assert.equal(lists[1].replaced_at, null);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});

/** A test-environment payout of Acme's auto line held for review (screened against the fixture). */
async function heldPayout(
  f: HttpFixture,
  name: string,
): Promise<{ payoutId: string; reviewId: string }> {
  const test = f.deps.databases.test;
  const now = f.clock.now();
  return await test.writer.write(async (tx) => {
    const created = await createDisbursement(tx, {
      companyId: f.cast.acme.id,
      lineId: f.cast.acme.autoLineId,
      kind: "disbursement",
      externalUuid: crypto.randomUUID(),
      requestFingerprint: "x",
      largeDisbursement: false,
      payouts: [{
        payeeUuid: "p1",
        amountCents: 10_000,
        allowedPaymentMethodIds: [2],
        payee: { first_name: name.split(" ")[0], last_name: name.split(" ").slice(1).join(" ") },
      }],
    }, now);
    if (!created.ok) throw new Error(created.message);
    const payoutId = created.value.payouts[0].id;
    await tx.execute({
      sql: "UPDATE payouts SET status = 'modality_selected', payment_method_id = 2 WHERE id = ?",
      args: [payoutId],
    });
    const screened = await screenBeforeSubmission(
      tx,
      "test",
      (await loadPayout(tx, payoutId))!,
      now,
    );
    assert.equal(screened, "held");
    const { rows } = await tx.execute({
      sql: "SELECT id FROM sanctions_reviews WHERE payout_id = ?",
      args: [payoutId],
    });
    return { payoutId, reviewId: String(rows[0].id) };
  });
}

Deno.test("sanctions:reviews lists open reviews; sanctions:clear and sanctions:reject need a reason, decide once, name the operator and are audited", async () => {
  await withHttpFixture(async (f) => {
    const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
    const { alice, bruno } = await twoAdmins(f);
    await fundAcmeAuto(f, 100_000);
    const first = await heldPayout(f, "Ivan Sanktionov");
    const second = await heldPayout(f, "Erika Embargo");
    const listed = await adminCall(app, alice.token)("sanctions:reviews", { environment: "test" });
    assert.equal(listed.status, 200);
    assert.equal(listed.body.result.environment, "test");
    assert.deepEqual(
      listed.body.result.reviews.map((r: { id: string; status: string }) => [r.id, r.status])
        .sort(),
      [[first.reviewId, "open"], [second.reviewId, "open"]].sort(),
    );
    const one = listed.body.result.reviews.find((r: { id: string }) => r.id === first.reviewId);
    assert.deepEqual(one.matches, [{
      screened_name: "Ivan Sanktionov",
      list_name: "SANKTIONOV, Ivan",
      entry_number: 900001,
      program: "SANDBOX",
      score: 1,
      rule: "name",
    }]);
    const liveList = await adminCall(app, alice.token)("sanctions:reviews", {});
    assert.deepEqual(liveList.body.result.reviews, []);

    const noReason = await adminCall(app, alice.token)("sanctions:clear", {
      review: first.reviewId,
      environment: "test",
    });
    assert.deepEqual([noReason.status, noReason.body.error.code], [400, "invalid_input"]);
    const unknown = await adminCall(app, alice.token)("sanctions:clear", {
      review: "scr_none",
      reason: "x",
      environment: "test",
    });
    assert.deepEqual([unknown.status, unknown.body.error.code], [404, "review_not_found"]);

    const cleared = await adminCall(app, alice.token)("sanctions:clear", {
      review: first.reviewId,
      reason: "date of birth differs",
      environment: "test",
    });
    assert.equal(cleared.status, 200, JSON.stringify(cleared.body));
    assert.equal(cleared.body.result.environment, "test");
    assert.equal(cleared.body.result.decided_by, "alice@ops.test");
    assert.equal(cleared.body.result.payout_status, "modality_selected");
    assert.equal(cleared.body.result.review.status, "cleared");
    assert.equal(cleared.body.result.review.decided_by, alice.id);
    assert.equal(cleared.body.result.review.reason, "date of birth differs");
    const submit = await rowsOf(
      f,
      "test",
      `SELECT kind FROM scheduled_jobs WHERE subject_id = '${first.payoutId}' AND kind = 'payout.submit' AND done_at IS NULL`,
    );
    assert.equal(submit.length, 1, "its submission is scheduled again");
    const twice = await adminCall(app, bruno.token)("sanctions:reject", {
      review: first.reviewId,
      reason: "late",
      environment: "test",
    });
    assert.deepEqual([twice.status, twice.body.error.code], [409, "review_not_open"]);

    const rejected = await adminCall(app, bruno.token)("sanctions:reject", {
      review: second.reviewId,
      reason: "confirmed by compliance",
      environment: "test",
    });
    assert.equal(rejected.status, 200, JSON.stringify(rejected.body));
    assert.equal(rejected.body.result.payout_status, "failed");
    assert.equal(rejected.body.result.failure_reason, "sanctions_review");
    assert.equal(rejected.body.result.decided_by, "bruno@ops.test");

    const audit = await rowsOf(
      f,
      "test",
      "SELECT action, operator_email, object_id, before, after FROM audit_log WHERE action LIKE 'sanctions:%' ORDER BY seq",
    );
    assert.deepEqual(audit.map((row) => [row.action, row.operator_email, row.object_id]), [
      ["sanctions:clear", "alice@ops.test", first.reviewId],
      ["sanctions:reject", "bruno@ops.test", second.reviewId],
    ]);
    assert.deepEqual(JSON.parse(String(audit[0].before))[0], {
      id: first.reviewId,
      status: "open",
      decided_by: null,
      reason: null,
      payout_id: first.payoutId,
      payout_status: "in_review",
    });
    assert.deepEqual(JSON.parse(String(audit[1].after))[0], {
      id: second.reviewId,
      status: "rejected",
      decided_by: bruno.id,
      reason: "confirmed by compliance",
      payout_id: second.payoutId,
      payout_status: "failed",
    });
    const open = await adminCall(app, alice.token)("sanctions:reviews", { environment: "test" });
    assert.deepEqual(open.body.result.reviews, []);
    const all = await adminCall(app, alice.token)("sanctions:reviews", {
      environment: "test",
      status: "all",
    });
    assert.equal(all.body.result.reviews.length, 2);
    const badStatus = await adminCall(app, alice.token)("sanctions:reviews", { status: "pending" });
    assert.equal(badStatus.status, 400);
  });
});

async function cli(dataDir: string, stdin: string, ...args: string[]) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${root}cli/admin.ts`, ...args],
    env: { DATA_DIR: dataDir, NO_COLOR: "1" },
    cwd: dataDir,
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

Deno.test("the CLI binary: bank:set with a relative path (exit 2 naming the field, then 0), bank:show --json masked, ofac:load, help lists the commands", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "disbursement-cli-bank-" });
  try {
    await createDatabases(dataDir, { dev: true });
    const help = await cli(dataDir, "", "help");
    for (
      const name of [
        "bank:set",
        "bank:show",
        "ofac:load",
        "sanctions:reviews",
        "sanctions:clear",
        "sanctions:reject",
      ]
    ) {
      assert.match(help.stdout, new RegExp(`^  ${name} `, "m"));
    }
    assert.match(help.stdout, /\[--alt <the path of alt\.csv \(aliases\)>\]/);
    const created = await cli(
      dataDir,
      "first admin password\n",
      "operator:create",
      "--first",
      "--email",
      "admin@ops.test",
    );
    assert.equal(created.code, 0, created.stderr);
    const login = await cli(dataDir, "admin@ops.test\nfirst admin password\n\n", "login");
    assert.equal(login.code, 0, login.stderr);
    const company = await cli(
      dataDir,
      "",
      "company:create",
      "--name",
      "Cedar Re",
      "--tin",
      "555555555",
    );
    assert.equal(company.code, 0, company.stderr);

    await Deno.writeTextFile(
      `${dataDir}/bad.json`,
      JSON.stringify(withSettings({ odfi_routing: "021000022" })),
    );
    const bad = await cli(
      dataDir,
      "",
      "bank:set",
      "--tin",
      "555555555",
      "--file",
      "bad.json",
      "--environment",
      "test",
    );
    assert.deepEqual([bad.code, bad.stderr.trim()], [
      2,
      'error: --file: odfi_routing "021000022": the check digit does not match (not an ABA routing number)',
    ]);
    await Deno.writeTextFile(`${dataDir}/good.json`, JSON.stringify(validSettingsJson()));
    const good = await cli(
      dataDir,
      "",
      "bank:set",
      "--tin",
      "555555555",
      "--file",
      "good.json",
      "--environment",
      "test",
      "--json",
    );
    assert.equal(good.code, 0, good.stderr);
    assert.equal(JSON.parse(good.stdout).environment, "test");
    const shown = await cli(
      dataDir,
      "",
      "bank:show",
      "--tin",
      "555555555",
      "--environment",
      "test",
      "--json",
    );
    assert.equal(shown.code, 0, shown.stderr);
    assert.equal(JSON.parse(shown.stdout).settings.funding_account.account_number, "••••9012");
    const none = await cli(dataDir, "", "bank:show", "--tin", "555555555");
    assert.deepEqual([none.code, none.stderr.trim()], [
      1,
      "error: no bank settings for Cedar Re (TIN 555555555) in live: set them with bank:set",
    ]);

    await Deno.writeTextFile(`${dataDir}/sdn.csv`, SDN);
    const loaded = await cli(dataDir, "", "ofac:load", "--file", "sdn.csv", "--json");
    assert.equal(loaded.code, 0, loaded.stderr);
    assert.equal(JSON.parse(loaded.stdout).entry_count, 3);
    const usage = await cli(dataDir, "", "ofac:load");
    assert.deepEqual([usage.code, usage.stderr.trim()], [
      2,
      "error: ofac:load needs --file (the path of sdn.csv)",
    ]);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});
