/**
 * Random sequences of everything that moves money (fund by ACH or wire, return ACH funding, create,
 * large create, cancel, endorse, select with every test detail, run due jobs, advance the clock,
 * money of a payout coming back after completion).
 * After every step: each transaction sums to 0, every balance equals its entries, available and
 * reserved are never negative, and every balance equals an independent model derived from the
 * payouts' and fundings' states by the documented rules (not from the ledger).
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import type { Database } from "../db/client.ts";
import { addFunds, returnAchFunding } from "../lib/funding/store.ts";
import { lineTieOut } from "../lib/ledger/reports.ts";
import { readLineBalances } from "../lib/ledger/store.ts";
import { selectMethod } from "../lib/payouts/jobs.ts";
import { applyMove, createDisbursement, recordLateReturn } from "../lib/payouts/store.ts";
import { jobHandlersOf } from "../lib/payouts/runtime.ts";
import { advanceSandboxClock, runDueJobs } from "../db/scheduler.ts";
import { openTempDatabase, testSecretBox } from "./helpers.ts";
import { selectionFor } from "./money_core_helpers.ts";

const START = Date.UTC(2026, 0, 5, 15);
const DAY_MS = 86_400_000;
/** Fees by method id: payor, payee, service (cents). Methods without a row cost nothing. */
const FEES: Record<number, [number, number, number]> = {
  1: [100, 50, 25],
  4: [300, 0, 100],
  7: [0, 200, 0],
};

type Op =
  | { op: "fund"; method: "ACH" | "WireTransfer"; cents: number; target: number | null }
  | { op: "return_ach"; pick: number }
  | {
    op: "create";
    cents: number[];
    email: string;
    allowed: number[];
    parties: boolean;
    large: boolean;
  }
  | { op: "cancel"; pick: number }
  | { op: "endorse"; pick: number }
  | {
    op: "select";
    pick: number;
    method: number;
    details: { accountNumber?: string; cardNumber?: string; zip?: string };
  }
  | { op: "settle" }
  | { op: "advance"; seconds: number }
  | { op: "late_return"; pick: number };

const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("fund" as const),
      method: fc.constantFrom("ACH" as const, "WireTransfer" as const),
      cents: fc.integer({ min: 1, max: 200_000 }),
      // Which created disbursement a large-disbursement funding names, if any.
      target: fc.option(fc.nat()),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("return_ach" as const), pick: fc.nat() }) },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant("create" as const),
      cents: fc.array(fc.integer({ min: 1, max: 60_000 }), { minLength: 1, maxLength: 3 }),
      email: fc.constantFrom(
        "noaction@x.test",
        "success+ach@x.test",
        "fail+ach@x.test",
        "success+paypal@x.test",
        "fail+instant@x.test",
        "success+check@x.test",
      ),
      allowed: fc.subarray([1, 2, 4, 7], { minLength: 1 }),
      parties: fc.boolean(),
      large: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("cancel" as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("endorse" as const), pick: fc.nat() }) },
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constant("select" as const),
      pick: fc.nat(),
      method: fc.constantFrom(1, 2, 4, 7),
      details: fc.constantFrom(
        {},
        { accountNumber: "000123456789" },
        { accountNumber: "000111111116" },
        { accountNumber: "000222222227" },
        { cardNumber: "4000000000000002" },
        { zip: "00000" },
      ),
    }),
  },
  { weight: 3, arbitrary: fc.record({ op: fc.constant("settle" as const) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("late_return" as const), pick: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant("advance" as const),
      seconds: fc.constantFrom(10, 3_600, 86_400, 172_800, 432_000),
    }),
  },
);

interface ModelBalances {
  available: number;
  pending_funding: number;
  reserved: number;
  in_transit: number;
  fees_payor: number;
  fees_payee: number;
  fees_service: number;
  bank: number;
  funding_shortfall: number;
  /** Remitted as unclaimed property: no operation of this model escheats. */
  unclaimed_remitted: number;
}

