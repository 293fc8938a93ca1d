/**
 * The check register and the check rail (issue 19): numbers consecutive and never reused under
 * 200 concurrent submissions, voids and stale checks told to the bank in the next positive-pay
 * file and their payouts re-offered only once that file was sent and the bank's paid items a
 * business day later covered it, the sandbox's timeline.
 */
import assert from "node:assert/strict";
import { runDueJobs } from "../db/scheduler.ts";
import { importPaidItems } from "../lib/checks/paid_import.ts";
import {
  type CheckRecord,
  issueCheck,
  voidCheck,
  type VoidRefusal,
} from "../lib/checks/register.ts";
import type { Result } from "../lib/platform/result.ts";
import { jobHandlersOf } from "../lib/payouts/runtime.ts";
import { payoutRuntime } from "../lib/payouts/settings.ts";
import { DAY_SECONDS, MONEY_SETTINGS, type MoneyFixture } from "./money_core_helpers.ts";
import { testSecretBox } from "./helpers.ts";
import {
  checkFilesOf,
  chooseCheck,
  DIGITAL_CHECK,
  liveCheckAccountJson,
  markSent,
  positivePayText,
  POSTAL_CHECK,
  registerOf,
  rows,
  storeCheckSettings,
  withCheckFixture,
} from "./checks_helpers.ts";

const HOUR_SECONDS = 3600;

const voidNumber = (
  m: MoneyFixture,
  checkNumber: number,
  reason = "lost in the mail",
): Promise<Result<CheckRecord, VoidRefusal>> =>
  m.database.writer.write(async (tx): Promise<Result<CheckRecord, VoidRefusal>> => {
    const voided = await voidCheck(tx, {
      companyId: m.companyId,
      checkNumber,
      reason,
      operator: "op_clerk",
    }, m.now());
    return voided.ok ? voided : tx.abort(voided);
  });

/** A business day later, the bank's paid-items file reports nothing paid: it covers the voids sent. */
async function paidItemsCoverVoids(m: MoneyFixture): Promise<void> {
  await m.advance(DAY_SECONDS);
  const imported = await importPaidItems({
    database: m.database,
    environment: "live",
    runtime: payoutRuntime("live", MONEY_SETTINGS),
  }, {
    companyId: m.companyId,
    content: new TextEncoder().encode("check_number,amount,paid_date\n"),
    fileName: "paid.csv",
    source: "sftp",
    importedBy: null,
  }, m.now());
  assert.ok(imported.ok);
}

const transitions = async (m: MoneyFixture, id: string) =>
  (await rows(
    m,
    "SELECT to_status, detail FROM payout_transitions WHERE payout_id = ? ORDER BY id",
    id,
  )).map((row) => row.to_status);

Deno.test("test: a postal check takes the next number at submission, goes in a positive-pay and a print file at once, is sent, and the sandbox bank pays it 5 days later", async () => {
  await withCheckFixture("test", async ({ m }) => {
    const [id] = await chooseCheck(m, [12_345]);
    assert.equal((await m.payout(id)).status, "funds_sent");
    assert.deepEqual(await registerOf(m).then((r) => r.map((c) => [c.check_number, c.status])), [
      [1001, "issued"],
    ]);
    const files = await checkFilesOf(m);
    assert.deepEqual(files.map((f) => [f.kind, f.status, f.issue_count, f.total_cents]), [
      ["positive_pay", "transmitted", 1, 12_345],
      ["print", "transmitted", 1, 12_345],
    ]);
    assert.equal(
      await positivePayText(m, String(files[0].batch_id)),
      "account,check_number,amount,issue_date,payee_name,issue_void\r\n" +
        "000900000003,1001,123.45,01/05/2026,p0,I\r\n",
    );
    await m.advance(5 * DAY_SECONDS - 60);
    assert.equal((await m.payout(id)).status, "funds_sent", "not before 5 days");
    await m.advance(60);
    assert.equal((await m.payout(id)).status, "completed");
    const [check] = await registerOf(m);
    assert.equal(check.status, "paid");
    assert.deepEqual(
      await rows(
        m,
        "SELECT source, item_count, matched_count, exception_count FROM check_paid_imports",
      ),
      [{ source: "sandbox_bank", item_count: 1, matched_count: 1, exception_count: 0 }],
      "the sandbox bank's paid-items file went through the import",
    );
    const b = await m.balances();
    assert.deepEqual([b.reserved, b.in_transit], [0, 0]);
  });
});

