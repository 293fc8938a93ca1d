/**
 * The whole path of unclaimed property in the sandbox, as an operator and a company see it: a
 * payee who never chooses goes through the deadline, the fallback check, the check going stale,
 * due diligence, the report and the remittance, beside a completed payout whose money came back
 * (a late return) in the same report; each step is checked in the console, the events, the
 * ledger and the tie-out.
 */
import assert from "node:assert/strict";
import { createApp } from "../routes/app.ts";
import { fundAcmeAuto, type HttpFixture, withHttpFixture } from "./http_fixture.ts";
import { ADMIN_TOKEN, adminCall, makeOperator } from "./operator_helpers.ts";
import { withTempDir } from "./helpers.ts";
import { api, payee } from "./api_helpers.ts";
import { v1 } from "./portal_helpers.ts";
import { reportAndRemit } from "./obligations_helpers.ts";
import { consoleAs, lineBalances, textOf } from "./console_helpers.ts";
import { validSettingsJson } from "./bank_helpers.ts";
import { liveCheckAccountJson } from "./checks_helpers.ts";

const DAY_SECONDS = 86_400;

interface Shown {
  status: string;
  modality: string | null;
  timeline: { status: string; detail?: string }[];
}

const shown = async (f: HttpFixture, id: string) =>
  await (await v1(f, "GET", `/v1/disbursements/${id}`)).json() as Shown;

const advance = async (f: HttpFixture, seconds: number) =>
  assert.equal((await v1(f, "POST", "/v1/sandbox/clock/advance", { seconds })).status, 200);

/** The sandbox clock's time. */
const sandboxNow = async (f: HttpFixture) =>
  Date.parse((await (await v1(f, "GET", "/v1/sandbox/clock")).json() as { now: string }).now);

const eventCount = async (f: HttpFixture, type: string) =>
  ((await (await v1(f, "GET", `/v1/events?type=${type}`)).json()) as { data: unknown[] }).data
    .length;

