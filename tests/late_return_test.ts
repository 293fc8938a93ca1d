/**
 * Money that comes back after a payout completed (issue 16, item 17; contract §4): the payout stays
 * completed, the ledger posts the money back to available as `payout.late_return`, the timeline
 * and the events say so, nothing is offered again, and the tie-out reports it as `returned`.
 */
import assert from "node:assert/strict";
import { addFunds, receiveWire } from "../lib/funding/store.ts";
import { lineTieOut, verifyLedger } from "../lib/ledger/reports.ts";
import { readLineBalances } from "../lib/ledger/store.ts";
import { APPROVAL_TTL_MS } from "../lib/operators/rules.ts";
import { applyMove, createDisbursement, recordLateReturn } from "../lib/payouts/store.ts";
import { surfaceAEnvelope } from "../lib/webhooks/payloads.ts";
import { createApp } from "../routes/app.ts";
import { api, payee } from "./api_helpers.ts";
import { fundAcmeAuto, type HttpFixture, withHttpFixture } from "./http_fixture.ts";
import { ADMIN_TOKEN, adminCall, makeOperator } from "./operator_helpers.ts";
import { DAY_SECONDS, openMoneyFixture } from "./money_core_helpers.ts";

const ACH = 1;

Deno.test("a late ACH return: the payout stays completed, amount less the payee fee is back in available, fees stay, one timeline row, one returned event, no re-offer; the tie-out reports it and differs by 0", async () => {
  const m = await openMoneyFixture();
  try {
    await m.database.writer.write((tx) =>
      tx.execute({
        sql: "INSERT INTO fee_schedules VALUES (?, ?, 150, 50, 25)",
        args: [m.companyId, ACH],
      })
    );
    await m.fund(100_000);
    const created = await m.create({ amountCents: 10_000, allowedPaymentMethodIds: [ACH] });
    assert.ok(created.ok);
    const payoutId = created.value.payouts[0].id;
    await m.settle();
    assert.ok((await m.select(payoutId, ACH, { accountNumber: "000123456789" })).ok);
    await m.advance(5 * DAY_SECONDS); // settles, and the two-day return window closes
    assert.equal((await m.payout(payoutId)).status, "completed");
    const completed = await m.balances();
    assert.deepEqual(
      [completed.available, completed.bank, completed.fees_payee, completed.fees_payor],
      [100_000 - 10_175, -100_000 + 9_950, 50, 150],
    );

    await m.advance(DAY_SECONDS); // the return arrives on a day of its own: Sunday 2026-01-11
    const pendingJobs = async () =>
      (await m.database.readClient.execute({
        sql: "SELECT id, kind FROM scheduled_jobs WHERE subject_id = ? AND done_at IS NULL",
        args: [payoutId],
      })).rows.map((row) => ({ ...row }));
    const jobsBefore = await pendingJobs();
    const returned = await m.database.writer.write((tx) =>
      recordLateReturn(tx, payoutId, "R10", m.now())
    );
    assert.ok(returned.ok, returned.ok ? "" : returned.message);
    assert.equal(returned.value.returnedCents, 9_950);
    assert.equal(returned.value.payout.status, "completed");
    const after = await m.balances();
    assert.deepEqual(after, {
      ...completed,
      available: completed.available + 9_950,
      bank: completed.bank - 9_950,
    }, "only bank → available moves; the fees stay charged");

    const { rows: posted } = await m.database.readClient.execute({
      sql: `SELECT t.kind, a.code, e.amount_cents FROM ledger_transactions t
              JOIN ledger_entries e ON e.transaction_id = t.id JOIN ledger_accounts a ON a.id = e.account_id
              WHERE t.id = ? ORDER BY e.amount_cents`,
      args: [returned.value.ledgerTransactionId],
    });
    assert.deepEqual(posted.map((r) => [r.kind, r.code, r.amount_cents]), [
      ["payout.late_return", "bank", -9_950],
      ["payout.late_return", "available", 9_950],
    ]);
    const { rows: timeline } = await m.database.readClient.execute({
      sql:
        "SELECT from_status, to_status, detail, at FROM payout_transitions WHERE payout_id = ? ORDER BY id",
      args: [payoutId],
    });
    assert.deepEqual({ ...timeline.at(-1) }, {
      from_status: "completed",
      to_status: "completed",
      detail: "R10",
      at: m.now(),
    });
    const { rows: events } = await m.database.readClient.execute({
      sql:
        "SELECT type, event_type_id, data FROM events WHERE payout_id = ? ORDER BY rowid DESC LIMIT 2",
      args: [payoutId],
    });
    assert.deepEqual(events.map((e) => e.type), [
      "disbursement.returned",
      "disbursement.completed",
    ]);
    const data = JSON.parse(String(events[0].data));
    assert.deepEqual(
      [events[0].event_type_id, data.status, data.reason],
      [12, "completed", "R10"],
    );
    assert.equal(data.ledger_transaction_id, returned.value.ledgerTransactionId);
    assert.deepEqual(
      await pendingJobs(),
      jobsBefore,
      "nothing is offered again: an operator decides",
    );
    await m.advance(90 * DAY_SECONDS);
    assert.equal((await m.payout(payoutId)).status, "completed");

    const { payouts: lines, ...day } = (await lineTieOut(
      m.database.readClient,
      m.lineId,
      "2026-01-11",
    ))!;
    // The late return is the day's one payout line: what it brought back is the day's returned.
    assert.deepEqual(
      lines.map((line) => [line.kind, line.payoutId, line.disbursedCents, line.returnedCents]),
      [["payout.late_return", payoutId, 0, 9_950]],
    );
    assert.deepEqual(day, {
      date: "2026-01-11",
      opening: 89_825,
      funded: 0,
      returnedFunding: 0,
      returned: 9_950,
      disbursed: 0,
      fees: 0,
      closing: 99_775,
      difference: 0,
      fundings: [],
    });
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  } finally {
    await m.close();
  }
});