/** Balances as the documented rules say they must be, from payout and funding states alone. */
async function modelBalances(
  database: Database,
  lineId: string,
  companyFees: typeof FEES,
): Promise<ModelBalances> {
  const fees = (id: number | null) => (id === null ? [0, 0, 0] : companyFees[id] ?? [0, 0, 0]);
  const maxHoldFees = (allowed: number[]) =>
    Math.max(0, ...allowed.map((id) => fees(id)[0] + fees(id)[2]));
  const model: ModelBalances = {
    available: 0,
    pending_funding: 0,
    reserved: 0,
    in_transit: 0,
    fees_payor: 0,
    fees_payee: 0,
    fees_service: 0,
    bank: 0,
    funding_shortfall: 0,
    unclaimed_remitted: 0,
  };
  const fundings = await database.readClient.execute({
    // An ACH funding is pending once its debit went to the bank (a transmitted file).
    sql: `SELECT amount_cents, status, payment_method, EXISTS (SELECT 1 FROM rail_batch_entries e
            WHERE e.funding_id = f.id AND e.status IN ('sent', 'completed', 'failed')) AS debit_sent
          FROM fundings f WHERE line_id = ?`,
    args: [lineId],
  });
  for (const f of fundings.rows) {
    const cents = Number(f.amount_cents);
    if (f.status === "Completed") {
      model.available += cents;
      model.bank -= cents;
    } else if (f.status === "Pending" && f.payment_method === "ACH" && Number(f.debit_sent) === 1) {
      model.pending_funding += cents;
      model.bank -= cents;
    }
  }
  const payouts = await database.readClient.execute({
    sql: `SELECT status, amount_cents, payment_method_id, allowed_payment_method_ids,
            EXISTS (SELECT 1 FROM payout_transitions t WHERE t.payout_id = p.id
              AND t.from_status = 'completed') AS returned_late
          FROM payouts p WHERE line_id = ?`,
    args: [lineId],
  });
  for (const p of payouts.rows) {
    const amount = Number(p.amount_cents);
    const method = p.payment_method_id === null ? null : Number(p.payment_method_id);
    const [payor, payee, service] = fees(method);
    const chosenHold = amount + payor + service;
    switch (p.status) {
      case "created":
      case "awaiting_endorsement":
      case "modality_offered": {
        const hold = amount + maxHoldFees(JSON.parse(String(p.allowed_payment_method_ids)));
        model.reserved += hold;
        model.available -= hold;
        break;
      }
      case "modality_selected":
      case "failed":
        model.reserved += chosenHold;
        model.available -= chosenHold;
        break;
      case "funds_sent":
        model.in_transit += chosenHold;
        model.available -= chosenHold;
        break;
      case "completed":
        model.available -= chosenHold;
        model.bank += amount - payee;
        model.fees_payee += payee;
        model.fees_payor += payor;
        model.fees_service += service;
        // Money back after completion: what the bank got returns to available; fees stay.
        if (Number(p.returned_late) === 1) {
          model.available += amount - payee;
          model.bank -= amount - payee;
        }
        break;
    }
  }
  return model;
}

async function checkInvariants(database: Database, lineId: string): Promise<void> {
  const { rows } = await database.readClient.execute({
    sql: `SELECT
      (SELECT count(*) FROM (SELECT e.transaction_id FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id
         WHERE t.line_id = ?1 GROUP BY e.transaction_id HAVING sum(e.amount_cents) <> 0)) AS unbalanced,
      (SELECT count(*) FROM ledger_accounts a WHERE a.line_id = ?1 AND a.balance_cents <>
         (SELECT coalesce(sum(e.amount_cents), 0) FROM ledger_entries e WHERE e.account_id = a.id)) AS drifted,
      (SELECT count(*) FROM ledger_accounts WHERE line_id = ?1 AND code IN ('available', 'reserved') AND balance_cents < 0) AS negative,
      (SELECT group_concat(kind || ': ' || error, '; ') FROM scheduled_jobs j JOIN business_lines l ON l.company_id = j.company_id
         WHERE l.id = ?1 AND j.error IS NOT NULL) AS failed_jobs`,
    args: [lineId],
  });
  assert.deepEqual({ ...rows[0] }, { unbalanced: 0, drifted: 0, negative: 0, failed_jobs: null });
}

/** Every UTC day of the run ties out: its categories explain every change of the held total. */
async function checkTieOuts(database: Database, lineId: string, now: number): Promise<void> {
  for (let day = START; day <= now + DAY_MS; day += DAY_MS) {
    const date = new Date(day).toISOString().slice(0, 10);
    const tieOut = (await lineTieOut(database.readClient, lineId, date))!;
    assert.equal(tieOut.difference, 0, `${date}: ${JSON.stringify(tieOut)}`);
  }
}

