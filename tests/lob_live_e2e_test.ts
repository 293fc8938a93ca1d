/**
 * End to end in live with checks mailed by Lob (the contract server of tests/lob_contract_server.ts
 * in Lob's place): bank settings with a check account and Lob settings, each under dual control;
 * a wire; two payees choosing a postal check. The positive-pay file goes to the bank (an admin's
 * mark-sent), then the print file's checks are created at Lob with the register's numbers. One is
 * tracked (in transit, delivered: on the timeline) and paid by the bank (completed); the other is
 * returned to sender (voided; once the void reached the bank its payout fails
 * `returned_undeliverable` and is offered again). A forged webhook writes nothing, a replay
 * records nothing. Checked: the states, the events, the register, the ledger, the tie-outs and the
 * audit log.
 */
import assert from "node:assert/strict";
import { runDueJobs } from "../db/scheduler.ts";
import { lineTieOut, verifyLedger } from "../lib/ledger/reports.ts";
import { readLineBalances } from "../lib/ledger/store.ts";
import { selectMethod } from "../lib/payouts/jobs.ts";
import { payoutDetail } from "../lib/console/payouts.ts";
import { signIn } from "../lib/operators/service.ts";
import { totpCodeAt } from "../lib/operators/totp.ts";
import { createApp } from "../routes/app.ts";
import { api, payee } from "./api_helpers.ts";
import { validSettingsJson } from "./bank_helpers.ts";
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
import {
  LOB_BANK_ACCOUNT,
  LOB_FROM_ADDRESS,
  LOB_LIVE_KEY,
  LOB_WEBHOOK_SECRET,
  type LobContractServer,
  startLobContractServer,
} from "./lob_contract_server.ts";

const MINUTE_MS = 60_000;
/** The fixture's clock starts on Monday 2026-01-05 at 15:00 UTC, 10:00 in New York. */
const MONDAY_10_00 = Date.UTC(2026, 0, 5, 15, 0);
/** The bank's cutoffs: 10:30 and 16:00 in New York. */
const MONDAY_10_31 = Date.UTC(2026, 0, 5, 15, 31);
const MONDAY_16_01 = Date.UTC(2026, 0, 5, 21, 1);
const WEDNESDAY_11_00 = Date.UTC(2026, 0, 7, 16, 0);
const SDN_CSV = '7001,"KARIMOV, Rustam","individual","SDGT",-0-,-0-\r\n\x1a';

Deno.test("end to end in live, Lob mailing: a check delivered and paid, a check returned to sender and offered again, with the ledger, the tie-outs, the events and the audit log", async () => {
  const lob = startLobContractServer(LOB_LIVE_KEY);
  try {
    await withHttpFixture((f) => endToEnd(f, lob));
  } finally {
    await lob.close();
  }
});