Deno.test("a late return is refused for a payout that is not completed, a second time, or an unknown payout, and then writes nothing", async () => {
  const m = await openMoneyFixture();
  try {
    await m.fund(100_000);
    const created = await m.create([
      { amountCents: 10_000, email: "success+paypal@example.test", allowedPaymentMethodIds: [7] },
      { amountCents: 5_000 },
    ]);
    assert.ok(created.ok);
    const [paid, offered] = created.value.payouts.map((p) => p.id);
    await m.settle();
    // The PayPal batch goes at the cutoff (START is on one); its first poll a minute on completes it.
    await m.advance(60);
    assert.equal((await m.payout(paid)).status, "completed");
    const count = async () =>
      Number(
        (await m.database.readClient.execute(
          "SELECT (SELECT count(*) FROM ledger_transactions) + (SELECT count(*) FROM events) + (SELECT count(*) FROM payout_transitions) AS n",
        )).rows[0].n,
      );
    const attempt = (payoutId: string) =>
      m.database.writer.write(async (tx) => {
        const r = await recordLateReturn(tx, payoutId, "refunded", m.now());
        return r.ok ? r : tx.abort(r);
      });

    const before = await count();
    const notCompleted = await attempt(offered);
    assert.deepEqual(notCompleted, {
      ok: false,
      code: "payout_not_completed",
      message:
        "a late return applies to a completed payout; this one is modality_offered (a return before completion fails the payout)",
      details: { status: "modality_offered" },
    });
    assert.deepEqual(await attempt("po_missing"), {
      ok: false,
      code: "payout_not_found",
      message: "no payout po_missing",
    });
    assert.equal(await count(), before, "a refusal writes nothing");

    assert.ok((await attempt(paid)).ok);
    const once = await count();
    const balances = await m.balances();
    assert.deepEqual(await attempt(paid), {
      ok: false,
      code: "already_returned",
      message: "the payout's money already came back after completion",
    });
    assert.equal(await count(), once);
    assert.deepEqual(await m.balances(), balances, "a payout's money comes back once");
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  } finally {
    await m.close();
  }
});

