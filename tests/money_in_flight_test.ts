/**
 * Money in flight (issue 28, case 1): a failed payout whose automatic retry holds its money on a
 * batch rail. Cancel is refused from a built batch on, with `payout_in_flight` on /v1, the
 * conflict record on /api and a console message naming the batch; an entry only queued is voided
 * with the cancel, in the same unit. The bank paying an entry of a payout that was canceled goes
 * to the rail exceptions queue without stalling the rest of its file; a canceled payout's queued
 * check never reaches positive pay nor the print file.
 */
import assert from "node:assert/strict";
import { runDueJobs } from "../db/scheduler.ts";
import { lineTieOut, verifyLedger } from "../lib/ledger/reports.ts";
import { postTransaction, readLineBalances } from "../lib/ledger/store.ts";
import { jobHandlersOf } from "../lib/payouts/runtime.ts";
import {
  listRailExceptions,
  recordEntryException,
  resolveRailException,
} from "../lib/rails/exceptions.ts";
import { addFunds, receiveWire } from "../lib/funding/store.ts";
import { createDisbursement } from "../lib/payouts/store.ts";
import { createApp } from "../routes/app.ts";
import { ADMIN_TOKEN, adminCall, makeOperator } from "./operator_helpers.ts";
import { insertAchFile } from "./ach_file_rows.ts";
import { chooseAch, rows, statuses, withScriptedBank } from "./ach_helpers.ts";
import { api, payee } from "./api_helpers.ts";
import { checkFilesOf, chooseCheck, positivePayText, registerOf } from "./checks_helpers.ts";
import { withCheckFixture } from "./checks_helpers.ts";
import { consoleAs, parseCsv, textOf } from "./console_helpers.ts";
import { v1 } from "./portal_helpers.ts";
import { testSecretBox } from "./helpers.ts";
import { fundAcmeAuto, type HttpFixture, withHttpFixture } from "./http_fixture.ts";
import { DAY_SECONDS, MONEY_SETTINGS } from "./money_core_helpers.ts";
import { payoutOf, payoutOnEachSurface, sql } from "./money_in_flight_helpers.ts";

const NO_LIMIT = { RATE_LIMIT_RPS: "0" };

/**
 * The payout failed (R03) and its automatic retry, its second submission, waits on the ACH rail:
 * only queued, or in a built file. The hold stays in reserved, as a failure leaves it.
 */
async function retryAtRail(
  f: HttpFixture,
  payoutId: string,
  stage: "queued" | "built",
): Promise<string | null> {
  await sql(
    f,
    `UPDATE payouts SET status = 'failed', failure_reason = 'R03', payment_method_id = 1,
       submission_count = 2 WHERE id = ?`,
    payoutId,
  );
  const amount = Number(
    (await sql(f, "SELECT amount_cents FROM payouts WHERE id = ?", payoutId))[0]
      .amount_cents,
  );
  if (stage === "queued") {
    await sql(
      f,
      `INSERT INTO rail_batch_entries (id, company_id, rail, payout_id, direction, reference,
         amount_cents, status, created_at) VALUES (?, ?, 'ach', ?, 'credit', ?, ?, 'queued', ?)`,
      `rbe_${payoutId}`,
      f.cast.acme.id,
      payoutId,
      `${payoutId}-2`,
      amount,
      f.clock.now(),
    );
    return null;
  }
  const batchId = await insertAchFile(f.deps.databases.test, {
    companyId: f.cast.acme.id,
    status: "built",
    effectiveDate: "2026-01-06",
    createdAt: f.clock.now(),
    entries: [{
      payoutId,
      amountCents: amount,
      trace: `02100002${String(++traces).padStart(7, "0")}`,
      lastFour: "6789",
    }],
  });
  await sql(
    f,
    "UPDATE rail_batch_entries SET reference = ? WHERE payout_id = ?",
    `${payoutId}-2`,
    payoutId,
  );
  return batchId;
}

let traces = 0;

