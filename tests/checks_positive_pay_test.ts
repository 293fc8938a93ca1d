/**
 * Check settings and positive pay (issue 19): the check account in the bank settings (a bad
 * routing check digit or first check number is a 400 naming the field, and nothing is written;
 * bank:show masks it), the positive-pay CSV against its template, and the release order of a
 * live cutoff's files.
 */
import assert from "node:assert/strict";
import { createApp } from "../routes/app.ts";
import { checkBankSettings } from "../lib/ach/bank_settings.ts";
import {
  type CheckAccount,
  POSITIVE_PAY_TEMPLATE_DEFAULT,
  type PositivePayTemplate,
  sandboxCheckAccount,
} from "../lib/checks/account.ts";
import { positivePayCsv, type PositivePayLine } from "../lib/checks/positive_pay.ts";
import {
  readCheckFileContent,
  requestCheckFileRelease,
  resolveCheckFile,
} from "../lib/checks/files_service.ts";
import { markInDoubt } from "../lib/rails/batch.ts";
import { type CheckTransport, sandboxCheckBank } from "../lib/checks/rail.ts";
import { sealCheckFile } from "../lib/checks/files_store.ts";
import { quietly } from "./ach_helpers.ts";
import { sha256Hex } from "../lib/platform/keys.ts";
import { startTestSshd } from "./sshd_helpers.ts";
import { receiveWire } from "../lib/funding/store.ts";
import { approveApproval } from "../lib/operators/approvals.ts";
import { approvedActions } from "../lib/admin/approved_actions.ts";
import type { AppDeps } from "../routes/context.ts";
import { moneyBatchDeps } from "./money_core_helpers.ts";
import { hasCheckRail, hasDigitalCheckRail } from "../lib/checks/settings_store.ts";
import { type HttpFixture, withHttpFixture } from "./http_fixture.ts";
import { ADMIN_TOKEN, adminCall, makeOperator, operatorDepsOf } from "./operator_helpers.ts";
import { validSettingsJson } from "./bank_helpers.ts";
import { testSecretBox } from "./helpers.ts";
import {
  checkFilesOf,
  chooseCheck,
  liveCheckAccountJson,
  markSent,
  registerOf,
  rows,
  withCheckFixture,
} from "./checks_helpers.ts";

const HOUR_SECONDS = 3600;

const account = (template: Partial<PositivePayTemplate> = {}): CheckAccount => ({
  ...sandboxCheckAccount("Acme"),
  accountNumber: "4455667788",
  positivePay: { ...POSITIVE_PAY_TEMPLATE_DEFAULT, ...template },
});

const LINES: PositivePayLine[] = [
  {
    action: "issue",
    checkNumber: 5001,
    amountCents: 123_456,
    issueDate: "2026-01-05",
    payeeName: "Pat Doe",
  },
  {
    action: "void",
    checkNumber: 4999,
    amountCents: 5,
    issueDate: "2025-12-31",
    payeeName: 'Lee "Bo", Jr.',
  },
];

Deno.test("positive pay: the default template writes a header and one line per issue or void", () => {
  assert.equal(
    positivePayCsv(account(), LINES),
    "account,check_number,amount,issue_date,payee_name,issue_void\r\n" +
      "4455667788,5001,1234.56,01/05/2026,Pat Doe,I\r\n" +
      '4455667788,4999,0.05,12/31/2025,"Lee ""Bo"", Jr.",V\r\n',
  );
});