Deno.test("test: a digital check is paid one business day after its file; it is in no print file", async () => {
  await withCheckFixture("test", async ({ m }) => {
    const [id] = await chooseCheck(m, [5_000], { method: DIGITAL_CHECK, details: {} });
    assert.equal((await m.payout(id)).status, "funds_sent");
    const files = await checkFilesOf(m);
    assert.deepEqual(files.map((f) => f.kind), ["positive_pay"]);
    const [check] = await registerOf(m);
    assert.deepEqual([check.kind, check.postage_code, check.print_file_id], [
      "digital",
      null,
      null,
    ]);
    await m.advance(DAY_SECONDS);
    assert.equal((await m.payout(id)).status, "completed");
  });
});

Deno.test("test: a postal check to the undeliverable ZIP comes back after 5 days: voided, in the next positive-pay file, and its payout fails returned_undeliverable and is re-offered", async () => {
  await withCheckFixture("test", async ({ m }) => {
    const [id] = await chooseCheck(m, [7_000], { details: { zip: "00000" } });
    await m.advance(5 * DAY_SECONDS);
    const payout = await m.payout(id);
    assert.equal(payout.status, "modality_offered");
    assert.equal(payout.failure_reason, "returned_undeliverable");
    const [check] = await registerOf(m);
    assert.equal(check.status, "voided");
    const files = await checkFilesOf(m);
    assert.deepEqual(files.map((f) => [f.kind, f.issue_count, f.void_count, f.status]), [
      ["positive_pay", 1, 0, "transmitted"],
      ["print", 1, 0, "transmitted"],
      ["positive_pay", 0, 1, "transmitted"],
    ]);
    assert.equal(
      (await positivePayText(m, String(files[2].batch_id))).split("\r\n")[1],
      "000900000003,1001,70.00,01/05/2026,p0,V",
    );
    const b = await m.balances();
    assert.deepEqual([b.reserved, b.in_transit], [7_000, 0], "the money is back on hold");
  });
});

Deno.test("numbers: 200 concurrent submissions take 200 consecutive numbers from the first, each once", async () => {
  await withCheckFixture("test", async ({ m }) => {
    const created = await m.create(
      Array.from({ length: 200 }, (_, i) => ({
        payeeUuid: `c${i}`,
        amountCents: 100 + i,
        allowedPaymentMethodIds: [POSTAL_CHECK],
      })),
    );
    assert.ok(created.ok);
    await m.settle();
    const ids = created.value.payouts.map((p) => p.id);
    // Every selection at once, then every submission at once (32 jobs side by side).
    const selected = await Promise.all(
      ids.map((id) => m.select(id, POSTAL_CHECK, { zip: "10001" })),
    );
    assert.ok(selected.every((s) => s.ok));
    const handlers = jobHandlersOf("test", MONEY_SETTINGS, m.database, testSecretBox);
    await runDueJobs(m.database, m.companyId, m.now(), handlers, { perBatch: 32 });
    await m.settle();
    const register = await registerOf(m);
    assert.deepEqual(
      register.map((c) => c.check_number),
      Array.from({ length: 200 }, (_, i) => 1001 + i),
    );
    assert.equal(new Set(register.map((c) => c.payout_id)).size, 200, "one check per payout");
    const sequence = await rows(m, "SELECT next_number FROM check_sequences");
    assert.deepEqual(sequence, [{ next_number: 1201 }]);
    const issued = (await checkFilesOf(m)).filter((f) => f.kind === "positive_pay")
      .reduce((sum, f) => sum + Number(f.issue_count), 0);
    assert.equal(issued, 200, "every issue told to the bank once");
  });
});

Deno.test("numbers: 200 concurrent write units issuing checks get distinct consecutive numbers; the same reference again gets its own check back", async () => {
  await withCheckFixture("test", async ({ m }) => {
    const created = await m.create(Array.from({ length: 200 }, (_, i) => ({ payeeUuid: `n${i}` })));
    assert.ok(created.ok);
    const issue = (payoutId: string, reference: string) =>
      m.database.writer.write((tx) =>
        issueCheck(tx, {
          companyId: m.companyId,
          payoutId,
          reference,
          kind: "postal",
          amountCents: 100,
          payeeName: "Pat",
          memo: null,
          postageCode: "FC",
          issueDate: "2026-01-05",
          firstCheckNumber: 7,
          staleDays: 180,
        }, m.now())
      );
    const issued = await Promise.all(
      created.value.payouts.map((p) => issue(p.id, `${p.id}-1`)),
    );
    assert.deepEqual(
      issued.map((c) => c.checkNumber).sort((a, b) => a - b),
      Array.from({ length: 200 }, (_, i) => 7 + i),
    );
    const again = await issue(created.value.payouts[5].id, `${created.value.payouts[5].id}-1`);
    assert.equal(again.checkNumber, issued[5].checkNumber, "asking again never takes a number");
    assert.deepEqual(await rows(m, "SELECT next_number FROM check_sequences"), [{
      next_number: 207,
    }]);
  });
});

