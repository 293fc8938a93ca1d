/**
 * End to end in live (issue 19): a company whose bank settings with a check account a second admin
 * approved, with CHECK_MICR_FONT set and no SFTP target (files wait for an admin's download and
 * mark-sent). It funds its line by wire and pays three payees: one postal check paid by the bank
 * (the paid-items import), one digital check (its link gives the PDF once its positive-pay file is
 * sent, and is paid too), and one postal check voided through the API, re-offered once the void's
 * positive-pay file was sent, chosen again and paid under a new number. Checked: the final states,
 * the register, the ledger, the tie-outs, the audit log and ledger:verify.
 */
import assert from "node:assert/strict";
import { runDueJobs } from "../db/scheduler.ts";
import { lineTieOut, verifyLedger } from "../lib/ledger/reports.ts";
import { readLineBalances } from "../lib/ledger/store.ts";
import { importPaidItems } from "../lib/checks/paid_import.ts";
import { selectMethod } from "../lib/payouts/jobs.ts";
import { payoutRuntime, runtimeSettingsOf } from "../lib/payouts/settings.ts";
import { signIn } from "../lib/operators/service.ts";
import { totpCodeAt } from "../lib/operators/totp.ts";
import { createApp } from "../routes/app.ts";
import { api, payee } from "./api_helpers.ts";
import { validSettingsJson } from "./bank_helpers.ts";
import { pdfPageTexts, STAND_IN_MICR_FONT } from "./check_pdf_text.ts";
import { liveCheckAccountJson } from "./checks_helpers.ts";
import { CHECK_ADDRESS } from "./checks_http_helpers.ts";
import { type HttpFixture, withHttpFixture } from "./http_fixture.ts";
import {
  ADMIN_TOKEN,
  adminCall,
  makeOperator,
  operatorDepsOf,
  type TestOperator,
} from "./operator_helpers.ts";

const MINUTE_MS = 60_000;
/** The fixture's clock starts on Monday 2026-01-05 at 15:00 UTC, 10:00 in New York. */
const MONDAY_10_00 = Date.UTC(2026, 0, 5, 15, 0);
/** The bank's cutoffs: 10:30 and 16:00 in New York. */
const MONDAY_10_31 = Date.UTC(2026, 0, 5, 15, 31);
const MONDAY_16_01 = Date.UTC(2026, 0, 5, 21, 1);
const TUESDAY_16_05 = Date.UTC(2026, 0, 6, 21, 5);
const WEDNESDAY_10_31 = Date.UTC(2026, 0, 7, 15, 31);
const WEDNESDAY_11_00 = Date.UTC(2026, 0, 7, 16, 0);
const SDN_CSV = '7001,"KARIMOV, Rustam","individual","SDGT",-0-,-0-\r\n\x1a';

Deno.test("end to end in live: a postal check paid, a digital check, a check voided and re-offered, with the register, the ledger, the tie-outs and the audit log", async () => {
  await withHttpFixture(endToEnd, { CHECK_MICR_FONT: STAND_IN_MICR_FONT });
});

