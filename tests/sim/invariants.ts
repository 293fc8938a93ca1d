/**
 * What must hold of the simulated world after every step, and after the final drain. The bank's
 * books (the simulated bank's own, never the service's tables) are the truth a payout's state
 * and the ledger are held against.
 */
import { lineTieOut, verifyLedger } from "../../lib/ledger/reports.ts";
import type { SimPayout, StepRecord } from "./run.ts";
import { InvariantViolation } from "./run.ts";
import { domainNow } from "../../lib/sandbox/clock_store.ts";
import { SIM_START, type World } from "./world.ts";
import type { SimPaypal } from "./paypal_provider.ts";

/**
 * The sandbox's Lithic's books of each payout (by the payout id's tail): the cards it issued, each
 * counted as paid, and the cents that left with it, unless it was closed unspent (its limit came
 * back): a closed card paid what settled on it, an open one its whole limit.
 */
async function cardsPaid(world: World): Promise<Map<string, { count: number; cents: number }>> {
  const { rows } = await world.test.readClient.execute(
    "SELECT card, transactions FROM sandbox_lithic_cards",
  );
  const paid = new Map<string, { count: number; cents: number }>();
  for (const row of rows) {
    const card = JSON.parse(String(row.card)) as {
      memo: string;
      state: string;
      spend_limit: number;
    };
    const settled =
      (JSON.parse(String(row.transactions)) as { status: string; settled_amount: number }[])
        .filter((t) => t.status === "SETTLED").reduce((sum, t) => sum + t.settled_amount, 0);
    const cents = card.state === "CLOSED" ? settled : card.spend_limit;
    const tail = card.memo.slice(0, card.memo.lastIndexOf("-")).slice(-15);
    const before = paid.get(tail) ?? { count: 0, cents: 0 };
    paid.set(tail, { count: before.count + (cents > 0 ? 1 : 0), cents: before.cents + cents });
  }
  return paid;
}

/**
 * What the Increase simulator pushed or sent, per payout (the tail of its id): the transfers made
 * under each submission's reference. A transfer is final once made, so each counts as paid.
 */
async function instantPaid(world: World): Promise<Map<string, { count: number; cents: number }>> {
  const { rows } = await world.test.readClient.execute(
    `SELECT i.key, o.object FROM increase_simulator_idempotency i
       JOIN increase_simulator_objects o ON o.id = i.object_id
     WHERE o.type IN ('card_push_transfer', 'real_time_payments_transfer')`,
  );
  const paid = new Map<string, { count: number; cents: number }>();
  for (const row of rows) {
    const reference = String(row.key).split(" ")[1];
    const tail = reference.slice(0, reference.lastIndexOf("-")).slice(-15);
    const transfer = JSON.parse(String(row.object)) as {
      amount?: number;
      presentment_amount?: { value: string };
    };
    // A push carries dollars as "12.34"; a Real-Time Payments transfer carries cents.
    const [dollars, fraction = ""] = (transfer.presentment_amount?.value ?? "0").split(".");
    const cents = transfer.amount ?? Number(dollars) * 100 + Number(fraction.padEnd(2, "0"));
    const before = paid.get(tail) ?? { count: 0, cents: 0 };
    paid.set(tail, { count: before.count + 1, cents: before.cents + cents });
  }
  return paid;
}

/** What the checks read: the world, the harness's payouts and the money it wired in. */
export interface Ledgerless {
  readonly world: World;
  readonly paypal: SimPaypal;
  readonly payouts: readonly SimPayout[];
  readonly wiredCents: number;
  readonly openBugs: readonly string[];
}

const DAY_MS = 86_400_000;

function fail(message: string): never {
  throw new InvariantViolation(message);
}

/**
 * The sandbox bank's statements reconcile: no exception is left open but the differences the seed
 * injected, if it did, and those exactly: the fee (the day it went into, a debit of its amount) and
 * each line the bank left out (the day, the move the service expected and the bank did not report).
 */