Deno.test("case 1: cancel of a failed payout whose retry is in a built ACH file is refused 409 payout_in_flight on /v1, /api and the console, naming the file; nothing moves", async () => {
  await withHttpFixture(async (f) => {
    const { v1Disbursement, v1Payout, apiPayout } = await payoutOnEachSurface(f);
    const created = { id: v1Disbursement };
    const v1File = await retryAtRail(f, v1Payout, "built");
    const apiFile = await retryAtRail(f, apiPayout, "built");
    const before = await readLineBalances(f.deps.databases.test.readClient, f.cast.acme.autoLineId);

    const refusedV1 = await v1(f, "POST", `/v1/disbursements/${created.id}/cancel`);
    assert.equal(refusedV1.status, 409);
    const problem = await refusedV1.json() as { code: string; detail: string };
    assert.equal(problem.code, "payout_in_flight");
    assert.equal(
      problem.detail,
      `disbursement ${created.id}: cancel is refused: the payout's money is in flight, its ach entry is batched in batch ${v1File}; void the batch (its other entries are queued again) to change this payout`,
    );

    const refusedApi = await api(f, "POST", "/api/disbursements/CLM-1/payees/p-a/cancel");
    assert.equal(refusedApi.status, 409);
    assert.deepEqual(await refusedApi.json(), {
      name: "CONFLICT",
      message:
        `payee p-a: cancel is refused: the payout's money is in flight, its ach entry is batched in batch ${apiFile}; void the batch (its other entries are queued again) to change this payout`,
      details: [],
    });

    const { browser } = await consoleAs(f, { email: "cleo@ops.test", role: "clerk" });
    const page = await browser.get(`/console/payouts/${apiPayout}?env=test`);
    assert.equal(page.status, 200);
    assert.match(
      textOf(page.html),
      new RegExp(
        `Money in flight, so it cannot be canceled or offered again now: its ach entry is batched in batch ${apiFile}`,
      ),
    );
    assert.doesNotMatch(page.html, /\/cancel"/, "no cancel offered while the money is in flight");
    const refusedConsole = await browser.post(`/console/payouts/${apiPayout}/cancel`, {
      env: "test",
    });
    assert.equal(refusedConsole.status, 409);
    assert.match(
      textOf(refusedConsole.html),
      new RegExp(`its ach entry is batched in batch ${apiFile}; void the batch`),
    );

    assert.deepEqual(
      (await sql(f, "SELECT status FROM payouts WHERE id IN (?, ?)", v1Payout, apiPayout)).map((
        r,
      ) => r.status),
      ["failed", "failed"],
    );
    assert.deepEqual(
      await readLineBalances(f.deps.databases.test.readClient, f.cast.acme.autoLineId),
      before,
    );
    assert.deepEqual(
      (await sql(f, "SELECT status FROM rail_batch_entries ORDER BY rowid")).map((r) => r.status),
      ["batched", "batched"],
    );
  }, NO_LIMIT);
});

Deno.test("case 1: cancel of a failed payout whose retry is only queued voids the entry in the same unit and returns the hold", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 100_000);
    await api(f, "POST", "/api/disbursements", {
      disbursement_uuid: "CLM-2",
      large_disbursement: false,
      payees: [payee("p-q", 20)],
    });
    const payoutId = await payoutOf(f, "payee_uuid = ?", "p-q");
    await retryAtRail(f, payoutId, "queued");
    const canceled = await api(f, "POST", "/api/disbursements/CLM-2/payees/p-q/cancel");
    assert.equal(canceled.status, 200);
    assert.deepEqual(
      (await sql(f, "SELECT status FROM rail_batch_entries WHERE reference = ?", `${payoutId}-2`))
        .map((r) => r.status),
      ["voided"],
    );
    const balances = await readLineBalances(
      f.deps.databases.test.readClient,
      f.cast.acme.autoLineId,
    );
    assert.deepEqual([balances.available, balances.reserved], [100_000, 0]);
  }, NO_LIMIT);
});