async function endToEnd(f: HttpFixture, lob: LobContractServer): Promise<void> {
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
  const signInNow = async (operator: TestOperator) => {
    const session = await signIn(operatorDepsOf(f.deps), "test", {
      email: operator.email,
      password: operator.password,
      code: totpCodeAt(operator.totpSecret, f.clock.now()),
    }, f.clock.now());
    if (!session.ok) throw new Error(session.message);
    return session.value.token;
  };
  const sessions = new Map<string, { token: string; at: number }>();
  const as = (operator: TestOperator) => async (name: string, flags: Record<string, string>) => {
    let session = sessions.get(operator.email) ??
      { token: operator.token!, at: now };
    if (f.clock.now() - session.at >= MINUTE_MS) {
      f.clock.advance(30_000);
      session = { token: await signInNow(operator), at: f.clock.now() };
    }
    sessions.set(operator.email, session);
    const answer = await adminCall(app, session.token)(name, flags);
    assert.equal(answer.status, 200, `${name}: ${JSON.stringify(answer.body)}`);
    return answer.body.result;
  };
  const asAlice = as(alice);
  const asBruno = as(bruno);
  const webhook = (hook: { headers: Record<string, string>; body: string }) =>
    app.request(`/rails/lob/${acme.id}/live/webhook`, {
      method: "POST",
      headers: hook.headers,
      body: hook.body,
    });
  const dir = await Deno.makeTempDir({ prefix: "lob-e2e-" });
  try {
    // 1. Bank settings with a check account, then Lob settings: each saved once Bruno approves.
    await Deno.writeTextFile(
      `${dir}/bank.json`,
      JSON.stringify({ ...validSettingsJson(), check_account: liveCheckAccountJson() }),
    );
    const bank = await asAlice("bank:set", { tin: acme.tin, file: `${dir}/bank.json` });
    await asBruno("approvals:approve", { id: bank.approval_id });
    await Deno.writeTextFile(
      `${dir}/lob.json`,
      JSON.stringify({
        api_key: LOB_LIVE_KEY,
        base_url: lob.baseUrl,
        webhook_secret: LOB_WEBHOOK_SECRET,
        bank_account: LOB_BANK_ACCOUNT,
        from_address: LOB_FROM_ADDRESS,
      }),
    );
    const lobSet = await asAlice("lob:set", { tin: acme.tin, file: `${dir}/lob.json` });
    assert.equal(lobSet.status, "pending_approval");
    assert.equal(
      (await rows("SELECT count(*) AS n FROM lob_settings"))[0].n,
      0,
      "nothing is saved before the second admin",
    );
    await asBruno("approvals:approve", { id: lobSet.approval_id });
    const shown = await asAlice("lob:show", { tin: acme.tin });
    assert.deepEqual(
      [shown.settings.api_key, shown.settings.webhook_secret, shown.settings.mailing],
      [`…${LOB_LIVE_KEY.slice(-4)}`, "(sealed)", "provider"],
    );
    await Deno.writeTextFile(`${dir}/sdn.csv`, SDN_CSV);
    await asAlice("ofac:load", { file: `${dir}/sdn.csv` });

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
    await asBruno("approvals:approve", { id: wire.approval_id });

    // 3. Two payees choose a postal check; a postage Lob cannot mail is refused at create.
    f.clock.set(MONDAY_10_00 + MINUTE_MS);
    const priority = await api(f, "POST", "/api/disbursements", {
      disbursement_uuid: "D-LOB-PR",
      large_disbursement: false,
      line: "auto",
      payees: [payee("P-PR", 100, {
        allowed_payment_method_ids: [2],
        payment_method_settings: { check_postage_type: "PR" },
      })],
    }, asLive);
    assert.equal(priority.status, 400);
    const created = await api(f, "POST", "/api/disbursements", {
      disbursement_uuid: "D-LOB-1",
      large_disbursement: false,
      line: "auto",
      payees: [
        payee("P-MAIL", 100, { allowed_payment_method_ids: [2] }),
        payee("P-BACK", 300, { allowed_payment_method_ids: [2] }),
      ],
    }, asLive);
    assert.equal(created.status, 201, await created.clone().text());
    await runUntil(f.clock.now());
    const idOf = async (uuid: string) =>
      String((await rows("SELECT id FROM payouts WHERE payee_uuid = ?", uuid))[0].id);
    const ids = { mail: await idOf("P-MAIL"), back: await idOf("P-BACK") };
    for (const id of Object.values(ids)) {
      const selected = await live.writer.write((tx) =>
        selectMethod(tx, id, {
          paymentMethodId: 2,
          details: { zip: CHECK_ADDRESS.zip_code },
          kept: CHECK_ADDRESS,
        }, f.clock.now())
      );
      assert.ok(selected.ok, selected.ok ? "" : selected.message);
    }
    await runUntil(f.clock.now());
    const status = async (payoutId: string) =>
      (await rows("SELECT status FROM payouts WHERE id = ?", payoutId))[0].status;

    // 4. The 10:30 cutoff: the positive-pay file waits for the bank; nothing is at Lob yet.
    await runUntil(MONDAY_10_31);
    const files = async () =>
      (await asAlice("checks:files", { tin: acme.tin })).files as Record<string, unknown>[];
    const [print1, positivePay1] = await files();
    assert.deepEqual(
      [positivePay1.kind, positivePay1.status, print1.kind, print1.status],
      ["positive_pay", "built", "print", "built"],
    );
    assert.equal(lob.checks.size, 0, "no check exists on paper before the bank knows it");
    await asAlice("checks:download", { file: String(positivePay1.id), out: `${dir}/pp1.csv` });
    await asAlice("checks:mark-sent", { file: String(positivePay1.id) });
    await runUntil(f.clock.now());

    // 5. The print file went to Lob: one check per register check, drawn on the check account.
    const [printAfter] = await files();
    assert.equal(printAfter.status, "transmitted");
    const mailed = [...lob.checks.values()].map((check) => ({
      number: check.body.check_number,
      amount: check.body.amount,
      bank_account: check.body.bank_account,
      mail_type: check.body.mail_type,
      payout: (check.body.metadata as Record<string, string>).payout_id,
    }));
    assert.deepEqual(mailed, [
      {
        number: 5001,
        amount: 100,
        bank_account: LOB_BANK_ACCOUNT,
        mail_type: "usps_first_class",
        payout: ids.mail,
      },
      {
        number: 5002,
        amount: 300,
        bank_account: LOB_BANK_ACCOUNT,
        mail_type: "usps_first_class",
        payout: ids.back,
      },
    ]);
    for (const id of Object.values(ids)) assert.equal(await status(id), "funds_sent");
    const [toMail, toReturn] = [...lob.checks.values()];

    // 6. Lob's webhooks: tracking on the timeline; a forged one and a replay change nothing.
    const signedAt = f.clock.now();
    const inTransit = lob.webhook("check.in_transit", toMail.id, { signedAt, at: signedAt });
    assert.equal((await webhook(inTransit)).status, 200);
    assert.equal((await webhook(inTransit)).status, 200, "a replay is acknowledged");
    const forged = await webhook(
      lob.webhook("check.returned_to_sender", toMail.id, { signedAt, secret: "f".repeat(24) }),
    );
    assert.equal(forged.status, 400);
    assert.equal((await forged.json()).error.code, "webhook_not_verified");
    assert.equal(
      (await webhook(lob.webhook("check.delivered", toMail.id, { signedAt, at: signedAt + 1 })))
        .status,
      200,
    );
    assert.deepEqual(
      (await rows("SELECT type FROM check_mail_events ORDER BY at")).map((row) => row.type),
      ["check.in_transit", "check.delivered"],
    );
    // The console's payout page shows Lob's steps among the payout's own.
    const detail = await payoutDetail(live, null, ids.mail, f.clock.now());
    assert.deepEqual(
      detail!.timeline.map((step) => `${step.to}${step.detail ? ` ${step.detail}` : ""}`).slice(-2),
      [`mail in transit (Lob ${toMail.id})`, `mail delivered (Lob ${toMail.id})`],
    );

    // 7. Check 5002 is returned to sender: voided, and told to the bank at the 16:00 cutoff.
    assert.equal(
      (await webhook(lob.webhook("check.returned_to_sender", toReturn.id, { signedAt }))).status,
      200,
    );
    assert.deepEqual(
      await rows("SELECT status, void_reason FROM checks WHERE check_number = 5002"),
      [
        { status: "voided", void_reason: "returned_undeliverable" },
      ],
    );
    await runUntil(MONDAY_16_01);
    const [positivePay2] = await files();
    assert.deepEqual([positivePay2.kind, positivePay2.void_count], ["positive_pay", 1]);
    await asAlice("checks:download", { file: String(positivePay2.id), out: `${dir}/pp2.csv` });
    await asAlice("checks:mark-sent", { file: String(positivePay2.id) });
    await runUntil(f.clock.now());
    // The post office returned the paper: the bank could never pay it, the payout fails at once.
    assert.deepEqual(
      await rows("SELECT status, failure_reason FROM payouts WHERE id = ?", ids.back),
      [
        { status: "modality_offered", failure_reason: "returned_undeliverable" },
      ],
    );
    const eventsOf = async (payoutId: string) =>
      (await rows(
        "SELECT event_type_id FROM events WHERE payout_id = ? ORDER BY created_at, rowid",
        payoutId,
      ))
        .map((row) => Number(row.event_type_id));

    // 8. Wednesday, the bank's paid items: 5001 for its amount (staged, a second admin approves).
    f.clock.set(WEDNESDAY_11_00);
    await Deno.writeTextFile(
      `${dir}/paid.csv`,
      "Check Number,Amount,Paid Date\n5001,100.00,2026-01-07\n",
    );
    const staged = await asAlice("checks:import-paid", { tin: acme.tin, file: `${dir}/paid.csv` });
    assert.equal(staged.status, "pending_approval");
    await asBruno("approvals:approve", { id: staged.approval_id });
    await runUntil(f.clock.now());
    assert.equal(await status(ids.mail), "completed");
    assert.deepEqual(
      await rows("SELECT check_number, status FROM checks ORDER BY check_number"),
      [{ check_number: 5001, status: "paid" }, { check_number: 5002, status: "voided" }],
    );
    const mailEvents = await eventsOf(ids.mail);
    assert.equal(mailEvents.at(-1), 7, "the delivered and paid check's payout completed");
    const backEvents = await eventsOf(ids.back);
    assert.deepEqual(backEvents.slice(-2), [8, 4], "failed, then offered again");
    assert.equal(lob.checks.size, 2, "no check was mailed twice");

    // The ledger: $1,000.00 funded, $100.00 paid by check; the returned $300.00 is held again.
    const balances = await readLineBalances(live.readClient, acme.autoLineId);
    assert.deepEqual(
      [balances.available, balances.reserved, balances.in_transit, balances.bank],
      [60_000, 30_000, 0, -90_000],
    );
    assert.deepEqual(await verifyLedger(live.readClient), []);
    const tieOut = async (date: string) => {
      const day = await lineTieOut(live.readClient, acme.autoLineId, date);
      return [day!.funded, day!.disbursed, day!.difference];
    };
    assert.deepEqual(await tieOut("2026-01-05"), [100_000, 0, 0]);
    assert.deepEqual(await tieOut("2026-01-07"), [0, 10_000, 0]);

    // The audit log: both settings under dual control, the files, the import.
    const audit = (await rows("SELECT action, operator_email, origin FROM audit_log ORDER BY seq"))
      .filter((row) =>
        row.action !== "login" && row.action !== "operator:create" &&
        !String(row.action).startsWith("approval:")
      )
      .map((row) => `${row.action} ${row.operator_email ?? row.origin}`);
    assert.deepEqual(audit, [
      "bank:set bruno@ops.test",
      "lob:set bruno@ops.test",
      "ofac:load alice@ops.test",
      "wire:receive bruno@ops.test",
      "checks:download alice@ops.test",
      "checks:mark-sent alice@ops.test",
      "checks:download alice@ops.test",
      "checks:mark-sent alice@ops.test",
      "checks:import-paid bruno@ops.test",
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