async function checkReconciled(world: World): Promise<void> {
  const { rows } = await world.test.readClient.execute(
    `SELECT company_id, statement_date, side, kind, subject_id, direction, amount_cents, reason
       FROM recon_exceptions WHERE status = 'open' ORDER BY rowid`,
  );
  const open = rows.map((r) => ({
    company: String(r.company_id),
    date: String(r.statement_date),
    side: String(r.side),
    kind: String(r.kind),
    subject: r.subject_id === null ? null : String(r.subject_id),
    direction: String(r.direction),
    cents: Number(r.amount_cents),
    reason: String(r.reason),
  }));
  const fee = world.injectedFee;
  const expected = [
    ...(fee === null || fee.date === null ? [] : [{
      company: world.ids.companyId,
      date: fee.date,
      side: "bank",
      kind: "other",
      subject: null,
      direction: "debit",
      cents: fee.amountCents,
    }]),
    ...world.missingLines.flatMap(({ move, date }) =>
      move === null || date === null ? [] : [{
        company: world.ids.companyId,
        date,
        side: "service",
        kind: move.kind,
        subject: move.subjectId,
        direction: move.direction,
        cents: move.amountCents,
      }]
    ),
  ];
  const key = (exception: object) => JSON.stringify(exception);
  const found = open.map(({ reason: _, ...exception }) => key(exception)).sort();
  if (JSON.stringify(found) !== JSON.stringify(expected.map(key).sort())) {
    fail(
      `reconciliation exceptions open after the drain: ${JSON.stringify(open)}; expected ` +
        JSON.stringify(expected),
    );
  }
}

/** A payout's transitions, rail entries and their files, for a finding's report. */
export async function storyOf(world: World, payoutId: string): Promise<string> {
  const transitions = await world.test.readClient.execute({
    sql: `SELECT from_status, to_status, at, detail FROM payout_transitions WHERE payout_id = ?
          ORDER BY id`,
    args: [payoutId],
  });
  const entries = await world.test.readClient.execute({
    sql: `SELECT e.reference, e.status, e.trace_number, e.return_code, b.status AS batch,
            f.file_name FROM rail_batch_entries e LEFT JOIN rail_batches b ON b.id = e.batch_id
            LEFT JOIN ach_files f ON f.batch_id = e.batch_id
          WHERE e.payout_id = ? ORDER BY e.rowid`,
    args: [payoutId],
  });
  const bank = world.bank.entries.filter((e) => e.individualId === payoutId.slice(-15));
  return [
    "  transitions: " +
    transitions.rows.map((r) =>
      `${r.from_status}->${r.to_status} @${new Date(Number(r.at)).toISOString()}` +
      (r.detail ? ` (${r.detail})` : "")
    ).join("; "),
    "  rail entries: " +
    entries.rows.map((r) =>
      `${r.reference} ${r.status} trace ${r.trace_number} ${r.return_code ?? ""} ` +
      `file ${r.file_name ?? "-"} (${r.batch ?? "-"})`
    ).join("; "),
    "  bank: " +
    bank.map((e) =>
      `${e.fileName} trace ${e.trace} ${e.amountCents}${e.returned ? " returned" : ""}`
    ).join("; "),
  ].join("\n");
}

interface PayoutState {
  readonly status: string;
  readonly failureReason: string | null;
  readonly lateReturned: boolean;
  /** A failed payout's automatic retry is in a batch or sent: money in flight again. */
  readonly retryInFlight: boolean;
  readonly paymentMethodId: number | null;
}