Deno.test("both surfaces see a late return: /v1 event disbursement.returned, Surface A EventTypeId 12 in words, the payee's history, the tie-out's returned in dollars", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 100_000);
    const created = await api(f, "POST", "/api/disbursements", {
      disbursement_uuid: "CLM-LATE",
      large_disbursement: false,
      payees: [payee("success+paypal", 250, { allowed_payment_method_ids: [7] })],
    });
    assert.equal(created.status, 201);
    // The sandbox's PayPal: the batch goes at the cutoff, its first poll a minute on completes it.
    await api(f, "POST", "/api/sandbox/clock/advance", { seconds: 60 });
    const database = f.deps.databases.test;
    const payoutId = String(
      (await database.readClient.execute("SELECT id FROM payouts")).rows[0].id,
    );
    const now = Date.parse("2026-01-05T15:01:00.000Z");
    const returned = await database.writer.write((tx) =>
      recordLateReturn(tx, payoutId, "refunded", now)
    );
    assert.ok(returned.ok);

    const line = { Authorization: `Bearer ${f.cast.acmeAutoKeyTest}` };
    const list = await (await f.app.request("/v1/events?type=disbursement.returned", {
      headers: line,
    })).json() as { data: { type: string; data: Record<string, unknown> }[] };
    assert.equal(list.data.length, 1);
    assert.deepEqual(list.data[0].data, {
      id: payoutId,
      object: "disbursement",
      status: "completed",
      amount: 250,
      currency: "USD",
      claim_id: "CLM-LATE",
      payee: null,
      modality: "paypal",
      reason: "refunded",
    });

    const { rows } = await database.readClient.execute({
      sql:
        "SELECT id, type, event_type_id, reason, data, created_at FROM events WHERE event_type_id = 12",
    });
    const payload = (surfaceAEnvelope({
      id: String(rows[0].id),
      type: String(rows[0].type),
      eventTypeId: Number(rows[0].event_type_id),
      reason: String(rows[0].reason),
      createdAt: Number(rows[0].created_at),
      data: JSON.parse(String(rows[0].data)),
      company: { name: "Acme", tin: f.cast.acme.tin },
    }).webhookTrigger as { payload: Record<string, unknown> }).payload;
    assert.deepEqual(
      [payload.EventTypeId, payload.EventTypeName, payload.EventReason, payload.Amount],
      [12, "DISBURSEMENT.RETURNED", "PayPal refunded after the payment completed", 250],
    );
    assert.deepEqual(
      [
        (payload.DisbursementPayee as Record<string, unknown>).Status,
        (payload.DisbursementPayee as Record<string, unknown>).DisbursementStatusId,
      ],
      ["Completed", 6],
    );

    const transaction = await (await api(
      f,
      "GET",
      "/api/disbursements/CLM-LATE/payees/success+paypal/transaction",
    )).json() as { status: string; history: Record<string, unknown>[] };
    assert.equal(transaction.status, "Completed");
    assert.deepEqual(transaction.history.at(-1), {
      status: "Completed",
      status_id: 6,
      at: "2026-01-05 15:01:00",
      detail: "refunded",
    });

    const tieOut = await (await f.app.request("/v1/ledgers/auto/tieouts/2026-01-05", {
      headers: line,
    })).json();
    assert.deepEqual(tieOut, {
      object: "tieout",
      line: "auto",
      livemode: false,
      date: "2026-01-05",
      currency: "USD",
      opening: 0,
      funded: 1000,
      returned_funding: 0,
      returned: 250,
      disbursed: 250,
      fees: 0,
      closing: 1000,
      difference: 0,
    });
  });
});

/** A completed live payout of Acme's auto line: funded by a received wire, then sent and paid. */
async function completedLivePayout(f: HttpFixture, cents: number): Promise<string> {
  const live = f.deps.databases.live;
  const now = f.clock.now();
  return await live.writer.write(async (tx) => {
    const scope = { companyId: f.cast.acme.id, lineId: f.cast.acme.autoLineId };
    const wire = await addFunds(
      tx,
      {
        ...scope,
        paymentMethod: "WireTransfer",
        amountCents: cents,
        description: "live wire",
        largeDisbursement: false,
        requestFingerprint: crypto.randomUUID(),
      },
      "live",
      now,
    );
    assert.ok(wire.ok && (await receiveWire(tx, wire.value.funding.id, now)).ok);
    const created = await createDisbursement(tx, {
      ...scope,
      kind: "disbursement",
      externalUuid: "CLM-LIVE",
      requestFingerprint: "x",
      largeDisbursement: false,
      payouts: [{ payeeUuid: "p", amountCents: cents, allowedPaymentMethodIds: [7] }],
    }, now);
    assert.ok(created.ok);
    const id = created.value.payouts[0].id;
    const fees = { payorFeeCents: 0, payeeFeeCents: 0, serviceFeeCents: 0 };
    for (
      const step of [
        { kind: "offer" },
        { kind: "select", paymentMethodId: 7, fees },
        { kind: "send" },
        { kind: "complete" },
      ] as const
    ) {
      assert.ok((await applyMove(tx, id, step, now)).ok, step.kind);
    }
    return id;
  });
}

