/**
 * End to end in live (issue 18): a company whose bank settings a second admin approved, with an
 * SFTP target on a real sshd (tests/sshd_helpers.ts). It funds its line by ACH debit; pays three
 * payees, one held by OFAC screening and cleared by an operator; the cutoffs build NACHA files that
 * land in the outbound directory; the bank's return for one payee and notice of change for another
 * are dropped in the inbound directory and polled; the return window passes. Checked: the final
 * states, the files, the ledger, the tie-out and the audit log.
 *
 * The service polls the inbound directory every 15 minutes; over the days this test spans that is
 * hundreds of SFTP sessions that find nothing, so the pending poll is moved to the moments the
 * test drops files (`pollAt`).
 */
import assert from "node:assert/strict";
import { runDueJobs } from "../db/scheduler.ts";
import { correctedAccount } from "../lib/ach/corrections.ts";
import { INBOUND_POLL_JOB } from "../lib/ach/inbound.ts";
import { buildReturnFile, checkNachaFile, type ReturnToWrite } from "../lib/ach/nacha.ts";
import { lineTieOut, verifyLedger } from "../lib/ledger/reports.ts";
import { readLineBalances } from "../lib/ledger/store.ts";
import { selectMethod } from "../lib/payouts/jobs.ts";
import { createApp } from "../routes/app.ts";
import { api, payee } from "./api_helpers.ts";
import { type HttpFixture, withHttpFixture } from "./http_fixture.ts";
import { signIn } from "../lib/operators/service.ts";
import { totpCodeAt } from "../lib/operators/totp.ts";
import {
  ADMIN_TOKEN,
  adminCall,
  makeOperator,
  operatorDepsOf,
  type TestOperator,
} from "./operator_helpers.ts";
import { startTestSshd, type TestSshd } from "./sshd_helpers.ts";

const HOUR_MS = 3_600_000;
/** The fixture's clock starts on Monday 2026-01-05 at 15:00 UTC, 10:00 in New York. */
const MONDAY_10_00 = Date.UTC(2026, 0, 5, 15, 0);
const ACCOUNTS = {
  returned: "000444000001",
  corrected: "000444000002",
  cleared: "000444000003",
};
const PAYEE_ROUTING = "011000015";

function settingsJson(sshd: TestSshd): Record<string, unknown> {
  return {
    immediate_destination: "021000021",
    immediate_destination_name: "FIRST EXAMPLE BANK",
    immediate_origin: "1111111111",
    immediate_origin_name: "ACME MUTUAL",
    odfi_routing: "021000021",
    company_identification: "1111111111",
    company_name: "ACME MUTUAL",
    funding_account: {
      routing_number: "011000015",
      account_number: "123456789012",
      account_type: "checking",
      name: "ACME MUTUAL OPERATING",
    },
    settlement_account: {
      routing_number: "021000021",
      account_number: "9876543210",
      account_type: "checking",
      name: "ACME MUTUAL SETTLEMENT",
    },
    balanced_file: false,
    cutoffs: [{ time: "10:30", kind: "same_day" }, { time: "16:00", kind: "next_day" }],
    sftp: {
      host: "127.0.0.1",
      port: sshd.port,
      username: sshd.target.username,
      private_key: sshd.target.privateKey,
      host_key_fingerprint: sshd.hostKeyFingerprint,
      outbound_dir: sshd.outboundDir,
      inbound_dir: sshd.inboundDir,
    },
  };
}

/** A tiny SDN list as OFAC publishes it (sdn.csv): one individual. */
const SDN_CSV = '7001,"KARIMOV, Rustam","individual","SDGT",-0-,-0-\r\n\x1a';

Deno.test("end to end in live: ACH funding, three payees (one held by OFAC and cleared), files over SFTP, a return and a notice of change polled, the return window passed", async () => {
  const sshd = await startTestSshd();
  try {
    await withHttpFixture((f) => endToEnd(f, sshd));
  } finally {
    await sshd.close();
  }
});

