/**
 * Money in flight on a per-payout rail (issue "Money in flight"): a failed payout whose automatic
 * retry is being handed to a provider called once per payout (the sandbox's instant deposit here)
 * has no rail entry, yet the provider may pay it. From the unit that hands it over until the
 * answer is recorded, cancel and re-offer are refused with `payout_in_flight` (409 on /v1, the
 * CONFLICT record on /api, the CLI's refusal, the console's message), and the answer is applied
 * once.
 */
import assert from "node:assert/strict";
import { runDueJobs } from "../db/scheduler.ts";
import { readLineBalances } from "../lib/ledger/store.ts";
import { testPayeeCard } from "../lib/rails/sandbox.ts";
import { createApp } from "../routes/app.ts";
import { ADMIN_TOKEN, adminCall, makeOperator } from "./operator_helpers.ts";
import { api, payee } from "./api_helpers.ts";
import { consoleAs, textOf } from "./console_helpers.ts";
import { v1 } from "./portal_helpers.ts";
import { fundAcmeAuto, type HttpFixture, withHttpFixture } from "./http_fixture.ts";
import { payoutOf, payoutOnEachSurface, sql } from "./money_in_flight_helpers.ts";

const NO_LIMIT = { RATE_LIMIT_RPS: "0" };
const INSTANT_DEPOSIT = 4;
const LEASE_MS = 120_000;

/**
 * The payout failed on instant deposit (a transient rail error) and its retry, its second
 * submission, is with the provider: the `payout.submit` job's claiming unit handed it over and the
 * run waits for the answer (`claimed`), or the call failed and waits to ask again (`retrying`).
 */
async function retryWithProvider(
  f: HttpFixture,
  payoutId: string,
  run: "claimed" | "retrying",
): Promise<void> {
  const { rows: [payout] } = await f.deps.databases.test.readClient.execute({
    sql: "SELECT company_id FROM payouts WHERE id = ?",
    args: [payoutId],
  });
  // The hold stays in reserved, as a failure leaves it; the card is a test payee's card the
  // sandbox's Increase simulator knows.
  await sql(
    f,
    `UPDATE payouts SET status = 'failed', failure_reason = 'rail_unavailable',
       payment_method_id = ?, submission_count = 2, method_details = ? WHERE id = ?`,
    INSTANT_DEPOSIT,
    JSON.stringify({ modality: "instant_deposit", ...testPayeeCard("success") }),
    payoutId,
  );
  const now = f.clock.now();
  await sql(
    f,
    `INSERT INTO scheduled_jobs (id, company_id, kind, subject_id, due_at, payload, attempts,
       lease_until, error, created_at)
     VALUES (?, ?, 'payout.submit', ?, ?, '{"submission":2,"calling":1}', 1, ?, ?, ?)`,
    `job_${payoutId}`,
    String(payout.company_id),
    payoutId,
    run === "claimed" ? now : now + 60_000,
    run === "claimed" ? now + LEASE_MS : null,
    run === "claimed" ? null : "the provider did not answer",
    now,
  );
}

const REFUSED =
  "cancel is refused: the payout's money is in flight, its instant_deposit submission is with the provider and has no answer yet; wait for the answer, which is applied once (the submission asks again with the same reference)";