Deno.test("case 1: the bank paying an entry whose payout was canceled goes to the rail exceptions queue; the rest of the file settles and nothing parks", async () => {
  await withScriptedBank(async ({ m }) => {
    await m.fund(1_000_000);
    const [canceled, other] = await chooseAch(m, [10_000, 20_000]);
    await m.advance(30 * 60); // the 10:30 cutoff: both sent
    assert.deepEqual(await statuses(m, [canceled, other]), ["funds_sent", "funds_sent"]);
    // What a cancel left before money in flight was refused: the payout canceled with its money
    // back in available while its entry was in the bank's hands.
    await m.database.writer.write(async (tx) => {
      await tx.execute({
        sql: "UPDATE payouts SET status = 'canceled', held_cents = 0 WHERE id = ?",
        args: [canceled],
      });
      const posted = await postTransaction(tx, {
        companyId: m.companyId,
        lineId: m.lineId,
        kind: "payout.cancel",
        payoutId: canceled,
        transfers: [{ from: "in_transit", to: "available", amountCents: 10_000 }],
        postedAt: m.now(),
      });
      assert.ok(posted.ok);
    });
    await m.advance(3 * DAY_SECONDS); // the return window closes: ach.settle
    assert.deepEqual(await statuses(m, [canceled, other]), ["canceled", "completed"]);
    assert.deepEqual(
      await rows(m, "SELECT count(*) AS n FROM scheduled_jobs WHERE error IS NOT NULL"),
      [{ n: 0 }],
      "no job parked",
    );
    const [exception] = await listRailExceptions(
      m.database.readClient,
      { status: "open", companyIds: null },
      10,
    );
    assert.deepEqual(
      [exception.payoutId, exception.outcome, exception.amountCents, exception.payoutStatus],
      [canceled, "completed", 10_000, "canceled"],
    );
    // Settling again (the job run twice) records it once.
    const handlers = jobHandlersOf("test", MONEY_SETTINGS, m.database, testSecretBox);
    await runDueJobs(m.database, m.companyId, m.now(), handlers);
    assert.equal(
      (await listRailExceptions(m.database.readClient, { status: null, companyIds: null }, 10))
        .length,
      1,
    );

    const before = await m.balances();
    const actor = { operator: { id: "op_1", email: "ops@example.test" }, origin: "cli" };
    const resolved = await m.database.writer.write((tx) =>
      resolveRailException(tx, "test", actor, {
        exceptionId: exception.id,
        resolution: "payment_stands",
        note: "the bank paid it",
        companyIds: null,
      }, m.now())
    );
    assert.ok(resolved.ok);
    assert.deepEqual(await m.balances(), {
      ...before,
      available: before.available - 10_000,
      bank: before.bank + 10_000,
    });
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
    const day = new Date(m.now()).toISOString().slice(0, 10);
    assert.equal((await lineTieOut(m.database.readClient, m.lineId, day))!.difference, 0);
  });
});

Deno.test("case 1: a canceled payout's queued check is voided with the cancel and never reaches positive pay nor the print file", async () => {
  await withCheckFixture("live", async ({ m }) => {
    const [kept, canceled] = await chooseCheck(m, [10_000, 20_000]);
    // The second payout's submission is a retry: it failed before, and may be canceled.
    await m.database.writer.write((tx) =>
      tx.execute({ sql: "UPDATE payouts SET status = 'failed' WHERE id = ?", args: [canceled] })
    );
    const cancel = await m.cancel(canceled);
    assert.ok(cancel.ok, cancel.ok ? "" : cancel.message);
    await m.advance(3600);
    const register = await registerOf(m);
    assert.deepEqual(register.map((c) => [c.payout_id, c.status]), [
      [kept, "issued"],
      [canceled, "voided"],
    ]);
    const [positivePay, print] = await checkFilesOf(m);
    assert.deepEqual([positivePay.issue_count, positivePay.void_count, print.issue_count], [
      1,
      0,
      1,
    ]);
    const text = await positivePayText(m, String(positivePay.batch_id));
    assert.doesNotMatch(text, /200\.00/);
    assert.equal(register[1].issue_file_id, null);
  });
});