async function endToEnd(f: HttpFixture): Promise<void> {
  assert.equal(f.clock.now(), MONDAY_10_00);
  const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
  const live = f.deps.databases.live;
  const acme = f.cast.acme;
  const asLive = { key: f.cast.alice.keyLive, tin: acme.tin };
  const rows = async (sql: string, ...args: (string | number)[]) =>
    (await live.readClient.execute({ sql, args })).rows.map((row) => ({ ...row }));
  const runUntil = async (at: number) => {
    f.clock.set(at);
    return await runDueJobs(live, acme.id, at, f.deps.jobHandlers.live, { clock: f.clock });
  };
  const now = f.clock.now();
  const alice = await makeOperator(f.deps, { email: "alice@ops.test", role: "admin" }, now);
  const bruno = await makeOperator(f.deps, { email: "bruno@ops.test", role: "admin" }, now);
  const asBruno = adminCall(app, bruno.token);
  /** Alice's commands, in a session signed in again once the clock moved on (sessions expire). */
  let aliceSession = { token: alice.token!, at: now };
  const asAlice = async (name: string, flags: Record<string, string>) => {
    if (f.clock.now() - aliceSession.at >= MINUTE_MS) {
      aliceSession = { token: await signInNow(alice), at: f.clock.now() };
    }
    const answer = await adminCall(app, aliceSession.token)(name, flags);
    assert.equal(answer.status, 200, `${name}: ${JSON.stringify(answer.body)}`);
    return answer.body.result;
  };
  const signInNow = async (operator: TestOperator) => {
    const session = await signIn(operatorDepsOf(f.deps), "test", {
      email: operator.email,
      password: operator.password,
      code: totpCodeAt(operator.totpSecret, f.clock.now()),
    }, f.clock.now());
    if (!session.ok) throw new Error(session.message);
    return session.value.token;
  };
  const dir = await Deno.makeTempDir({ prefix: "checks-e2e-" });
  try {
    // 1. Bank settings with a check account: requested by Alice, saved once Bruno approves.
    const settingsPath = `${dir}/acme-bank.json`;
    await Deno.writeTextFile(
      settingsPath,
      JSON.stringify({ ...validSettingsJson(), check_account: liveCheckAccountJson() }),
    );
    const requested = await asAlice("bank:set", { tin: acme.tin, file: settingsPath });
    assert.equal(requested.status, "pending_approval");
    const approved = await asBruno("approvals:approve", { id: requested.approval_id });
    assert.equal(approved.status, 200, JSON.stringify(approved.body));
    const sdnPath = `${dir}/sdn.csv`;
    await Deno.writeTextFile(sdnPath, SDN_CSV);
    await asAlice("ofac:load", { file: sdnPath });

    // 2. A $1,000.00 wire, recorded by Alice and approved by Bruno.
    const funded = await api(f, "POST", "/api/funds", {
      payment_method: "WireTransfer",
      amount: 1000,
      description: "wire",
      large_disbursement: false,
      line: "auto",
    }, asLive);
    assert.equal(funded.status, 201, await funded.clone().text());
    const wire = await asAlice("wire:receive", { funding: (await funded.json()).funding_uuid });
    assert.equal(
      (await asBruno("approvals:approve", { id: wire.approval_id })).status,
      200,
    );
    assert.equal((await readLineBalances(live.readClient, acme.autoLineId)).available, 100_000);

    // 3. Three payees at 10:01: a postal check, a digital check, and a postal check to be voided.
    f.clock.set(MONDAY_10_00 + MINUTE_MS);
    const created = await api(f, "POST", "/api/disbursements", {
      disbursement_uuid: "D-CHECKS-1",
      large_disbursement: false,
      line: "auto",
      payees: [
        payee("P-PAPER", 100, { allowed_payment_method_ids: [2, 5] }),
        payee("P-DIGITAL", 200, { allowed_payment_method_ids: [2, 5] }),
        payee("P-VOID", 300, { allowed_payment_method_ids: [2, 5] }),
      ],
    }, asLive);
    assert.equal(created.status, 201, await created.clone().text());
    await runUntil(f.clock.now());
    const idOf = async (uuid: string) =>
      String((await rows("SELECT id FROM payouts WHERE payee_uuid = ?", uuid))[0].id);
    const ids = {
      paper: await idOf("P-PAPER"),
      digital: await idOf("P-DIGITAL"),
      voided: await idOf("P-VOID"),
    };
    const choose = async (payoutId: string, method: 2 | 5) => {
      const selected = await live.writer.write((tx) =>
        selectMethod(tx, payoutId, {
          paymentMethodId: method,
          details: { zip: CHECK_ADDRESS.zip_code },
          kept: method === 2 ? CHECK_ADDRESS : { email: "dora@example.test" },
        }, f.clock.now())
      );
      assert.ok(selected.ok, selected.ok ? "" : selected.message);
    };
    await choose(ids.paper, 2);
    await choose(ids.digital, 5);
    await choose(ids.voided, 2);
    await runUntil(f.clock.now());
    const register = () =>
      rows(
        "SELECT check_number, payout_id, kind, amount_cents, status FROM checks ORDER BY check_number",
      );
    assert.deepEqual(await register(), [
      {
        check_number: 5001,
        payout_id: ids.paper,
        kind: "postal",
        amount_cents: 10_000,
        status: "issued",
      },
      {
        check_number: 5002,
        payout_id: ids.digital,
        kind: "digital",
        amount_cents: 20_000,
        status: "issued",
      },
      {
        check_number: 5003,
        payout_id: ids.voided,
        kind: "postal",
        amount_cents: 30_000,
        status: "issued",
      },
    ]);
    const status = async (payoutId: string) =>
      (await rows("SELECT status FROM payouts WHERE id = ?", payoutId))[0].status;

    // 4. The 10:30 cutoff builds the positive-pay file and the print file; they wait for an admin.
    await runUntil(MONDAY_10_31);
    const files = async () =>
      (await asAlice("checks:files", { tin: acme.tin })).files as Record<string, unknown>[];
    const [print1, positivePay1] = await files();
    assert.deepEqual(
      [positivePay1.kind, positivePay1.status, positivePay1.issue_count, positivePay1.total_cents],
      ["positive_pay", "built", 3, 60_000],
    );
    assert.deepEqual([print1.kind, print1.status, print1.issue_count], ["print", "built", 2]);
    // The print file is held until the bank knows the checks.
    const held = await adminCall(app, aliceSession.token)("checks:download", {
      file: String(print1.id),
      out: `${dir}/print-early.pdf`,
    });
    assert.equal(held.status, 409, JSON.stringify(held.body));
    const digitalLink = async () => {
      const [message] = await rows(
        "SELECT links FROM notifications WHERE payout_id = ? AND subject LIKE '%is ready'",
        ids.digital,
      );
      return message ? (JSON.parse(String(message.links)) as string[])[0] : null;
    };
    assert.equal(await digitalLink(), null);

    await asAlice("checks:download", { file: String(positivePay1.id), out: `${dir}/pp1.csv` });
    const csv = await Deno.readTextFile(`${dir}/pp1.csv`);
    assert.match(csv, /4455667788,5001,100\.00,01\/05\/2026,Pat Doe,I/);
    await asAlice("checks:mark-sent", { file: String(positivePay1.id) });
    for (const id of Object.values(ids)) assert.equal(await status(id), "funds_sent");
    await asAlice("checks:download", { file: String(print1.id), out: `${dir}/print1.pdf` });
    const printed = await pdfPageTexts(await Deno.readFile(`${dir}/print1.pdf`));
    assert.equal(printed.length, 2);
    assert.match(printed[0], /One Hundred and 00\/100 Dollars/);
    assert.doesNotMatch(printed.join(""), /NOT NEGOTIABLE/);
    await asAlice("checks:mark-sent", { file: String(print1.id) });

    // 5. The digital check: its payee was told, and the link gives the PDF of check 5002.
    const link = await digitalLink();
    assert.ok(link);
    const url = new URL(link);
    const pdf = await app.request(`${url.pathname}${url.search}`);
    assert.equal(pdf.status, 200);
    assert.equal(pdf.headers.get("Content-Type"), "application/pdf");
    const [digitalText] = await pdfPageTexts(new Uint8Array(await pdf.arrayBuffer()));
    assert.match(digitalText, /5002\n/);
    assert.match(digitalText, /Two Hundred and 00\/100 Dollars/);

    // 6. Check 5003 is voided through the API; its payout waits until the bank knows the void.
    f.clock.set(MONDAY_10_31 + 10 * MINUTE_MS);
    const voided = await api(f, "POST", "/api/checks/5003/void", { reason: "payee moved" }, asLive);
    assert.equal(voided.status, 200, await voided.clone().text());
    assert.equal((await voided.json()).status, "voided");
    assert.equal(await status(ids.voided), "funds_sent");
    await runUntil(MONDAY_16_01);
    const [positivePay2] = await files();
    assert.deepEqual(
      [positivePay2.kind, positivePay2.status, positivePay2.issue_count, positivePay2.void_count],
      ["positive_pay", "built", 0, 1],
    );
    await asAlice("checks:mark-sent", { file: String(positivePay2.id) });
    await runUntil(f.clock.now());
    // The payee may have deposited 5003 before the void reached the bank.
    assert.equal(await status(ids.voided), "funds_sent");
    // Tuesday's paid-items file, dropped in the inbound directory, reports nothing paid: a
    // business day after the void was sent, it covers it.
    f.clock.set(TUESDAY_16_05);
    const covered = await importPaidItems({
      database: live,
      environment: "live",
      runtime: payoutRuntime("live", runtimeSettingsOf(f.deps.config)),
    }, {
      companyId: acme.id,
      content: new TextEncoder().encode("check_number,amount,paid_date\n"),
      fileName: "paid-2026-01-06.csv",
      source: "sftp",
      importedBy: null,
    }, f.clock.now());
    assert.ok(covered.ok);
    assert.deepEqual(
      await rows("SELECT status, failure_reason FROM payouts WHERE id = ?", ids.voided),
      [{ status: "modality_offered", failure_reason: "check_voided" }],
    );

    // 7. Re-offered, the payee chooses a postal check again: a new number, 5004.
    await choose(ids.voided, 2);
    await runUntil(f.clock.now());
    await runUntil(WEDNESDAY_10_31);
    const [print3, positivePay3] = await files();
    assert.deepEqual([positivePay3.issue_count, print3.issue_count], [1, 1]);
    await asAlice("checks:mark-sent", { file: String(positivePay3.id) });
    await asAlice("checks:mark-sent", { file: String(print3.id) });
    assert.equal(await status(ids.voided), "funds_sent");

    // 8. Wednesday, the bank's paid items: 5001, 5002 and 5004, each for its amount.
    f.clock.set(WEDNESDAY_11_00);
    const paidPath = `${dir}/paid-2026-01-07.csv`;
    await Deno.writeTextFile(
      paidPath,
      "Check Number,Amount,Paid Date\n5001,100.00,2026-01-07\n5002,200.00,2026-01-07\n5004,300.00,2026-01-07\n",
    );
    // Imported by hand in live, the file waits for a second admin, showing what it would apply.
    const staged = await asAlice("checks:import-paid", { tin: acme.tin, file: paidPath });
    assert.deepEqual(
      [
        staged.status,
        staged.would_apply.items_matched,
        staged.would_apply.exceptions,
        staged.would_apply.money_moved_cents > 0,
        staged.would_apply.payouts_affected.length,
      ],
      ["pending_approval", 3, 0, true, 3],
    );
    f.clock.advance(30_000);
    const approvedImport = await adminCall(app, await signInNow(bruno))("approvals:approve", {
      id: staged.approval_id,
    });
    assert.equal(approvedImport.status, 200, JSON.stringify(approvedImport.body));
    const imported = approvedImport.body.result.result;
    assert.deepEqual(
      [imported.duplicate, imported.matched, imported.exceptions],
      [false, 3, 0],
    );
    await runUntil(f.clock.now());
    for (const id of Object.values(ids)) assert.equal(await status(id), "completed");
    assert.deepEqual(await register(), [
      {
        check_number: 5001,
        payout_id: ids.paper,
        kind: "postal",
        amount_cents: 10_000,
        status: "paid",
      },
      {
        check_number: 5002,
        payout_id: ids.digital,
        kind: "digital",
        amount_cents: 20_000,
        status: "paid",
      },
      {
        check_number: 5003,
        payout_id: ids.voided,
        kind: "postal",
        amount_cents: 30_000,
        status: "voided",
      },
      {
        check_number: 5004,
        payout_id: ids.voided,
        kind: "postal",
        amount_cents: 30_000,
        status: "paid",
      },
    ]);
    assert.deepEqual((await asAlice("checks:exceptions", {})).exceptions, []);

    // The ledger: $1,000.00 funded, $600.00 paid by check; the void moved money within held only.
    assert.deepEqual(await readLineBalances(live.readClient, acme.autoLineId), {
      available: 40_000,
      pending_funding: 0,
      reserved: 0,
      in_transit: 0,
      fees_payor: 0,
      fees_payee: 0,
      fees_service: 0,
      bank: -40_000,
      funding_shortfall: 0,
      unclaimed_remitted: 0,
    });
    assert.deepEqual(await verifyLedger(live.readClient), []);
    const tieOut = async (date: string) => {
      const day = await lineTieOut(live.readClient, acme.autoLineId, date);
      return [day!.opening, day!.funded, day!.disbursed, day!.closing, day!.difference];
    };
    assert.deepEqual(await tieOut("2026-01-05"), [0, 100_000, 0, 100_000, 0]);
    assert.deepEqual(await tieOut("2026-01-06"), [100_000, 0, 0, 100_000, 0]);
    assert.deepEqual(await tieOut("2026-01-07"), [100_000, 0, 60_000, 40_000, 0]);
    await asAlice("ledger:verify", { environment: "live" });

    // The audit log: the settings and the wire under dual control, every file marked sent and
    // downloaded by Alice, the API user's void, the import.
    const audit = (await rows("SELECT action, operator_email, origin FROM audit_log ORDER BY seq"))
      .filter((row) =>
        row.action !== "login" && row.action !== "operator:create" &&
        !String(row.action).startsWith("approval:")
      )
      .map((row) => `${row.action} ${row.operator_email ?? row.origin}`);
    assert.deepEqual(audit, [
      "bank:set bruno@ops.test",
      "ofac:load alice@ops.test",
      "wire:receive bruno@ops.test",
      "checks:download alice@ops.test",
      "checks:mark-sent alice@ops.test",
      "checks:download alice@ops.test",
      "checks:mark-sent alice@ops.test",
      `checks:void api user ${f.cast.alice.id}`,
      "checks:mark-sent alice@ops.test",
      "checks:mark-sent alice@ops.test",
      "checks:mark-sent alice@ops.test",
      "checks:import-paid bruno@ops.test",
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