async function payoutStates(view: Ledgerless): Promise<Map<string, PayoutState>> {
  const { rows } = await view.world.test.readClient.execute(
    `SELECT p.id, p.status, p.failure_reason, p.payment_method_id,
       EXISTS (SELECT 1 FROM payout_transitions t WHERE t.payout_id = p.id
         AND t.from_status = 'completed') AS late_returned,
       EXISTS (SELECT 1 FROM rail_batch_entries e WHERE e.payout_id = p.id
         AND e.status IN ('batched', 'sent')) AS retry_in_flight
     FROM payouts p`,
  );
  return new Map(rows.map((row) => [String(row.id), {
    status: String(row.status),
    failureReason: row.failure_reason === null ? null : String(row.failure_reason),
    lateReturned: Number(row.late_returned) === 1,
    retryInFlight: Number(row.retry_in_flight) === 1,
    paymentMethodId: row.payment_method_id === null ? null : Number(row.payment_method_id),
  }]));
}

/**
 * What the banks paid to each payout, net of what came back: ACH credits not returned (by the
 * entry's individual id, the payout id's tail) and checks the check bank paid (by number, through
 * the register's number -> payout; a check the bank paid twice by its own error counts once: the
 * second payment is the bank's, caught as an exception, not the service paying again).
 */
async function bankPaid(world: World, paypal: SimPaypal): Promise<Map<string, number>> {
  const paid = new Map<string, number>();
  for (const [tail, count] of world.bank.netPaidByOwner()) paid.set(tail, count);
  for (const [payoutId, { count }] of paypal.paidByPayout()) {
    const tail = payoutId.slice(-15);
    paid.set(tail, (paid.get(tail) ?? 0) + count);
  }
  for (const [tail, { count }] of await cardsPaid(world)) {
    paid.set(tail, (paid.get(tail) ?? 0) + count);
  }
  for (const [tail, { count }] of await instantPaid(world)) {
    paid.set(tail, (paid.get(tail) ?? 0) + count);
  }
  const numbers = [...world.checkBank.checks.values()].filter((c) => c.paid).map((c) => c.number);
  if (numbers.length > 0) {
    const { rows } = await world.test.readClient.execute({
      sql: `SELECT payout_id FROM checks WHERE company_id = ?
              AND check_number IN (SELECT value FROM json_each(?))`,
      args: [world.ids.companyId, JSON.stringify(numbers)],
    });
    for (const row of rows) {
      const tail = String(row.payout_id).slice(-15);
      paid.set(tail, (paid.get(tail) ?? 0) + 1);
    }
  }
  return paid;
}

/** Payouts with a rail or paid-item exception: an outcome an operator has to look at. */
async function excepted(world: World): Promise<Set<string>> {
  const { rows } = await world.test.readClient.execute(
    `SELECT payout_id FROM rail_exceptions WHERE payout_id IS NOT NULL
     UNION SELECT c.payout_id FROM check_exceptions x JOIN checks c ON c.id = x.check_id`,
  );
  return new Set(rows.map((row) => String(row.payout_id)));
}