Deno.test("property: random money sequences keep the ledger balanced and equal to the model", async () => {
  const dir = await Deno.makeTempDir({ prefix: "disbursement-model-" });
  const database = await openTempDatabase(dir, "test");
  const handlers = jobHandlersOf(
    "test",
    { offerTtlDays: 90, baseUrl: "http://127.0.0.1:8000" },
    database,
    testSecretBox,
  );
  let run = 0;
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.array(opArbitrary, { minLength: 1, maxLength: 50, size: "max" }),
        async (ops) => {
          run++;
          const companyId = `co_${run}`;
          const lineId = `line_${run}`;
          let now = START;
          await database.writer.write(async (tx) => {
            await tx.execute({
              sql: "INSERT INTO companies (id, name, tin, created_at) VALUES (?, 'Model', ?, 0)",
              args: [companyId, String(100_000_000 + run)],
            });
            await tx.execute({
              sql:
                "INSERT INTO business_lines (id, company_id, code, created_at) VALUES (?, ?, 'auto', 0)",
              args: [lineId, companyId],
            });
            for (const [method, [payor, payee, service]] of Object.entries(FEES)) {
              await tx.execute({
                sql: "INSERT INTO fee_schedules VALUES (?, ?, ?, ?, ?)",
                args: [companyId, Number(method), payor, payee, service],
              });
            }
          });
          // Every run starts funded, so creates mostly succeed and payouts reach every state.
          await database.writer.write((tx) =>
            addFunds(
              tx,
              {
                companyId,
                lineId,
                paymentMethod: "WireTransfer",
                amountCents: 300_000,
                description: "start",
                largeDisbursement: false,
                requestFingerprint: "start",
              },
              "test",
              now,
            )
          );
          const payoutIds: string[] = [];
          const achFundings: string[] = [];
          const disbursementUuids: string[] = [];
          let sequence = 0;
          for (const step of ops) {
            const pick = <T>(
              list: T[],
              index: number,
            ) => (list.length === 0 ? undefined : list[index % list.length]);
            switch (step.op) {
              case "fund": {
                const target = step.target === null
                  ? undefined
                  : pick(disbursementUuids, step.target);
                const funded = await database.writer.write((tx) =>
                  addFunds(
                    tx,
                    {
                      companyId,
                      lineId,
                      paymentMethod: step.method,
                      amountCents: step.cents,
                      description: "m",
                      largeDisbursement: target !== undefined,
                      disbursementUuid: target,
                      requestFingerprint: String(sequence++),
                    },
                    "test",
                    now,
                  )
                );
                if (!funded.ok) {
                  // Only a disbursement that no longer waits may be refused as a target.
                  assert.equal(funded.code, "disbursement_not_pending_funds", funded.message);
                  break;
                }
                if (step.method === "ACH") achFundings.push(funded.value.funding.id);
                break;
              }
              case "return_ach": {
                const id = pick(achFundings, step.pick);
                if (id) await database.writer.write((tx) => returnAchFunding(tx, id, now));
                break;
              }
              case "create": {
                const created = await database.writer.write((tx) =>
                  createDisbursement(tx, {
                    companyId,
                    lineId,
                    kind: "disbursement",
                    externalUuid: `d${sequence}`,
                    requestFingerprint: "m",
                    largeDisbursement: step.large,
                    payouts: step.cents.map((cents, i) => ({
                      payeeUuid: `p${i}`,
                      amountCents: cents,
                      allowedPaymentMethodIds: step.allowed,
                      permissionRequiredFrom: step.parties ? ["party"] : [],
                      payee: { email: step.email },
                    })),
                  }, now)
                );
                if (created.ok) {
                  payoutIds.push(...created.value.payouts.map((p) => p.id));
                  disbursementUuids.push(`d${sequence}`);
                } else {
                  assert.ok(
                    ["insufficient_funds", "amount_below_payee_fee"].includes(created.code),
                    created.code,
                  );
                }
                sequence++;
                break;
              }
              case "cancel": {
                const id = pick(payoutIds, step.pick);
                if (id) {
                  await database.writer.write((tx) => applyMove(tx, id, { kind: "cancel" }, now));
                }
                break;
              }
              case "endorse": {
                const id = pick(payoutIds, step.pick);
                if (id) {
                  await database.writer.write((tx) =>
                    applyMove(tx, id, { kind: "endorsements_complete" }, now)
                  );
                }
                break;
              }
              case "select": {
                const id = pick(payoutIds, step.pick);
                if (id) {
                  const selection = await selectionFor(database, step.method, step.details, now);
                  await database.writer.write((tx) => selectMethod(tx, id, selection, now));
                }
                break;
              }
              case "settle":
                await runDueJobs(database, companyId, now, handlers);
                break;
              case "late_return": {
                const id = pick(payoutIds, step.pick);
                if (id) {
                  const returned = await database.writer.write((tx) =>
                    recordLateReturn(tx, id, "R10", now)
                  );
                  if (!returned.ok) {
                    assert.ok(
                      ["payout_not_completed", "already_returned"].includes(returned.code),
                      returned.code,
                    );
                  }
                }
                break;
              }
              case "advance":
                now =
                  (await advanceSandboxClock(database, companyId, step.seconds, START, handlers))
                    .now;
                break;
            }
            await checkInvariants(database, lineId);
            const actual = await readLineBalances(database.readClient, lineId);
            assert.deepEqual(
              actual,
              await modelBalances(database, lineId, FEES),
              `after ${JSON.stringify(step)}`,
            );
          }
          await checkTieOuts(database, lineId, now);
        },
      ),
      { numRuns: 200, endOnFailure: true },
    );
    assert.equal(run, 200);
  } finally {
    await database.close();
    await Deno.remove(dir, { recursive: true });
  }
});