for (const run of ["claimed", "retrying"] as const) {
  Deno.test(`per-payout rail, ${run}: cancel and re-offer of a failed payout whose retry is with the provider are refused 409 payout_in_flight on /v1, /api, the CLI and the console; nothing moves`, async () => {
    await withHttpFixture(async (f) => {
      const { v1Disbursement, v1Payout, apiPayout } = await payoutOnEachSurface(f);
      const created = { id: v1Disbursement };
      await retryWithProvider(f, v1Payout, run);
      await retryWithProvider(f, apiPayout, run);
      const before = await readLineBalances(
        f.deps.databases.test.readClient,
        f.cast.acme.autoLineId,
      );

      const refusedV1 = await v1(f, "POST", `/v1/disbursements/${created.id}/cancel`);
      assert.equal(refusedV1.status, 409);
      const problem = await refusedV1.json() as { code: string; detail: string };
      assert.deepEqual([problem.code, problem.detail], [
        "payout_in_flight",
        `disbursement ${created.id}: ${REFUSED}`,
      ]);

      const refusedApi = await api(f, "POST", "/api/disbursements/CLM-1/payees/p-a/cancel");
      assert.equal(refusedApi.status, 409);
      assert.deepEqual(await refusedApi.json(), {
        name: "CONFLICT",
        message: `payee p-a: ${REFUSED}`,
        details: [],
      });

      const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
      const admin = await makeOperator(
        f.deps,
        { email: "ada@ops.test", role: "admin" },
        f.clock.now(),
      );
      const cli = adminCall(app, admin.token);
      const cancelCli = await cli("payouts:cancel", { payout: apiPayout, environment: "test" });
      assert.equal(cancelCli.status, 409, JSON.stringify(cancelCli.body));
      assert.equal(cancelCli.body.error.code, "payout_in_flight");
      assert.match(cancelCli.body.error.message, /instant_deposit submission is with the provider/);
      const reofferCli = await cli("payouts:reoffer", { payout: v1Payout, environment: "test" });
      assert.equal(reofferCli.status, 409, JSON.stringify(reofferCli.body));
      assert.equal(reofferCli.body.error.code, "payout_in_flight");

      const { browser } = await consoleAs(f, { email: "cleo@ops.test", role: "clerk" });
      const page = await browser.get(`/console/payouts/${apiPayout}?env=test`);
      assert.match(
        textOf(page.html),
        /Money in flight, so it cannot be canceled or offered again now: its instant_deposit submission is with the provider and has no answer yet/,
      );
      assert.doesNotMatch(page.html, /\/cancel"/, "no cancel offered while the money is in flight");
      const refusedConsole = await browser.post(`/console/payouts/${apiPayout}/cancel`, {
        env: "test",
      });
      assert.equal(refusedConsole.status, 409);

      assert.deepEqual(
        (await sql(f, "SELECT status FROM payouts WHERE id IN (?, ?)", v1Payout, apiPayout)).map(
          (r) => r.status,
        ),
        ["failed", "failed"],
      );
      assert.deepEqual(
        await readLineBalances(f.deps.databases.test.readClient, f.cast.acme.autoLineId),
        before,
      );
    }, NO_LIMIT);
  });
}

Deno.test("per-payout rail: the provider's answer to a retry that was in flight is applied once; after it cancel is refused as for any paid payout", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 100_000);
    await api(f, "POST", "/api/disbursements", {
      disbursement_uuid: "CLM-2",
      large_disbursement: false,
      payees: [payee("p-b", 20)],
    });
    const payoutId = await payoutOf(f, "payee_uuid = ?", "p-b");
    await retryWithProvider(f, payoutId, "claimed");
    const held = await readLineBalances(f.deps.databases.test.readClient, f.cast.acme.autoLineId);
    const refused = await api(f, "POST", "/api/disbursements/CLM-2/payees/p-b/cancel");
    assert.equal(refused.status, 409);
    // The run that held the claim stopped; once its lease is over a run asks again and records.
    f.clock.advance(LEASE_MS + 1_000);
    const run = () =>
      runDueJobs(
        f.deps.databases.test,
        f.cast.acme.id,
        f.clock.now(),
        f.deps.jobHandlers.test,
        { clock: f.clock },
      );
    await run();
    await run();
    // The retry is sent, and completed by the Increase simulator's event 5 s later: each once.
    const transitions = await sql(
      f,
      "SELECT from_status, to_status FROM payout_transitions WHERE payout_id = ? ORDER BY id",
      payoutId,
    );
    assert.deepEqual(transitions.slice(-2).map((t) => `${t.from_status}->${t.to_status}`), [
      "failed->funds_sent",
      "funds_sent->completed",
    ]);
    assert.equal(transitions.filter((t) => t.from_status === "failed").length, 1);
    const balances = await readLineBalances(
      f.deps.databases.test.readClient,
      f.cast.acme.autoLineId,
    );
    assert.deepEqual([balances.reserved, balances.in_transit], [0, 0]);
    assert.equal(balances.bank, held.bank + 2_000);
    const after = await api(f, "POST", "/api/disbursements/CLM-2/payees/p-b/cancel");
    assert.equal(after.status, 409);
    assert.equal((await after.json()).name, "CONFLICT");
  }, NO_LIMIT);
});