Deno.test("numbers: a voided check's number is never given again; a raised first number skips up to it, a lowered one is ignored", async () => {
  await withCheckFixture("test", async ({ m }) => {
    const [id] = await chooseCheck(m, [1_000]);
    const voided = await voidNumber(m, 1001);
    assert.ok(voided.ok);
    await m.settle();
    assert.equal((await m.payout(id)).status, "funds_sent", "until the sandbox bank's paid items");
    await m.advance(DAY_SECONDS);
    assert.equal((await m.payout(id)).status, "modality_offered");
    assert.ok((await m.select(id, POSTAL_CHECK, { zip: "10001" })).ok);
    await m.settle();
    assert.deepEqual(await registerOf(m).then((r) => r.map((c) => [c.check_number, c.status])), [
      [1001, "voided"],
      [1002, "issued"],
    ]);
    await storeCheckSettings(m, "test", { ...liveCheckAccountJson(), first_check_number: 9000 });
    await chooseCheck(m, [1_000]);
    await storeCheckSettings(m, "test", { ...liveCheckAccountJson(), first_check_number: 10 });
    await chooseCheck(m, [1_000]);
    assert.deepEqual(
      (await registerOf(m)).map((c) => c.check_number),
      [1001, 1002, 9000, 9001],
    );
  });
});

Deno.test("voids: a paid check is refused (check_paid), a voided one answers as it is, an unknown number is check_not_found; nothing changes", async () => {
  await withCheckFixture("test", async ({ m }) => {
    await chooseCheck(m, [1_000]);
    await m.advance(5 * DAY_SECONDS);
    const paid = await voidNumber(m, 1001);
    assert.deepEqual(paid.ok ? null : [paid.code, paid.field], ["check_paid", "number"]);
    const unknown = await voidNumber(m, 4242);
    assert.deepEqual(unknown.ok ? null : [unknown.code, unknown.field], [
      "check_not_found",
      "number",
    ]);
    assert.deepEqual((await registerOf(m)).map((c) => c.status), ["paid"]);
    await chooseCheck(m, [2_000]);
    const first = await voidNumber(m, 1002, "first");
    const second = await voidNumber(m, 1002, "second");
    assert.ok(first.ok && second.ok);
    assert.equal(second.value.voidReason, "first", "voided once");
  });
});

Deno.test("live voids: the void goes in the next positive-pay file; the payout stays funds_sent until that file is marked sent and the bank's paid items a business day later cover it, then fails check_voided and is re-offered", async () => {
  await withCheckFixture("live", async ({ m }) => {
    const [id] = await chooseCheck(m, [25_000]);
    assert.equal((await m.payout(id)).status, "modality_selected", "waits for the cutoff");
    assert.deepEqual(await checkFilesOf(m), []);
    await m.advance(HOUR_SECONDS); // 11:00 New York: past the 10:30 cutoff
    const [issueFile, printFile] = await checkFilesOf(m);
    assert.deepEqual([issueFile.kind, issueFile.status], ["positive_pay", "built"]);
    assert.equal(
      await positivePayText(m, String(issueFile.batch_id)),
      "account,check_number,amount,issue_date,payee_name,issue_void\r\n" +
        "4455667788,5001,250.00,01/05/2026,p0,I\r\n",
    );
    assert.deepEqual([printFile.kind, printFile.status], ["print", "built"]);
    const early = await markSent(m, "live", String(printFile.batch_id));
    assert.deepEqual(early.ok ? null : early.code, "positive_pay_not_sent");
    assert.ok((await markSent(m, "live", String(issueFile.batch_id))).ok);
    assert.equal((await m.payout(id)).status, "funds_sent");
    assert.ok((await markSent(m, "live", String(printFile.batch_id))).ok);

    assert.ok((await voidNumber(m, 5001)).ok);
    await m.settle();
    assert.equal((await m.payout(id)).status, "funds_sent", "the bank could still honour it");
    await m.advance(6 * HOUR_SECONDS); // 17:00: past the 16:00 cutoff
    const voidFile = (await checkFilesOf(m))[2];
    assert.deepEqual([voidFile.kind, voidFile.status, voidFile.void_count], [
      "positive_pay",
      "built",
      1,
    ]);
    assert.equal(
      (await positivePayText(m, String(voidFile.batch_id))).split("\r\n")[1],
      "4455667788,5001,250.00,01/05/2026,p0,V",
    );
    assert.equal((await m.payout(id)).status, "funds_sent", "until the void's file was sent");
    assert.ok((await markSent(m, "live", String(voidFile.batch_id))).ok);
    assert.equal((await m.payout(id)).status, "funds_sent", "the bank may have paid it first");
    await paidItemsCoverVoids(m);
    const payout = await m.payout(id);
    assert.deepEqual([payout.status, payout.failure_reason], ["modality_offered", "check_voided"]);
    assert.deepEqual(await transitions(m, id), [
      "created",
      "modality_offered",
      "modality_selected",
      "funds_sent",
      "failed",
      "modality_offered",
    ]);
    const b = await m.balances();
    assert.deepEqual([b.reserved, b.in_transit], [25_000, 0]);
    const audit = await rows(m, "SELECT action, object_id FROM audit_log ORDER BY seq");
    assert.deepEqual(audit.map((a) => a.action), [
      "checks:mark-sent",
      "checks:mark-sent",
      "checks:mark-sent",
    ]);
  });
});