async function endToEnd(f: HttpFixture, sshd: TestSshd): Promise<void> {
  assert.equal(f.clock.now(), MONDAY_10_00);
  const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
  const live = f.deps.databases.live;
  const acme = f.cast.acme;
  const asLive = { key: f.cast.alice.keyLive, tin: acme.tin };
  const rows = async (sql: string, ...args: (string | number)[]) =>
    (await live.readClient.execute({ sql, args })).rows.map((row) => ({ ...row }));
  /** Runs the live jobs due until `at`, with real time (leases) at `at` too. */
  const runUntil = async (at: number) => {
    f.clock.set(at);
    return await runDueJobs(live, acme.id, at, f.deps.jobHandlers.live, { clock: f.clock });
  };
  const pollAt = (at: number) =>
    live.writer.write((tx) =>
      tx.execute({
        sql: "UPDATE scheduled_jobs SET due_at = ? WHERE kind = ? AND done_at IS NULL",
        args: [at, INBOUND_POLL_JOB],
      })
    );
  const now = f.clock.now();
  const alice = await makeOperator(f.deps, { email: "alice@ops.test", role: "admin" }, now);
  const bruno = await makeOperator(f.deps, { email: "bruno@ops.test", role: "admin" }, now);
  const asBruno = adminCall(app, bruno.token);
  /** Alice's commands, in a session signed in again once the clock moved on (sessions expire). */
  let aliceSession = { token: alice.token!, at: now };
  const asAlice = async (name: string, flags: Record<string, string>) => {
    if (f.clock.now() - aliceSession.at >= 60_000) {
      aliceSession = { token: await signInNow(alice), at: f.clock.now() };
    }
    return await adminCall(app, aliceSession.token)(name, flags);
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

  // 1. Bank settings with an SFTP target: requested by one admin, approved by another.
  const settingsPath = `${sshd.root}/acme-bank.json`;
  await Deno.writeTextFile(settingsPath, JSON.stringify(settingsJson(sshd)));
  const requested = await asAlice("bank:set", { tin: acme.tin, file: settingsPath });
  assert.equal(requested.status, 200, JSON.stringify(requested.body));
  assert.equal(requested.body.result.status, "pending_approval");
  assert.deepEqual(await rows("SELECT count(*) AS n FROM bank_settings"), [{ n: 0 }]);
  const approved = await asBruno("approvals:approve", { id: requested.body.result.approval_id });
  assert.equal(approved.status, 200, JSON.stringify(approved.body));
  assert.deepEqual(await rows("SELECT company_id FROM bank_settings"), [{ company_id: acme.id }]);
  assert.deepEqual(
    await rows(
      "SELECT due_at FROM scheduled_jobs WHERE kind = ? AND done_at IS NULL",
      INBOUND_POLL_JOB,
    ),
    [{ due_at: now }],
  );

  // The OFAC list, as published.
  const sdnPath = `${sshd.root}/sdn.csv`;
  await Deno.writeTextFile(sdnPath, SDN_CSV);
  const loaded = await asAlice("ofac:load", { file: sdnPath });
  assert.equal(loaded.status, 200, JSON.stringify(loaded.body));

  // 2. Fund the line by ACH debit: $5,000.00, cut off at 10:30, settled after the return window.
  const funded = await api(f, "POST", "/api/funds", {
    payment_method: "ACH",
    amount: 5000,
    description: "ACH funding",
    large_disbursement: false,
    line: "auto",
  }, asLive);
  assert.equal(funded.status, 201, await funded.clone().text());
  const fundingId = (await funded.json()).funding_uuid as string;
  await pollAt(MONDAY_10_00 + 100 * HOUR_MS);
  // At the cutoff: in live a cutoff run after its window closed would build nothing.
  await runUntil(MONDAY_10_00 + HOUR_MS / 2);
  const outbound = async () => {
    const names: string[] = [];
    for await (const entry of Deno.readDir(sshd.outboundDir)) names.push(entry.name);
    return names.sort();
  };
  assert.deepEqual(await outbound(), ["ACH_1111111111_20260105_A.txt"]);
  const debitFile = checkNachaFile(
    await Deno.readTextFile(`${sshd.outboundDir}/ACH_1111111111_20260105_A.txt`),
    { odfi: "02100002" },
  );
  assert.ok(debitFile.ok, debitFile.ok ? "" : debitFile.message);
  assert.deepEqual(
    [debitFile.value.creditTotalCents, debitFile.value.debitTotalCents],
    [0, 500_000],
  );

  // The return window of Monday's file ends Wednesday 17:00 in New York: the funding clears.
  const WEDNESDAY_17_00 = Date.UTC(2026, 0, 7, 22, 0);
  await runUntil(WEDNESDAY_17_00);
  assert.deepEqual(await rows("SELECT status FROM fundings WHERE id = ?", fundingId), [
    { status: "Completed" },
  ]);
  assert.equal((await readLineBalances(live.readClient, acme.autoLineId)).available, 500_000);

  // 3. Three payees by ACH; Rustam Karimov's name matches the SDN list.
  await runUntil(WEDNESDAY_17_00 + 5 * 60_000);
  const created = await api(f, "POST", "/api/disbursements", {
    disbursement_uuid: "D-LIVE-1",
    large_disbursement: false,
    line: "auto",
    payees: [
      payee("P-RET", 100, { first_name: "Pat", last_name: "Doe", allowed_payment_method_ids: [1] }),
      payee("P-NOC", 200, { first_name: "Sam", last_name: "Lee", allowed_payment_method_ids: [1] }),
      payee("P-OFAC", 300, {
        first_name: "Rustam",
        last_name: "Karimov",
        allowed_payment_method_ids: [1],
      }),
    ],
  }, asLive);
  assert.equal(created.status, 201, await created.clone().text());
  await runUntil(f.clock.now());
  const payoutOf = async (payeeUuid: string) =>
    String((await rows("SELECT id FROM payouts WHERE payee_uuid = ?", payeeUuid))[0].id);
  const ids = {
    returned: await payoutOf("P-RET"),
    corrected: await payoutOf("P-NOC"),
    cleared: await payoutOf("P-OFAC"),
  };
  for (const [key, payoutId] of Object.entries(ids)) {
    const account = ACCOUNTS[key as keyof typeof ACCOUNTS];
    const kept = {
      routing_number: PAYEE_ROUTING,
      account_type: "checking",
      account_sealed: await f.deps.secretBox.sealText(account),
    };
    const selected = await live.writer.write((tx) =>
      selectMethod(tx, payoutId, {
        paymentMethodId: 1,
        details: { accountNumber: account },
        kept,
      }, f.clock.now())
    );
    assert.ok(selected.ok, selected.ok ? "" : selected.message);
  }
  await runUntil(f.clock.now());
  const status = async (payoutId: string) =>
    (await rows("SELECT status, failure_reason FROM payouts WHERE id = ?", payoutId))[0];
  assert.deepEqual(await status(ids.cleared), { status: "in_review", failure_reason: null });
  assert.deepEqual(await status(ids.returned), {
    status: "modality_selected",
    failure_reason: null,
  });

  // An operator looks at the match and clears it: it is another person.
  const reviews = await asAlice("sanctions:reviews", { environment: "live" });
  assert.equal(reviews.status, 200, JSON.stringify(reviews.body));
  const [review] = reviews.body.result.reviews;
  const cleared = await asAlice("sanctions:clear", {
    review: review.id,
    reason: "date of birth and address differ from the SDN entry",
  });
  assert.equal(cleared.status, 200, JSON.stringify(cleared.body));
  await runUntil(f.clock.now());
  assert.deepEqual(await status(ids.cleared), {
    status: "modality_selected",
    failure_reason: null,
  });

  // 4. Thursday's 10:30 cutoff: one file of three credits, over SFTP.
  const THURSDAY_10_45 = Date.UTC(2026, 0, 8, 15, 45);
  await runUntil(THURSDAY_10_45);
  assert.deepEqual(await outbound(), [
    "ACH_1111111111_20260105_A.txt",
    "ACH_1111111111_20260108_A.txt",
  ]);
  const creditFile = checkNachaFile(
    await Deno.readTextFile(`${sshd.outboundDir}/ACH_1111111111_20260108_A.txt`),
    { odfi: "02100002" },
  );
  assert.ok(creditFile.ok, creditFile.ok ? "" : creditFile.message);
  assert.deepEqual(
    creditFile.value.batches.flatMap((batch) =>
      batch.entries.map((entry) => [entry.accountNumber.trim(), entry.amountCents])
    ).sort(),
    [[ACCOUNTS.returned, 10_000], [ACCOUNTS.corrected, 20_000], [ACCOUNTS.cleared, 30_000]].sort(),
  );
  for (const payoutId of Object.values(ids)) {
    assert.deepEqual(await status(payoutId), { status: "funds_sent", failure_reason: null });
  }

  // 5. The bank returns Pat Doe's entry (R03) and corrects Sam Lee's account (C01).
  const entryOf = async (payoutId: string) =>
    (await rows(
      `SELECT trace_number, amount_cents, transaction_code FROM rail_batch_entries
        WHERE payout_id = ? AND status = 'sent'`,
      payoutId,
    ))[0];
  const original = async (key: "returned" | "corrected") => {
    const entry = await entryOf(ids[key]);
    return {
      traceNumber: String(entry.trace_number),
      transactionCode: Number(entry.transaction_code),
      routingNumber: PAYEE_ROUTING,
      accountNumber: ACCOUNTS[key],
      amountCents: Number(entry.amount_cents),
      individualId: ids[key].slice(-15),
      name: key === "returned" ? "PAT DOE" : "SAM LEE",
      entryClass: "PPD" as const,
    };
  };
  const bankFile = (fileIdModifier: string, entries: ReturnToWrite[]) =>
    buildReturnFile({
      immediateDestination: "021000021",
      immediateOrigin: "1111111111",
      companyName: "ACME MUTUAL",
      companyIdentification: "1111111111",
      rdfi: "01100001",
      createdDate: "2026-01-09",
      createdTime: "0800",
      fileIdModifier,
      entries,
    });
  await Deno.writeTextFile(
    `${sshd.inboundDir}/RETURN_20260109_A.txt`,
    bankFile("A", [{ kind: "return", code: "R03", original: await original("returned") }]),
  );
  await Deno.writeTextFile(
    `${sshd.inboundDir}/NOC_20260109_B.txt`,
    bankFile("B", [{
      kind: "correction",
      code: "C01",
      original: await original("corrected"),
      correction: { accountNumber: "000444000099" },
    }]),
  );
  const FRIDAY_08_15 = Date.UTC(2026, 0, 9, 13, 15);
  await pollAt(FRIDAY_08_15);
  await runUntil(FRIDAY_08_15);
  await pollAt(FRIDAY_08_15 + 200 * HOUR_MS);
  assert.deepEqual(await status(ids.returned), {
    status: "modality_offered",
    failure_reason: "R03",
  });
  assert.deepEqual(await status(ids.corrected), { status: "funds_sent", failure_reason: null });
  const processed: string[] = [];
  for await (const entry of Deno.readDir(`${sshd.inboundDir}/processed`)) {
    processed.push(entry.name);
  }
  assert.deepEqual(processed.sort(), ["NOC_20260109_B.txt", "RETURN_20260109_A.txt"]);
  assert.deepEqual(
    await live.writer.write((tx) =>
      correctedAccount(tx, f.deps.secretBox, acme.id, {
        routingNumber: PAYEE_ROUTING,
        accountNumber: ACCOUNTS.corrected,
        accountType: "checking",
      })
    ),
    { routingNumber: PAYEE_ROUTING, accountNumber: "000444000099", accountType: "checking" },
  );
  assert.deepEqual(
    await rows(
      "SELECT subject FROM notifications WHERE payout_id = ? ORDER BY created_at DESC LIMIT 1",
      ids.corrected,
    ),
    [{ subject: "Acme Mutual: your bank details were updated" }],
  );

  // 6. The return window of Thursday's file ends Monday 17:00 in New York.
  await runUntil(Date.UTC(2026, 0, 12, 22, 1));
  assert.deepEqual(await status(ids.returned), {
    status: "modality_offered",
    failure_reason: "R03",
  });
  assert.deepEqual(await status(ids.corrected), { status: "completed", failure_reason: null });
  assert.deepEqual(await status(ids.cleared), { status: "completed", failure_reason: null });

  // The ledger: $5,000.00 funded, $500.00 sent and settled, Pat Doe's $100.00 held again for
  // the payee's new choice.
  assert.deepEqual(await readLineBalances(live.readClient, acme.autoLineId), {
    available: 440_000,
    pending_funding: 0,
    reserved: 10_000,
    in_transit: 0,
    fees_payor: 0,
    fees_payee: 0,
    fees_service: 0,
    bank: -450_000,
    funding_shortfall: 0,
    unclaimed_remitted: 0,
  });
  assert.deepEqual(await verifyLedger(live.readClient), []);
  const tieOut = (date: string) => lineTieOut(live.readClient, acme.autoLineId, date);
  // The totals of a day; its payout lines are checked apart.
  const totals = async (date: string) => {
    const { payouts: _lines, ...day } = (await tieOut(date))!;
    return day;
  };
  assert.deepEqual(await totals("2026-01-05"), {
    date: "2026-01-05",
    opening: 0,
    funded: 500_000,
    returnedFunding: 0,
    returned: 0,
    disbursed: 0,
    fees: 0,
    closing: 500_000,
    difference: 0,
    fundings: [],
  });
  // The completed payouts' lines sum to the day's disbursed.
  const paid = (await tieOut("2026-01-12"))!.payouts;
  assert.deepEqual(
    [...new Set(paid.map((line) => line.kind))],
    ["payout.complete"],
  );
  assert.equal(paid.reduce((sum, line) => sum + line.disbursedCents, 0), 50_000);
  assert.deepEqual(await totals("2026-01-12"), {
    date: "2026-01-12",
    opening: 500_000,
    funded: 0,
    returnedFunding: 0,
    returned: 0,
    disbursed: 50_000,
    fees: 0,
    closing: 450_000,
    difference: 0,
    fundings: [],
  });
  for (const date of ["2026-01-06", "2026-01-07", "2026-01-08", "2026-01-09"]) {
    assert.equal((await tieOut(date))?.difference, 0, date);
  }

  // The audit log: who asked for the bank settings, who approved them, the list, the clearance.
  assert.deepEqual(
    await rows("SELECT action, operator_email, object_type FROM audit_log ORDER BY seq"),
    [
      { action: "operator:create", operator_email: null, object_type: "operator" },
      { action: "login", operator_email: "alice@ops.test", object_type: "operator_session" },
      { action: "operator:create", operator_email: null, object_type: "operator" },
      { action: "login", operator_email: "bruno@ops.test", object_type: "operator_session" },
      { action: "approval:request", operator_email: "alice@ops.test", object_type: "approval" },
      { action: "bank:set", operator_email: "bruno@ops.test", object_type: "bank_settings" },
      { action: "approval:approve", operator_email: "bruno@ops.test", object_type: "approval" },
      { action: "ofac:load", operator_email: "alice@ops.test", object_type: "sanctions_list" },
      { action: "login", operator_email: "alice@ops.test", object_type: "operator_session" },
      {
        action: "sanctions:clear",
        operator_email: "alice@ops.test",
        object_type: "sanctions_review",
      },
    ],
  );
}