Deno.test("console: an open rail exception is in the attention list and on its page; a viewer sees no button, an admin resolves it (audited)", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 100_000);
    await api(f, "POST", "/api/disbursements", {
      disbursement_uuid: "CLM-3",
      large_disbursement: false,
      payees: [payee("p-x", 20)],
    });
    const payoutId = await payoutOf(f, "payee_uuid = ?", "p-x");
    const batchId = await retryAtRail(f, payoutId, "built");
    const entryId = String((await sql(f, "SELECT id FROM rail_batch_entries"))[0].id);
    const reportedAt = f.clock.now();
    await sql(
      f,
      `INSERT INTO rail_exceptions (id, company_id, rail, entry_id, batch_id, payout_id, reference,
         outcome, amount_cents, payout_status, reason, status, created_at)
       VALUES ('rex_1', ?, 'ach', ?, ?, ?, ?, 'failed', 2000, 'canceled', 'came back', 'open', ?)`,
      f.cast.acme.id,
      entryId,
      batchId!,
      payoutId,
      `${payoutId}-2`,
      reportedAt,
    );
    const { browser: viewer } = await consoleAs(f, { email: "vi@ops.test", role: "viewer" });
    const overview = await viewer.get("/console?env=test");
    assert.match(textOf(overview.html), /1 rail outcome its payout could not take/);
    const list = await viewer.get("/console/rail-exceptions?env=test");
    assert.equal(list.status, 200);
    assert.match(textOf(list.html), /came back/);
    assert.doesNotMatch(list.html, /no_ledger_effect"/);
    assert.match(list.html, /href="\/console\/rail-exceptions\/export\.csv\?env=test"/);
    const exported = await viewer.get("/console/rail-exceptions/export.csv?env=test");
    assert.equal(exported.status, 200);
    assert.equal(exported.headers.get("Content-Type"), "text/csv; charset=utf-8");
    assert.deepEqual(parseCsv(exported.html), [
      [
        "reported_at",
        "rail",
        "batch",
        "reference",
        "payout",
        "outcome",
        "amount",
        "why",
        "status",
        "resolution",
      ],
      [
        new Date(reportedAt).toISOString(),
        "ach",
        batchId!,
        `${payoutId}-2`,
        payoutId,
        "came back",
        "20.00",
        "came back",
        "open",
        "",
      ],
    ]);

    const { browser: admin } = await consoleAs(f, { email: "ad@ops.test", role: "admin" });
    const page = await admin.get("/console/rail-exceptions?env=test");
    assert.match(page.html, /action="\/console\/rail-exceptions\/rex_1\/no_ledger_effect"/);
    assert.doesNotMatch(page.html, /payment_stands"/, "a return has no payment to let stand");
    const resolved = await admin.post("/console/rail-exceptions/rex_1/no_ledger_effect", {
      env: "test",
    });
    assert.equal(resolved.status, 303);
    assert.deepEqual(
      (await sql(f, "SELECT status, resolution FROM rail_exceptions")).map((r) => [
        r.status,
        r.resolution,
      ]),
      [["resolved", "no_ledger_effect"]],
    );
    assert.deepEqual(
      (await sql(f, "SELECT action FROM audit_log WHERE action = 'rails:resolve-exception'"))
        .length,
      1,
    );
  }, NO_LIMIT);
});