Deno.test("payout:late-return by hand: in live only once a second admin approves, in test at once; a bad reason, an unknown or unfinished payout and a second return are refused", async () => {
  await withHttpFixture(async (f) => {
    const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
    const now = f.clock.now();
    const alice = await makeOperator(f.deps, { email: "alice@ops.test", role: "admin" }, now);
    const bruno = await makeOperator(f.deps, { email: "bruno@ops.test", role: "admin" }, now);
    const livePayout = await completedLivePayout(f, 40_000);
    const liveAvailable = async () =>
      (await readLineBalances(f.deps.databases.live.readClient, f.cast.acme.autoLineId)).available;
    assert.equal(await liveAvailable(), 0);

    const requested = await adminCall(app, alice.token)("payout:late-return", {
      payout: livePayout,
      reason: "R10",
    });
    assert.equal(requested.status, 200, JSON.stringify(requested.body));
    assert.deepEqual({ ...requested.body.result, approval_id: "…" }, {
      environment: "live",
      approval_id: "…",
      status: "pending_approval",
      kind: "payout.late_return",
      payout_id: livePayout,
      summary: `payout:late-return ${livePayout} (R10): $400.00 back to available`,
      expires_at: new Date(now + APPROVAL_TTL_MS).toISOString(),
    });
    assert.equal(await liveAvailable(), 0, "nothing moves until approved");
    const approved = await adminCall(app, bruno.token)("approvals:approve", {
      id: requested.body.result.approval_id,
    });
    assert.equal(approved.status, 200, JSON.stringify(approved.body));
    assert.deepEqual(approved.body.result.result, {
      payout_id: livePayout,
      status: "completed",
      returned_cents: 40_000,
    });
    assert.equal(await liveAvailable(), 40_000);
    const { rows: audit } = await f.deps.databases.live.readClient.execute({
      sql: "SELECT action, operator_email FROM audit_log WHERE object_id = ? ORDER BY seq",
      args: [livePayout],
    });
    assert.deepEqual(audit.map((r) => `${r.action} by ${r.operator_email}`), [
      "payout:late-return by bruno@ops.test",
    ]);
    const again = await adminCall(app, alice.token)("payout:late-return", {
      payout: livePayout,
      reason: "R10",
    });
    assert.equal(again.status, 200, "a second request waits for approval too");
    const twice = await adminCall(app, bruno.token)("approvals:approve", {
      id: again.body.result.approval_id,
    });
    assert.deepEqual([twice.status, twice.body.error.code], [409, "already_returned"]);
    assert.equal(await liveAvailable(), 40_000, "a payout's money comes back once");

    // Test: at once, at the company's sandbox time.
    await fundAcmeAuto(f, 100_000);
    const created = await api(f, "POST", "/api/disbursements", {
      disbursement_uuid: "CLM-TEST",
      large_disbursement: false,
      payees: [
        payee("success+paypal", 250, { allowed_payment_method_ids: [7] }),
        payee("noaction", 100),
      ],
    });
    assert.equal(created.status, 201);
    await api(f, "POST", "/api/sandbox/clock/advance", { seconds: 60 });
    const { rows } = await f.deps.databases.test.readClient.execute(
      "SELECT id, payee_uuid, status FROM payouts ORDER BY rowid",
    );
    const [paid, waiting] = rows.map((r) => String(r.id));
    const inTest = (payout: string, reason = "refunded") =>
      adminCall(app, alice.token)("payout:late-return", { payout, reason, environment: "test" });
    const done = await inTest(paid);
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.deepEqual({ ...done.body.result, ledger_transaction_id: "…" }, {
      environment: "test",
      payout_id: paid,
      status: "completed",
      returned_cents: 25_000,
      ledger_transaction_id: "…",
    });
    const { rows: posted } = await f.deps.databases.test.readClient.execute({
      sql: "SELECT posted_at FROM ledger_transactions WHERE id = ?",
      args: [done.body.result.ledger_transaction_id],
    });
    assert.equal(posted[0].posted_at, now + 60_000, "the sandbox clock's time");

    const refusals: [string, string, number, string, string][] = [
      [
        paid,
        "refunded",
        409,
        "already_returned",
        "the payout's money already came back after completion",
      ],
      [
        waiting,
        "R10",
        409,
        "payout_not_completed",
        "a late return applies to a completed payout; this one is modality_offered (a return before completion fails the payout)",
      ],
      ["po_missing", "R10", 404, "payout_not_found", "no payout po_missing in test"],
      [
        paid,
        "R 10",
        400,
        "invalid_input",
        '--reason "R 10": the return\'s code, letters, digits and _ (at most 40)',
      ],
    ];
    for (const [payout, reason, status, code, message] of refusals) {
      const refused = await inTest(payout, reason);
      assert.deepEqual([refused.status, refused.body.error], [status, { code, message }]);
    }
    assert.deepEqual(await verifyLedger(f.deps.databases.live.readClient), []);
    assert.deepEqual(await verifyLedger(f.deps.databases.test.readClient), []);
  });
});