Deno.test("sandbox, end to end: deadline, fallback check, stale, due diligence, report and remittance of a payout nobody chooses and of a late return, in the console, the events, the ledger and the tie-out", async () => {
  await withHttpFixture(async (f) => {
    const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
    const ana = await makeOperator(f.deps, { email: "ana@ops.test", role: "admin" }, f.clock.now());
    const call = adminCall(app, ana.token);
    const viewer = (await consoleAs(f, { email: "vic@ops.test", role: "viewer" })).browser;
    const consolePage = async (path: string) => textOf((await viewer.get(path)).html);
    const tin = f.cast.acme.tin;

    // The company: a deadline a day after create, a fallback check, Delaware, a day's dormancy,
    // and a check account whose checks go stale a day after they are issued.
    const set = await call("obligations:set", {
      tin,
      "offer-expiry": "fallback",
      "pay-by-days": "1",
      "holder-state": "DE",
      "sandbox-dormancy-days": "1",
    });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    await withTempDir(async (dir) => {
      const file = `${dir}/bank.json`;
      await Deno.writeTextFile(
        file,
        JSON.stringify({
          ...validSettingsJson(),
          check_account: { ...liveCheckAccountJson(), stale_days: 1 },
        }),
      );
      const bank = await call("bank:set", { tin, file, environment: "test" });
      assert.equal(bank.status, 200, JSON.stringify(bank.body));
    });
    const settings = await consolePage("/console/unclaimed?env=test");
    assert.match(
      settings,
      /Acme.*fallback: a check mailed to the address on file.*1 days after create.*a postal check printed in house.*DE.*1 days/,
    );

    await fundAcmeAuto(f, 100_000);
    const funded = await lineBalances(f, f.cast.acme.autoLineId);
    const address = { line1: "9 Elm St", city: "Springfield", state: "IL", postal_code: "62701" };
    const payeeBody = { id: "noaction", name: "Pat Doe", email: "pat@example.test", address };
    assert.equal((await v1(f, "POST", "/v1/payees", payeeBody)).status, 201);
    const created = await v1(f, "POST", "/v1/disbursements", {
      amount: 120,
      claim_id: "CLM-35",
      payee: { id: "noaction" },
      modalities: ["ach", "check"],
    });
    assert.equal(created.status, 201);
    const { id } = await created.json() as { id: string };
    const [payoutRow] = (await f.deps.databases.test.readClient.execute({
      sql: "SELECT id FROM payouts WHERE disbursement_id = ?",
      args: [id],
    })).rows;
    const payoutId = String(payoutRow.id);

    // A completed PayPal payment whose money comes back: a late return, owed to its payee.
    const paypal = await api(f, "POST", "/api/disbursements", {
      disbursement_uuid: "CLM-BACK",
      large_disbursement: false,
      payees: [payee("success+paypal", 80, {
        allowed_payment_method_ids: [7],
        address_one: "1 Oak Ave",
        city: "Chicago",
        state: "IL",
        zip_code: "60601",
      })],
    });
    assert.equal(paypal.status, 201);
    const [returnedRow] = (await f.deps.databases.test.readClient.execute(
      "SELECT p.id FROM payouts p JOIN disbursements d ON d.id = p.disbursement_id WHERE d.external_uuid = 'CLM-BACK'",
    )).rows;
    const returnedId = String(returnedRow.id);
    // The sandbox's PayPal sends at a cutoff and completes at the batch's first poll.
    for (
      let minute = 0;
      minute < 15 && (await shown(f, returnedId)).status !== "completed";
      minute++
    ) {
      await advance(f, 60);
    }
    const late = await call("payout:late-return", {
      payout: returnedId,
      reason: "refunded",
      environment: "test",
    });
    assert.equal(late.status, 200, JSON.stringify(late.body));
    assert.equal(await eventCount(f, "disbursement.returned"), 1);

    // The deadline (00:00 UTC on 2026-01-06, the pay_by a day after create): the fallback check.
    await advance(f, (Date.UTC(2026, 0, 6) - await sandboxNow(f)) / 1000);
    const fell = await shown(f, id);
    assert.equal(fell.modality, "check");
    assert.ok(
      fell.timeline.some((step) =>
        step.detail === "fallback at deadline: a check mailed to the address on file"
      ),
    );
    assert.equal(await eventCount(f, "disbursement.fallback_at_deadline"), 1);
    assert.match(
      await consolePage(`/console/payouts/${payoutId}?env=test`),
      /fallback at deadline/,
    );

    // The check goes stale; its void reaches the bank and the payee is offered the methods again.
    await advance(f, 6 * DAY_SECONDS);
    const offered = await shown(f, id);
    assert.equal(offered.status, "modality_offered");
    const [check] = (await f.deps.databases.test.readClient.execute({
      sql: "SELECT status FROM checks WHERE payout_id = ?",
      args: [payoutId],
    })).rows;
    assert.equal(check.status, "stale");
    assert.match(await consolePage(`/console/payouts/${payoutId}?env=test`), /stale/);

    // The offer made again falls due 90 days on: kept owed (a payout falls back once); notices.
    await advance(f, 91 * DAY_SECONDS);
    assert.equal((await shown(f, id)).status, "modality_offered");
    const listed = await call("unclaimed:list", { tin, environment: "test" });
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    const items = listed.body.result.items as Record<string, unknown>[];
    assert.deepEqual(
      items.map((item) => [item.payout_id, item.kind_name, item.state, item.amount, item.status]),
      [
        [returnedId, "late return", "IL", 80, "completed"],
        [payoutId, "uncashed check", "IL", 120, "modality_offered"],
      ],
    );
    for (const item of items) {
      assert.deepEqual(
        (item.notices as { channel: string; outcome: string }[]).map((n) => [
          n.channel,
          n.outcome,
        ]),
        [["email", "sent"], ["letter", "sent"]],
      );
    }
    const unclaimedPage = await consolePage("/console/unclaimed?env=test");
    assert.match(unclaimedPage, new RegExp(`${returnedId}.*\\$80\\.00.*late return.*IN01`));
    assert.match(
      unclaimedPage,
      new RegExp(
        `${payoutId}.*Pat Doe.*\\$120\\.00.*uncashed check.*IN01.*email sent.*letter sent`,
      ),
    );

    // The report of Illinois: both, read back strictly; then the remittance.
    const before = await lineBalances(f, f.cast.acme.autoLineId);
    const { read, remitted } = await reportAndRemit(call, tin, "IL");
    assert.deepEqual(
      read.properties.map((p) => [p.accountNumber, p.ownerState, p.amountCents]).sort(),
      [[payoutId, "IL", 12_000], [returnedId, "IL", 8_000]].sort(),
    );
    assert.equal(read.totals.reportedCents, 20_000);
    assert.deepEqual([remitted.escheated, remitted.amount], [2, 200]);

    // The ledger: the offer's hold out of reserved, the late return out of available.
    const after = await lineBalances(f, f.cast.acme.autoLineId);
    assert.deepEqual(
      [after.reserved, after.available, after.unclaimed_remitted],
      [before.reserved - 12_000, before.available - 8_000, 20_000],
    );
    assert.equal(
      after.available + after.reserved + after.unclaimed_remitted,
      funded.available,
      "the PayPal payment left and came back; nothing but the remittance left the held accounts",
    );
    assert.equal((await shown(f, id)).status, "escheated");
    assert.equal(await eventCount(f, "disbursement.escheated"), 2);
    assert.deepEqual(
      (await call("unclaimed:list", { tin, environment: "test" })).body.result.items,
      [],
    );

    // The console: the escheated payout's status, the late return's remittance on its timeline.
    assert.match(await consolePage(`/console/payouts/${payoutId}?env=test`), /Remitted to a state/);
    assert.match(
      await consolePage(`/console/payouts/${returnedId}?env=test`),
      /the late return that came back remitted to IL as unclaimed property/,
    );
    assert.match(await consolePage("/console/unclaimed?env=test"), /Nothing is owed and unclaimed/);

    // The tie-out of the day counts both as disbursed and differs by nothing.
    const today = new Date(await sandboxNow(f)).toISOString().slice(0, 10);
    const tieOut = await (await v1(f, "GET", `/v1/ledgers/auto/tieouts/${today}`)).json() as {
      disbursed: number;
      difference: number;
    };
    assert.deepEqual([tieOut.disbursed, tieOut.difference], [200, 0]);
  });
});