Deno.test("rails:resolve-exception in live waits for a second admin before posting; payouts:recall records one request for a transmitted entry", async () => {
  await withHttpFixture(async (f) => {
    const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
    const now = f.clock.now();
    const alice = await makeOperator(f.deps, { email: "alice@ops.test", role: "admin" }, now);
    const bruno = await makeOperator(f.deps, { email: "bruno@ops.test", role: "admin" }, now);
    const live = f.deps.databases.live;
    const scope = { companyId: f.cast.acme.id, lineId: f.cast.acme.autoLineId };
    const payoutId = await live.writer.write(async (tx) => {
      const wire = await addFunds(
        tx,
        {
          ...scope,
          paymentMethod: "WireTransfer",
          amountCents: 50_000,
          description: "wire",
          largeDisbursement: false,
          requestFingerprint: "w",
        },
        "live",
        now,
      );
      assert.ok(wire.ok);
      assert.ok((await receiveWire(tx, wire.value.funding.id, now)).ok);
      const created = await createDisbursement(tx, {
        ...scope,
        kind: "disbursement",
        externalUuid: "CLM-L",
        requestFingerprint: "x",
        largeDisbursement: false,
        payouts: [{ payeeUuid: "p", amountCents: 20_000, allowedPaymentMethodIds: [1] }],
      }, now);
      assert.ok(created.ok);
      return created.value.payouts[0].id;
    });
    const batchId = await insertAchFile(live, {
      companyId: f.cast.acme.id,
      status: "transmitted",
      effectiveDate: "2026-01-06",
      createdAt: now,
      transmittedAt: now,
      entries: [{
        payoutId,
        amountCents: 20_000,
        trace: "021000020000009",
        lastFour: "6789",
        status: "sent",
      }],
    });
    await live.writer.write(async (tx) => {
      await tx.execute({
        sql: "UPDATE payouts SET submission_count = 1, status = 'canceled' WHERE id = ?",
        args: [payoutId],
      });
      await tx.execute({
        sql: "UPDATE rail_batch_entries SET reference = ? WHERE payout_id = ?",
        args: [`${payoutId}-1`, payoutId],
      });
    });
    const entryId = String(
      (await live.readClient.execute("SELECT id FROM rail_batch_entries")).rows[0].id,
    );
    await live.writer.write((tx) =>
      recordEntryException(tx, entryId, { kind: "completed" }, "the bank paid it", now)
    );
    const [exception] = await listRailExceptions(
      live.readClient,
      { status: "open", companyIds: null },
      10,
    );
    const available = async () =>
      (await readLineBalances(live.readClient, f.cast.acme.autoLineId)).available;
    const before = await available();

    const listed = await adminCall(app, alice.token)("rails:exceptions", { tin: f.cast.acme.tin });
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    assert.deepEqual(
      listed.body.result.exceptions.map((x: { id: string; outcome: string }) => [x.id, x.outcome]),
      [[exception.id, "completed"]],
    );
    const unknown = await adminCall(app, alice.token)("rails:exceptions", { tin: "999999999" });
    assert.equal(unknown.body.error.code, "company_not_found");
    const requested = await adminCall(app, alice.token)("rails:resolve-exception", {
      exception: exception.id,
      resolution: "payment_stands",
    });
    assert.equal(requested.status, 200, JSON.stringify(requested.body));
    assert.deepEqual(
      [
        requested.body.result.status,
        requested.body.result.kind,
        requested.body.result.exception_id,
      ],
      ["pending_approval", "rail_exception.resolve", exception.id],
    );
    assert.equal(await available(), before, "nothing posts until approved");
    const approved = await adminCall(app, bruno.token)("approvals:approve", {
      id: requested.body.result.approval_id,
    });
    assert.equal(approved.status, 200, JSON.stringify(approved.body));
    assert.equal(await available(), before - 20_000);

    // The payout's entry is transmitted: a recall request is recorded once.
    await live.writer.write((tx) =>
      tx.execute({ sql: "UPDATE payouts SET status = 'funds_sent' WHERE id = ?", args: [payoutId] })
    );
    const recall = await adminCall(app, alice.token)("payouts:recall", {
      payout: payoutId,
      reason: "claim reopened",
    });
    assert.equal(recall.status, 200, JSON.stringify(recall.body));
    assert.equal(recall.body.result.batch_id, batchId);
    const twice = await adminCall(app, alice.token)("payouts:recall", {
      payout: payoutId,
      reason: "claim reopened",
    });
    assert.deepEqual([twice.status, twice.body.error.code], [409, "recall_requested"]);
  }, NO_LIMIT);
});