Deno.test("positive pay: columns, their order, the date and amount formats, the letters and the header follow the template", () => {
  const cases: [Partial<PositivePayTemplate>, string][] = [
    [
      {
        columns: ["check_number", "issue_date", "amount", "issue_void"],
        dateFormat: "YYYYMMDD",
        amountFormat: "cents",
        issueLetter: "O",
        voidLetter: "C",
        header: false,
      },
      "5001,20260105,123456,O\r\n4999,20251231,5,C\r\n",
    ],
    [
      { columns: ["account", "check_number", "amount", "issue_date"], dateFormat: "MM/DD/YY" },
      "account,check_number,amount,issue_date\r\n4455667788,5001,1234.56,01/05/26\r\n" +
      "4455667788,4999,0.05,12/31/25\r\n",
    ],
    [
      { columns: ["check_number", "amount", "issue_date"], dateFormat: "YYMMDD", header: false },
      "5001,1234.56,260105\r\n4999,0.05,251231\r\n",
    ],
    [
      { columns: ["check_number", "amount", "issue_date"], dateFormat: "MMDDYYYY", header: false },
      "5001,1234.56,01052026\r\n4999,0.05,12312025\r\n",
    ],
    [
      {
        columns: ["check_number", "amount", "issue_date"],
        dateFormat: "YYYY-MM-DD",
        header: false,
      },
      "5001,1234.56,2026-01-05\r\n4999,0.05,2025-12-31\r\n",
    ],
  ];
  for (const [template, expected] of cases) {
    assert.equal(positivePayCsv(account(template), LINES), expected, JSON.stringify(template));
  }
});

Deno.test("check account settings: a bad routing check digit or a first check number that is not a positive integer is refused naming the field", () => {
  const bad: [Record<string, unknown>, string, string][] = [
    [
      { routing_number: "011000016" },
      "check_account.routing_number",
      'check_account.routing_number "011000016": the check digit does not match (not an ABA routing number)',
    ],
    [
      { first_check_number: 0 },
      "check_account.first_check_number",
      "check_account.first_check_number 0: a positive whole number",
    ],
    [
      { first_check_number: -1 },
      "check_account.first_check_number",
      "check_account.first_check_number -1: a positive whole number",
    ],
    [
      { first_check_number: 1.5 },
      "check_account.first_check_number",
      "check_account.first_check_number 1.5: a positive whole number",
    ],
    [
      { first_check_number: "abc" },
      "check_account.first_check_number",
      'check_account.first_check_number "abc": a positive whole number',
    ],
    [
      { positive_pay: { columns: ["account", "payee_name"] } },
      "check_account.positive_pay.columns",
      "positive_pay.columns: check_number and amount are required (the bank matches on them)",
    ],
    [
      { positive_pay: { date_format: "DD.MM.YYYY" } },
      "check_account.positive_pay.date_format",
      "positive_pay.date_format: one of YYYY-MM-DD, MM/DD/YYYY, MMDDYYYY, YYYYMMDD, MM/DD/YY, YYMMDD",
    ],
    [
      { stale_days: 0 },
      "check_account.stale_days",
      "check_account.stale_days: 1 to 3650",
    ],
  ];
  for (const [change, field, message] of bad) {
    const checked = checkBankSettings(
      { ...validSettingsJson(), check_account: { ...liveCheckAccountJson(), ...change } },
      "live",
    );
    assert.ok(!checked.ok, JSON.stringify(change));
    assert.equal(checked.field, field);
    assert.ok(checked.message.endsWith(message), checked.message);
  }
  const good = checkBankSettings(
    { ...validSettingsJson(), check_account: liveCheckAccountJson() },
    "live",
  );
  assert.ok(good.ok);
  assert.equal(good.value.checkAccount?.firstCheckNumber, 5001);
  const none = checkBankSettings(validSettingsJson(), "live");
  assert.ok(none.ok);
  assert.equal(none.value.checkAccount, null, "a company may pay no checks");
});

async function rowsOf(f: HttpFixture, environment: "test" | "live", sql: string) {
  const { rows } = await f.deps.databases[environment].readClient.execute(sql);
  return rows.map((row) => ({ ...row }));
}

