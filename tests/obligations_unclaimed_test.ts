/**
 * Unclaimed property: the pure rules (where an item is owed, its dormancy and report year), the
 * whole sandbox path of a payout nobody chooses (deadline, fallback check, stale, due diligence,
 * report, remittance) with its ledger, events and tie-out, an owner who answers the notice, and a
 * property: every owed item is in exactly one state's report of its year, and remitting the
 * reports balances the ledger.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { lineTieOut, verifyLedger } from "../lib/ledger/reports.ts";
import {
  cutoffOf,
  defaultDormancy,
  noticeAt,
  owedState,
  reportYearOf,
} from "../lib/obligations/unclaimed_rules.ts";
import {
  listUnclaimed,
  remitUnclaimedReport,
  type UnclaimedItem,
  writeUnclaimedReport,
} from "../lib/obligations/unclaimed.ts";
import type { Result } from "../lib/platform/result.ts";
import { recordLateReturn } from "../lib/payouts/store.ts";
import { DAY_SECONDS, START } from "./money_core_helpers.ts";
import { liveCheckAccountJson, rows, withCheckFixture } from "./checks_helpers.ts";
import { readNaupaStrictly } from "./naupa_reader.ts";
import { ADDRESS, configure, owe } from "./obligations_helpers.ts";

const DAY = 86_400_000;

Deno.test("rules: owed to the owner's state, else the holder's; dormancy defaults and their sources; report years", () => {
  assert.equal(owedState("IL", "DE"), "IL");
  assert.equal(owedState(null, "DE"), "DE", "no address");
  assert.equal(owedState("ON", "DE"), "DE", "a foreign province");
  assert.equal(owedState(null, null), null);
  assert.deepEqual(
    [defaultDormancy("TX").years, defaultDormancy("DE").years, defaultDormancy("FL").years],
    [3, 5, 5],
  );
  assert.match(defaultDormancy("TX").source, /Uniform Unclaimed Property Act/);
  assert.match(defaultDormancy("FL").source, /Fla\. Stat\. §717\.102/);
  // Dormant by June 30 (its last millisecond): that year's report; a moment later, the next.
  assert.equal(reportYearOf(cutoffOf(2026)), 2026);
  assert.equal(reportYearOf(cutoffOf(2026) + 1), 2027);
  assert.equal(reportYearOf(Date.UTC(2026, 0, 1)), 2026);
  const owedSince = Date.UTC(2026, 0, 1);
  const dormant = owedSince + 3 * 365 * DAY;
  assert.equal(noticeAt({ owedSince, amountCents: 5_000 }, dormant), dormant - 90 * DAY);
  assert.equal(noticeAt({ owedSince, amountCents: 4_999 }, dormant), null, "under $50");
  assert.equal(noticeAt({ owedSince, amountCents: 5_000 }, owedSince + DAY), owedSince);
});

const unwrap = <T>(result: Result<T>): T => {
  if (!result.ok) throw new Error(result.message);
  return result.value;
};

Deno.test("sandbox: a payout nobody chooses goes through deadline, fallback check, stale, due diligence, report and remittance", async () => {
  // A check goes stale a day after it is issued; the sandbox's dormancy is two days.
  await withCheckFixture("test", async ({ m }) => {
    await configure(m, {
      offer_expiry_action: "fallback",
      pay_by_days: 30,
      holder_state: "DE",
      sandbox_dormancy_days: 2,
    });
    const before = await m.balances();
    const id = await owe(m, "nobody");
    const status = async () => String((await m.payout(id)).status);

    // The deadline: the fallback check is issued, filed with the sandbox bank and on its way.
    await m.advance((Date.UTC(2026, 1, 4) - START) / 1000);
    assert.equal(await status(), "funds_sent");
    // A day on the check is stale; its void reaches the bank, whose next paid items show it
    // unpaid: the payout fails and its payee is offered the methods again.
    await m.advance(5 * DAY_SECONDS);
    assert.equal(await status(), "modality_offered");
    assert.match(String((await m.payout(id)).failure_reason), /^check_(stale|voided)$/);
    const [check] = await rows(m, "SELECT status FROM checks WHERE payout_id = ?", id);
    assert.equal(check.status, "stale");

    // The offer made again falls due after 90 days: it fell back once, so it is kept owed.
    await m.advance(90 * DAY_SECONDS);
    assert.equal(await status(), "modality_offered");
    const owed = await listUnclaimed(m.database, m.companyId);
    assert.equal(owed.length, 1);
    const item: UnclaimedItem = owed[0];
    assert.deepEqual(
      [
        item.kind,
        item.state,
        item.propertyType,
        item.dormancyDays,
        item.dormancySource,
        item.reportYear,
      ],
      ["uncashed_check", "IL", "IN01", 2, "the sandbox's dormancy", 2026],
    );
    // Due diligence went out when it fell due: an e-mail to the payee and a letter to the address.
    assert.deepEqual(item.notices.map((n) => [n.channel, n.outcome]), [
      ["email", "sent"],
      ["letter", "sent"],
    ]);
    const [mail] = await rows(
      m,
      "SELECT subject FROM notifications WHERE payout_id = ? ORDER BY created_at DESC LIMIT 1",
      id,
    );
    assert.equal(mail.subject, "Acme: money owed to you will go to the state");

    // The report of Illinois for 2026: one property, read back strictly.
    const written = await m.database.writer.write((tx) =>
      writeUnclaimedReport(
        tx,
        "test",
        { companyId: m.companyId, state: "IL", reportYear: 2026 },
        m.now(),
      )
    );
    const report = unwrap(written);
    const read = readNaupaStrictly(report.text);
    assert.deepEqual(
      read.properties.map((p) => [p.accountNumber, p.type, p.ownerState, p.amountCents]),
      [
        [id, "IN01", "IL", 50_000],
      ],
    );
    assert.equal(read.holder.reportState, "IL");
    const nothing = await m.database.writer.write((tx) =>
      writeUnclaimedReport(
        tx,
        "test",
        { companyId: m.companyId, state: "TX", reportYear: 2026 },
        m.now(),
      )
    );
    assert.equal(nothing.ok ? null : nothing.code, "nothing_to_report");

    // Remitted: escheated, its money out of reserved into unclaimed_remitted, event 17.
    const held = await m.balances();
    const remitted = unwrap(
      await m.database.writer.write((tx) =>
        remitUnclaimedReport(tx, "test", report.report.id, m.now())
      ),
    );
    assert.deepEqual([remitted.escheated, remitted.totalCents], [1, 50_000]);
    const payout = await m.payout(id);
    assert.deepEqual([payout.status, payout.escheated_state], ["escheated", "IL"]);
    const after = await m.balances();
    assert.equal(after.reserved, held.reserved - 50_000);
    assert.equal(after.unclaimed_remitted, 50_000);
    assert.equal(after.available, held.available);
    assert.equal(after.available + after.reserved + 50_000, before.available, "nothing else moved");
    const events =
      (await rows(m, "SELECT event_type_id FROM events WHERE payout_id = ? ORDER BY rowid", id))
        .map((row) => Number(row.event_type_id));
    assert.equal(events.at(-1), 17);
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
    const today = new Date(m.now()).toISOString().slice(0, 10);
    const tieOut = await lineTieOut(m.database.readClient, m.lineId, today);
    assert.deepEqual([tieOut!.disbursed, tieOut!.difference], [50_000, 0]);
    // Twice is refused, and nothing moves.
    const again = await m.database.writer.write((tx) =>
      remitUnclaimedReport(tx, "test", report.report.id, m.now())
    );
    assert.equal(again.ok ? null : again.code, "report_remitted");
    assert.deepEqual(await listUnclaimed(m.database, m.companyId), []);
  }, { checkAccount: { ...liveCheckAccountJson(), stale_days: 1 } });
});

Deno.test("an owner who answers the notice leaves the report; one who answers after it was written makes its remittance refused", async () => {
  await withCheckFixture("test", async ({ m }) => {
    await configure(m, {
      offer_expiry_action: "hold",
      holder_state: "DE",
      sandbox_dormancy_days: 1,
    });
    const answers = await owe(m, "answers", { amountCents: 20_000 });
    const late = await owe(m, "late", { amountCents: 30_000 });
    const foreign = await owe(m, "abroad", { amountCents: 40_000, payee: {} });
    await m.advance(91 * DAY_SECONDS);
    const owed = await listUnclaimed(m.database, m.companyId);
    // By state, then dormant date, then payout id (the two in IL are owed from the same instant).
    assert.deepEqual(owed.map((i) => [i.payoutId, i.state]), [
      [foreign, "DE"],
      ...[answers, late].sort().map((id) => [id, "IL"]),
    ]);
    // No address: the letter could not go; the e-mail did.
    assert.deepEqual(owed[0].notices.map((n) => [n.channel, n.outcome]), [["email", "sent"], [
      "letter",
      "no_address",
    ]]);
    assert.ok((await m.select(answers, 1, { accountNumber: "000123456789" })).ok);
    const report = unwrap(
      await m.database.writer.write((tx) =>
        writeUnclaimedReport(
          tx,
          "test",
          { companyId: m.companyId, state: "IL", reportYear: 2026 },
          m.now(),
        )
      ),
    );
    assert.deepEqual(report.report.payoutIds, [late]);
    const [notice] = await rows(
      m,
      "SELECT outcome FROM unclaimed_notices WHERE payout_id = ? AND channel = 'email'",
      answers,
    );
    assert.equal(notice.outcome, "responded");
    assert.ok((await m.select(late, 1, { accountNumber: "000123456789" })).ok);
    const refused = await m.database.writer.write((tx) =>
      remitUnclaimedReport(tx, "test", report.report.id, m.now())
    );
    assert.equal(refused.ok ? null : refused.code, "report_stale");
    assert.equal((await m.payout(late)).status, "modality_selected");
  });
});

Deno.test("property: every owed item (held, given back, or come back after completion) is found once and is in exactly one state's report for its year, and remitting them balances the ledger", async () => {
  const states = ["IL", "TX", "CA"];
  await fc.assert(
    fc.asyncProperty(
      fc.array(
        fc.record({
          state: fc.constantFrom(...states, "none"),
          cents: fc.integer({ min: 100, max: 90_000 }),
          // An offer kept owed, one given back, or a completed payout whose money came back.
          action: fc.constantFrom("hold", "cancel", "late_return"),
        }),
        { minLength: 1, maxLength: 6 },
      ),
      async (specs) => {
        await withCheckFixture("test", async ({ m }) => {
          await configure(m, { holder_state: "DE", sandbox_dormancy_days: 1 });
          for (const [n, spec] of specs.entries()) {
            await configure(m, {
              offer_expiry_action: spec.action === "cancel" ? "cancel" : "hold",
            });
            const id = await owe(m, `p${n}`, {
              amountCents: spec.cents,
              payee: spec.state === "none" ? {} : { ...ADDRESS, state: spec.state },
            });
            if (spec.action === "late_return") {
              unwrap(await m.select(id, 1, { accountNumber: "000123456789" }));
              // Business days and the return window: a week at most, whatever the weekday.
              for (let day = 0; day < 10 && (await m.payout(id)).status !== "completed"; day++) {
                await m.advance(DAY_SECONDS);
              }
              unwrap(
                await m.database.writer.write((tx) => recordLateReturn(tx, id, "R10", m.now())),
              );
            }
            // Each falls due under its own action; the next is created a day later.
            await m.advance(91 * DAY_SECONDS);
          }
          const owed = await listUnclaimed(m.database, m.companyId);
          assert.equal(owed.length, specs.length);
          assert.equal(new Set(owed.map((i) => i.payoutId)).size, specs.length);
          assert.deepEqual(
            owed.map((i) => i.kind).sort(),
            specs.map((spec) =>
              ({
                hold: "held_offer",
                cancel: "expired_offer",
                late_return: "late_return",
              })[spec.action]
            ).sort(),
          );
          const years = [...new Set(owed.map((i) => i.reportYear))];
          const reported = new Map<string, number>();
          const start = await m.balances();
          for (const year of years) {
            for (const state of [...states, "DE"]) {
              const written = await m.database.writer.write((tx) =>
                writeUnclaimedReport(tx, "test", {
                  companyId: m.companyId,
                  state,
                  reportYear: year,
                }, m.now())
              );
              if (!written.ok) continue;
              for (const payoutId of written.value.report.payoutIds) {
                reported.set(payoutId, (reported.get(payoutId) ?? 0) + 1);
              }
              unwrap(
                await m.database.writer.write((tx) =>
                  remitUnclaimedReport(tx, "test", written.value.report.id, m.now())
                ),
              );
            }
          }
          for (const item of owed) assert.equal(reported.get(item.payoutId), 1, item.payoutId);
          const end = await m.balances();
          const total = owed.reduce((t, i) => t + i.amountCents, 0);
          assert.equal(end.unclaimed_remitted - start.unclaimed_remitted, total);
          assert.equal(
            end.available + end.reserved + end.unclaimed_remitted,
            start.available + start.reserved + start.unclaimed_remitted,
          );
          assert.deepEqual(await verifyLedger(m.database.readClient), []);
        });
      },
    ),
    { numRuns: 8 },
  );
});

Deno.test("due diligence: a payout owed later whose notice falls due sooner is noticed at once, not at the pending sweep of an older one", async () => {
  await withCheckFixture("test", async ({ m }) => {
    await configure(m, { offer_expiry_action: "hold", holder_state: "DE", pay_by_days: 1 });
    // Illinois keeps its three years: the first payout's notice is years away.
    const slow = await owe(m, "slow");
    await m.advance(2 * DAY_SECONDS);
    await m.database.writer.write((tx) =>
      tx.execute({
        sql: `INSERT INTO unclaimed_dormancy (company_id, state, property_type, days, updated_at)
              VALUES (?, 'TX', 'IN01', 30, ?)`,
        args: [m.companyId, m.now()],
      })
    );
    const quick = await owe(m, "quick", { payee: { ...ADDRESS, state: "TX" } });
    await m.advance(2 * DAY_SECONDS);
    const owed = await listUnclaimed(m.database, m.companyId);
    const noticed = (id: string) => owed.find((i) => i.payoutId === id)!.notices.length;
    assert.deepEqual([noticed(slow), noticed(quick)], [0, 2]);
  });
});