/** After every step: paid at most once, only in a paying state; ledger sound; nothing parked. */
export async function checkStep(view: Ledgerless, _records: readonly StepRecord[]): Promise<void> {
  const { world } = view;
  const altered = world.alteredFile;
  if (altered !== null && world.bank.filesTaken.includes(altered)) {
    fail(`the bank was handed ${altered}, whose kept content was altered after its build`);
  }
  // The same notice of change twice tells the payee once.
  const told = await world.test.readClient.execute(
    `SELECT payout_id, count(*) AS times FROM notifications
     WHERE subject LIKE '%your bank details were updated' AND channel = 'email'
     GROUP BY payout_id`,
  );
  for (const row of told.rows) {
    const tail = String(row.payout_id).slice(-15);
    const noticed = world.bank.entries.filter((e) => e.individualId === tail && e.notices > 0)
      .length;
    if (Number(row.times) > noticed) {
      fail(
        `payout ${row.payout_id} was told ${row.times} times that its details changed; ` +
          `its bank sent notices for ${noticed} entries`,
      );
    }
  }
  const problems = await verifyLedger(world.test.readClient);
  if (problems.length > 0) fail(`ledger:verify: ${JSON.stringify(problems)}`);
  const parked = await world.test.readClient.execute(
    `SELECT kind, subject_id, error FROM scheduled_jobs
     WHERE done_at IS NOT NULL AND error IS NOT NULL`,
  );
  if (parked.rows.length > 0) {
    fail(`parked jobs: ${JSON.stringify(parked.rows.map((row) => ({ ...row })))}`);
  }
  const states = await payoutStates(view);
  const paid = await bankPaid(world, view.paypal);
  const exceptions = await excepted(world);
  for (const [index, payout] of view.payouts.entries()) {
    const net = paid.get(payout.id.slice(-15)) ?? 0;
    const state = states.get(payout.id)!;
    const name = `payout#${index} (${payout.id})`;
    // A payment the payout could not take waits in an exceptions queue for an operator.
    if (exceptions.has(payout.id) && net <= 1) continue;
    if (net > 1) {
      fail(`${name} was paid ${net} times by the bank\n${await storyOf(world, payout.id)}`);
    }
    if (
      net === 1 && !["modality_selected", "funds_sent", "completed"].includes(state.status) &&
      !(state.status === "failed" && state.retryInFlight)
    ) {
      fail(
        `${name} was paid by the bank but is ${state.status}` +
          (state.failureReason ? ` (${state.failureReason})` : "") +
          `\n${await storyOf(world, payout.id)}`,
      );
    }
    if (state.lateReturned && state.paymentMethodId === 1) {
      // The entry that completed is the payout's last; earlier ones failed it before.
      const last = world.bank.entries.findLast((e) => e.individualId === payout.id.slice(-15));
      if (last?.returned && last.returnTiming === "early") {
        fail(
          `${name} took a return the bank sent before the settlement time as a late return: ` +
            `it shows completed and is not offered again\n${await storyOf(world, payout.id)}`,
        );
      }
    }
    if (net === 1 && state.lateReturned) {
      fail(`${name} shows its money back but the bank paid it\n${await storyOf(world, payout.id)}`);
    }
  }
}

/**
 * Why a payout that is neither terminal nor waiting for its payee's choice still waits, or null:
 * a held file, a check issued that its payee has not deposited yet, or a void that waits for the
 * bank's paid items.
 */
async function heldBatchOf(view: Ledgerless, payoutId: string): Promise<string | null> {
  const { rows } = await view.world.test.readClient.execute({
    sql: `SELECT 'file ' || b.status AS reason FROM rail_batch_entries e
            JOIN rail_batches b ON b.id = e.batch_id
          WHERE e.payout_id = ? AND b.status IN ('built', 'in_doubt')
          UNION ALL SELECT 'check outstanding' FROM checks WHERE payout_id = ? AND status = 'issued'
          UNION ALL SELECT 'void waits for the bank''s paid items' FROM checks c
            JOIN rail_batch_entries e ON e.reference = c.reference
          WHERE c.payout_id = ? AND c.status IN ('voided', 'stale') AND e.status = 'sent'
          LIMIT 1`,
    args: [payoutId, payoutId, payoutId],
  });
  return rows[0] ? String(rows[0].reason) : null;
}