Deno.test("bank:set with a check account: bad input is a 400 naming the field with nothing written; saved, bank:show masks the account number and checks become payable in live", async () => {
  await withHttpFixture(async (f) => {
    const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
    const alice = await makeOperator(
      f.deps,
      { email: "alice@ops.test", role: "admin" },
      f.clock.now(),
    );
    const call = adminCall(app, alice.token);
    const dir = await Deno.makeTempDir({ prefix: "check-settings-" });
    try {
      const tin = f.cast.acme.tin;
      const write = async (checkAccount: Record<string, unknown>) => {
        const path = `${dir}/settings.json`;
        await Deno.writeTextFile(
          path,
          JSON.stringify({ ...validSettingsJson(), check_account: checkAccount }),
        );
        return path;
      };
      for (
        const [change, field] of [
          [{ routing_number: "011000016" }, "check_account.routing_number"],
          [{ first_check_number: 0 }, "check_account.first_check_number"],
          [{ first_check_number: -1 }, "check_account.first_check_number"],
          [{ first_check_number: 1.5 }, "check_account.first_check_number"],
          [{ first_check_number: "abc" }, "check_account.first_check_number"],
        ] as const
      ) {
        const file = await write({ ...liveCheckAccountJson(), ...change });
        const refused = await call("bank:set", { tin, file, environment: "test" });
        assert.equal(refused.status, 400, JSON.stringify(refused.body));
        assert.equal(refused.body.error.code, "invalid_input");
        assert.ok(
          refused.body.error.message.startsWith(`--file: ${field}`),
          refused.body.error.message,
        );
      }
      assert.deepEqual(await rowsOf(f, "test", "SELECT * FROM bank_settings"), []);
      assert.deepEqual(
        await rowsOf(f, "test", "SELECT * FROM audit_log WHERE action = 'bank:set'"),
        [],
      );
      const saved = await call("bank:set", {
        tin,
        file: await write(liveCheckAccountJson()),
        environment: "test",
      });
      assert.equal(saved.status, 200, JSON.stringify(saved.body));
      const shown = await call("bank:show", { tin, environment: "test" });
      assert.deepEqual(shown.body.result.settings.check_account, {
        ...liveCheckAccountJson(),
        account_number: "••••7788",
      });
      const live = f.deps.databases.live.readClient;
      assert.equal(await hasCheckRail(live, "live", f.cast.acme.id), false, "no live settings");
      assert.equal(await hasCheckRail(live, "test", f.cast.acme.id), true, "the sandbox's");
      assert.equal(await hasDigitalCheckRail(live, "test", f.cast.acme.id, null), true);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});

Deno.test("live payable checks: a check account makes postal checks payable; digital checks also need the MICR font CHECK_MICR_FONT named at start", async () => {
  await withCheckFixture("live", async ({ m }) => {
    const reader = m.database.readClient;
    assert.equal(await hasCheckRail(reader, "live", m.companyId), true);
    assert.equal(await hasDigitalCheckRail(reader, "live", m.companyId, null), false);
    const font = new Uint8Array([0, 1, 0, 0]);
    assert.equal(await hasDigitalCheckRail(reader, "live", m.companyId, font), true);
  });
});

Deno.test("release order: a live cutoff's print file is held (no mark-sent, no download) until its positive-pay file was marked sent", async () => {
  await withCheckFixture("live", async ({ m }) => {
    await chooseCheck(m, [10_000, 20_000]);
    await m.advance(HOUR_SECONDS);
    const [positivePay, print] = await checkFilesOf(m);
    assert.deepEqual(
      [positivePay.kind, positivePay.status, print.kind, print.status, print.issue_count],
      ["positive_pay", "built", "print", "built", 2],
    );
    assert.equal(print.positive_pay_file_id, positivePay.batch_id);
    const deps = moneyBatchDeps(m.database, "live");
    const download = await readCheckFileContent(deps, String(print.batch_id), m.now());
    assert.deepEqual(download.ok ? null : [download.code, download.field], [
      "positive_pay_not_sent",
      "file",
    ]);
    const early = await markSent(m, "live", String(print.batch_id));
    assert.deepEqual(early.ok ? null : early.code, "positive_pay_not_sent");
    assert.deepEqual((await checkFilesOf(m)).map((f) => f.status), ["built", "built"]);
    assert.ok((await markSent(m, "live", String(positivePay.batch_id))).ok);
    const released = await readCheckFileContent(deps, String(print.batch_id), m.now());
    assert.ok(released.ok);
    assert.equal(new TextDecoder().decode(released.value.content.slice(0, 5)), "%PDF-");
    assert.ok((await markSent(m, "live", String(print.batch_id))).ok);
    assert.deepEqual((await checkFilesOf(m)).map((f) => f.status), [
      "transmitted",
      "transmitted",
    ]);
    assert.deepEqual((await registerOf(m)).map((c) => [c.check_number, c.postage_code]), [
      [5001, "FC"],
      [5002, "FC"],
    ]);
    const again = await markSent(m, "live", String(positivePay.batch_id));
    assert.deepEqual(again.ok ? null : again.code, "check_file_not_built");
  });
});

Deno.test("release: a live positive-pay file over the approval limit is not marked sent until a second admin approved its release (bank_file.release, as for ACH)", async () => {
  await withCheckFixture("live", async ({ m }) => {
    const wire = await m.fund(1_000_000);
    await m.database.writer.write((tx) => receiveWire(tx, wire, m.now()));
    await chooseCheck(m, [10_000_001]); // $100,000.01, over the $100,000.00 default limit
    await m.advance(HOUR_SECONDS);
    const [positivePay] = await checkFilesOf(m);
    const refused = await markSent(m, "live", String(positivePay.batch_id));
    assert.deepEqual(refused.ok ? null : refused.code, "check_file_awaits_release");
    const deps = {
      databases: { test: m.database, live: m.database },
      secretBox: testSecretBox,
      config: { dev: false },
    } as unknown as AppDeps;
    const now = m.now();
    const alice = await makeOperator(deps, { email: "alice@ops.test", role: "admin" }, now);
    const bruno = await makeOperator(deps, { email: "bruno@ops.test", role: "admin" }, now);
    const actor = (op: { id: string; email: string }) => ({
      operator: { id: op.id, email: op.email },
      origin: "cli",
    });
    const requested = await requestCheckFileRelease(
      moneyBatchDeps(m.database, "live"),
      actor(alice),
      String(positivePay.batch_id),
      now,
    );
    assert.ok(requested.ok, requested.ok ? "" : requested.message);
    const approved = await approveApproval(
      operatorDepsOf(deps),
      actor(bruno),
      requested.value.approvalId,
      now,
      approvedActions,
    );
    assert.ok(approved.ok, approved.ok ? "" : approved.message);
    assert.ok((await markSent(m, "live", String(positivePay.batch_id))).ok);
    const audit = await rows(
      m,
      "SELECT action, operator_email FROM audit_log WHERE action LIKE 'checks:%' ORDER BY seq",
    );
    assert.deepEqual(audit, [
      { action: "checks:release", operator_email: "bruno@ops.test" },
      { action: "checks:mark-sent", operator_email: "admin@example.test" },
    ]);
  });
});

Deno.test("in doubt: a check file whose upload was interrupted is resolved by a second admin: not received, it is built again; transmitted, its payouts are sent", async () => {
  await withCheckFixture("live", async ({ m }) => {
    const [id] = await chooseCheck(m, [4_000]);
    await m.advance(HOUR_SECONDS);
    const [positivePay] = await checkFilesOf(m);
    const fileId = String(positivePay.batch_id);
    // What the transmit job does when it finds a file still transmitting after a stop.
    await m.database.writer.write((tx) => markInDoubt(tx, fileId));
    const deps = {
      databases: { test: m.database, live: m.database },
      secretBox: testSecretBox,
      config: { dev: false },
    } as unknown as AppDeps;
    const now = m.now();
    const alice = await makeOperator(deps, { email: "alice@ops.test", role: "admin" }, now);
    const bruno = await makeOperator(deps, { email: "bruno@ops.test", role: "admin" }, now);
    const actor = (op: { id: string; email: string }) => ({
      operator: { id: op.id, email: op.email },
      origin: "cli",
    });
    const fileDeps = moneyBatchDeps(m.database, "live");
    const resolveAs = async (as: "transmitted" | "not_received") => {
      const requested = await resolveCheckFile(fileDeps, actor(alice), fileId, as, m.now());
      assert.ok(requested.ok && requested.value.approvalId);
      const approved = await approveApproval(
        operatorDepsOf(deps),
        actor(bruno),
        requested.value.approvalId,
        m.now(),
        approvedActions,
      );
      assert.ok(approved.ok, approved.ok ? "" : approved.message);
      await m.settle();
    };
    await resolveAs("not_received");
    assert.deepEqual((await checkFilesOf(m)).map((f) => f.status).slice(0, 1), ["built"]);
    assert.equal((await m.payout(id)).status, "modality_selected");
    await m.database.writer.write((tx) => markInDoubt(tx, fileId));
    await resolveAs("transmitted");
    assert.deepEqual((await checkFilesOf(m)).map((f) => f.status).slice(0, 1), ["transmitted"]);
    assert.equal((await m.payout(id)).status, "funds_sent");
    const notInDoubt = await resolveCheckFile(fileDeps, actor(alice), fileId, "transmitted", now);
    assert.deepEqual(notInDoubt.ok ? null : notInDoubt.code, "check_file_not_in_doubt");
  });
});

Deno.test("a check file whose kept content is not the file its build checked is handed to nobody, and is not in doubt: its attempts were not transmitted and it waits built", async () => {
  const handed: string[] = [];
  let refuseNext = true;
  const bank: CheckTransport = {
    ...sandboxCheckBank,
    upload(settings, file, content) {
      handed.push(file.fileName);
      if (!refuseNext) return sandboxCheckBank.upload(settings, file, content);
      refuseNext = false;
      return Promise.resolve({ kind: "not_uploaded", reason: "connection refused" });
    },
  };
  await withCheckFixture("test", async ({ m }) => {
    await chooseCheck(m, [4_000]);
    // The file was built and refused once: it waits for its retry.
    const [positivePay] = await checkFilesOf(m);
    assert.equal(positivePay.status, "built");
    assert.equal(handed.length, 1);
    const fileId = String(positivePay.batch_id);
    const otherContent = new TextEncoder().encode("other,content\r\n");
    const other = await sealCheckFile(testSecretBox, otherContent);
    await m.database.writer.write((tx) =>
      tx.execute({
        sql: "UPDATE check_files SET content_sealed = ? WHERE batch_id = ?",
        args: [other, fileId],
      })
    );

    await quietly(() => m.advance(60));
    assert.equal(handed.length, 1, "nothing more was handed over");
    const [waiting] = await rows(m, "SELECT status, error FROM rail_batches WHERE id = ?", fileId);
    const why = `the kept file could not be opened: check file ${fileId} is not the file its ` +
      `build checked: its SHA-256 is ${await sha256Hex(
        otherContent,
      )}, the build's ${positivePay.sha256}`;
    assert.deepEqual(waiting, { status: "built", error: why });
    assert.deepEqual(
      await rows(
        m,
        "SELECT attempt, outcome, detail FROM rail_batch_attempts WHERE batch_id = ? ORDER BY attempt",
        fileId,
      ),
      [
        { attempt: 1, outcome: "not_transmitted", detail: "connection refused" },
        { attempt: 2, outcome: "not_transmitted", detail: why },
        { attempt: 3, outcome: "not_transmitted", detail: why },
      ],
    );
  }, { checkTransport: bank });
});

Deno.test("live over SFTP: the positive-pay file is uploaded at the cutoff and the print file after it; the payouts are sent", async () => {
  const sshd = await startTestSshd();
  try {
    const sftp = {
      host: "127.0.0.1",
      port: sshd.port,
      username: sshd.target.username,
      private_key: sshd.target.privateKey,
      host_key_fingerprint: sshd.hostKeyFingerprint,
      outbound_dir: sshd.outboundDir,
      inbound_dir: sshd.inboundDir,
    };
    await withCheckFixture("live", async ({ m }) => {
      const [id] = await chooseCheck(m, [8_800]);
      await m.advance(HOUR_SECONDS);
      const files = await checkFilesOf(m);
      assert.deepEqual(files.map((f) => [f.kind, f.status]), [
        ["positive_pay", "transmitted"],
        ["print", "transmitted"],
      ]);
      assert.equal((await m.payout(id)).status, "funds_sent");
      const uploaded = [...Deno.readDirSync(sshd.outboundDir)].map((e) => e.name).sort();
      assert.deepEqual(uploaded, files.map((f) => String(f.file_name)).sort());
      for (const file of files) {
        const bytes = await Deno.readFile(`${sshd.outboundDir}/${file.file_name}`);
        assert.equal(await sha256Hex(bytes), file.sha256, "the bank gets the stored file");
      }
      const manual = await markSent(m, "live", String(files[0].batch_id));
      assert.deepEqual(manual.ok ? null : manual.code, "check_file_not_built");
    }, { bankSettings: { sftp } });
  } finally {
    await sshd.close();
  }
});