Deno.test("live stale: an issued check past its stale days goes stale, is voided in the next positive-pay file, and its payout fails check_stale only once that file is sent and the bank's paid items cover it", async () => {
  await withCheckFixture("live", async ({ m }) => {
    const [id] = await chooseCheck(m, [3_000]);
    await m.advance(HOUR_SECONDS);
    const [issueFile] = await checkFilesOf(m);
    assert.ok((await markSent(m, "live", String(issueFile.batch_id))).ok);
    await m.advance(179 * DAY_SECONDS);
    assert.deepEqual((await registerOf(m)).map((c) => c.status), ["issued"]);
    await m.advance(DAY_SECONDS);
    assert.deepEqual((await registerOf(m)).map((c) => c.status), ["stale"]);
    // Day 180 is Saturday 4 July: the void waits for Monday's cutoff.
    assert.equal((await checkFilesOf(m)).length, 2);
    // Monday 11:00, within the 10:30 cutoff's banking day (a check file goes on its cutoff's day).
    await m.advance(2 * DAY_SECONDS);
    const staleFile = (await checkFilesOf(m))[2];
    assert.deepEqual([staleFile.kind, staleFile.void_count, staleFile.status], [
      "positive_pay",
      1,
      "built",
    ]);
    assert.equal((await m.payout(id)).status, "funds_sent");
    assert.ok((await markSent(m, "live", String(staleFile.batch_id))).ok);
    assert.equal((await m.payout(id)).status, "funds_sent");
    await paidItemsCoverVoids(m);
    const payout = await m.payout(id);
    assert.deepEqual([payout.status, payout.failure_reason], ["modality_offered", "check_stale"]);
  });
});

Deno.test("live voids wait for their issue: a check voided while its issue's file waits is told to the bank only in a file after that one was sent", async () => {
  await withCheckFixture("live", async ({ m }) => {
    const [id] = await chooseCheck(m, [6_000]);
    await m.advance(HOUR_SECONDS);
    const [issueFile] = await checkFilesOf(m);
    assert.equal(issueFile.status, "built");
    assert.ok((await voidNumber(m, 5001)).ok);
    await m.advance(6 * HOUR_SECONDS); // past the 16:00 cutoff: nothing may go before the issue
    assert.equal((await checkFilesOf(m)).filter((f) => f.kind === "positive_pay").length, 1);
    assert.ok((await markSent(m, "live", String(issueFile.batch_id))).ok);
    assert.equal((await m.payout(id)).status, "funds_sent", "the bank knows the issue now");
    await m.advance(DAY_SECONDS); // Tuesday's cutoffs take the void
    const voidFile = (await checkFilesOf(m)).filter((f) => f.kind === "positive_pay")[1];
    assert.deepEqual([voidFile.issue_count, voidFile.void_count, voidFile.status], [
      0,
      1,
      "built",
    ]);
    assert.ok((await markSent(m, "live", String(voidFile.batch_id))).ok);
    await paidItemsCoverVoids(m);
    const payout = await m.payout(id);
    assert.deepEqual([payout.status, payout.failure_reason], ["modality_offered", "check_voided"]);
  });
});