/** After the drain: every payout's state matches the bank, and the ledger ties out to the bank. */
export async function checkFinal(view: Ledgerless): Promise<void> {
  const { world } = view;
  await checkStep(view, []);
  const altered = world.alteredFile;
  if (altered !== null) {
    // Handed to nobody: its window closed (or an operator voided it) and its entries went on,
    // and it was never in doubt: everyone knows it went nowhere.
    const { rows } = await world.test.readClient.execute({
      sql: `SELECT b.status, (SELECT count(*) FROM rail_batch_attempts a
              WHERE a.batch_id = b.id AND a.outcome = 'in_doubt') AS in_doubt
            FROM ach_files f JOIN rail_batches b ON b.id = f.batch_id WHERE f.file_name = ?`,
      args: [altered],
    });
    if (rows[0]?.status !== "voided" || Number(rows[0].in_doubt) > 0) {
      fail(
        `the altered file ${altered} ended ${rows[0]?.status ?? "missing"} after ${
          rows[0]?.in_doubt ?? 0
        } attempts in doubt: it must end voided, never in doubt`,
      );
    }
  }
  const states = await payoutStates(view);
  const paid = await bankPaid(world, view.paypal);
  const exceptions = await excepted(world);
  const open = await world.test.readClient.execute(
    `SELECT 'rail' AS kind, id FROM rail_exceptions WHERE status = 'open'
     UNION ALL SELECT 'check', id FROM check_exceptions WHERE status = 'open'`,
  );
  if (open.rows.length > 0) {
    fail(`exceptions left open after the drain: ${JSON.stringify(open.rows.map((r) => r.id))}`);
  }
  await checkReconciled(world);
  for (const [index, payout] of view.payouts.entries()) {
    const state = states.get(payout.id)!;
    const net = paid.get(payout.id.slice(-15)) ?? 0;
    const name = `payout#${index} (${payout.id})`;
    const paidAsShown = state.status === "completed" && !state.lateReturned;
    if (net > 1) {
      fail(`${name} was paid ${net} times by the banks\n${await storyOf(world, payout.id)}`);
    }
    if (exceptions.has(payout.id)) continue;
    if (paidAsShown && net !== 1) {
      fail(
        `${name} shows completed but the bank did not pay it\n${await storyOf(world, payout.id)}`,
      );
    }
    if (!paidAsShown && net !== 0) {
      fail(`${name} is ${state.status} but the bank paid it\n${await storyOf(world, payout.id)}`);
    }
    switch (state.status) {
      case "completed":
      case "canceled":
      case "modality_offered":
      case "awaiting_endorsement":
      case "pending_funds":
        break;
      case "failed":
        if (state.failureReason === null) fail(`${name} failed without a reason`);
        break;
      default: {
        const held = await heldBatchOf(view, payout.id);
        if (held === null) {
          fail(
            `${name} is ${state.status} after the drain, with no held file to explain it\n` +
              await storyOf(world, payout.id),
          );
        }
      }
    }
  }
  // The ledger's bank account is what the banks moved: paid out less collected, less wires in.
  let bankNet = -view.wiredCents;
  for (const entry of world.bank.entries) {
    if (entry.returned) continue;
    bankNet += entry.credit ? entry.amountCents : -entry.amountCents;
  }
  for (const check of world.checkBank.checks.values()) {
    for (const payment of check.payments) bankNet += payment.cents;
  }
  for (const { cents } of view.paypal.paidByPayout().values()) bankNet += cents;
  for (const { cents } of (await cardsPaid(world)).values()) bankNet += cents;
  for (const { cents } of (await instantPaid(world)).values()) bankNet += cents;
  const { rows } = await world.test.readClient.execute({
    sql: "SELECT balance_cents FROM ledger_accounts WHERE line_id = ? AND code = 'bank'",
    args: [world.ids.lineId],
  });
  const ledgerBank = Number(rows[0]?.balance_cents ?? 0);
  if (ledgerBank !== bankNet) {
    fail(`the ledger's bank account is ${ledgerBank} cents; the banks moved ${bankNet}`);
  }
  const verified = await world.cli("ledger:verify", {});
  if (!verified.ok) fail(`ledger:verify: ${verified.message}`);
  const now = await domainNow(world.test, world.ids.companyId, world.clock.now());
  for (let day = SIM_START - DAY_MS; day <= now; day += DAY_MS) {
    const date = new Date(day).toISOString().slice(0, 10);
    const tieOut = await lineTieOut(world.test.readClient, world.ids.lineId, date);
    if (tieOut && tieOut.difference !== 0) {
      fail(`tie-out of ${date} differs by ${tieOut.difference}: ${JSON.stringify(tieOut)}`);
    }
  }
}
