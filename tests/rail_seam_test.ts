/**
 * The asynchronous rail seam: a choice commits the selection and a payout.submit job; the job
 * calls the rail outside every write unit with the reference payout id + submission number and
 * records the answer through the state machine. The crash window between the call and the record
 * neither loses the submission nor pays twice.
 */
import assert from "node:assert/strict";
import { type ExternalJob, type JobHandlers, TransientJobError } from "../db/scheduler.ts";
import { WriteGroupError, type WriteUnit } from "../db/writer.ts";
import { verifyLedger } from "../lib/ledger/reports.ts";
import { payoutJobHandlers, RAIL_SUBMIT_LEASE_MS } from "../lib/payouts/jobs.ts";
import { payoutRuntime } from "../lib/payouts/settings.ts";
import { addBusinessDays } from "../lib/platform/business_days.ts";
import { FakeClock } from "../lib/platform/clock.ts";
import {
  type PayoutRail,
  type RailAnswer,
  railDirectory,
  type RailSubmission,
} from "../lib/rails/seam.ts";
import {
  DAY_SECONDS,
  MONEY_SETTINGS,
  type MoneyFixture,
  openMoneyFixture,
  START,
} from "./money_core_helpers.ts";

/** A rail in front of the stand-in rail: each test decides what happens around the real call. */
interface RailProbe {
  readonly submissions: RailSubmission[];
  /** What the stand-in received, by reference: its side of the seam, kept through a crash. */
  readonly received: Map<string, { payoutId: string; answer: RailAnswer }>;
  around?: (submission: RailSubmission, submit: () => Promise<unknown>) => Promise<void>;
}

/**
 * A per-payout rail standing in for a provider: it answers from the selection's sandbox scenario
 * (a declined card is refused; a transient failure fails the first attempt 5 s later; otherwise
 * the payment completes, an ACH one after its return window) and, as a provider does, answers a
 * repeated reference with its first answer.
 */
function standInRail(received: RailProbe["received"]): PayoutRail {
  const answerOf = (submission: RailSubmission): RailAnswer => {
    const { modality, submittedAt: now, attempt } = submission;
    const accepted = (outcome: Extract<RailAnswer, { kind: "accepted" }>["outcome"]) => ({
      kind: "accepted" as const,
      railReference: `sbx_${modality}_${submission.payoutId}_${attempt}`,
      outcome,
    });
    const completes = modality === "ach" ? addBusinessDays(now, 3) : now + 5_000;
    switch (submission.details.scenario) {
      case "declined":
        return {
          kind: "refused",
          reason: "card_declined",
          message: "the card issuer declined the payment",
        };
      case "transient_once":
        return attempt === 0
          ? accepted({ kind: "fail", at: now + 5_000, reason: "rail_unavailable" })
          : accepted({ kind: "complete", at: completes });
      default:
        return accepted({ kind: "complete", at: completes });
    }
  };
  return {
    shape: "per_payout",
    submit(submission) {
      const first = received.get(submission.reference);
      if (first) return Promise.resolve(first.answer);
      const answer = answerOf(submission);
      received.set(submission.reference, { payoutId: submission.payoutId, answer });
      return Promise.resolve(answer);
    },
  };
}

async function withProbedRail(
  fn: (m: MoneyFixture, probe: RailProbe, clock: FakeClock) => Promise<void>,
  wrap: (handlers: JobHandlers) => JobHandlers = (handlers) => handlers,
) {
  const clock = new FakeClock(START);
  const probe: RailProbe = { submissions: [], received: new Map() };
  const handlersOf = () => {
    const standIn = standInRail(probe.received);
    const rail: PayoutRail = {
      shape: "per_payout",
      async submit(submission) {
        probe.submissions.push(submission);
        let answer: unknown;
        const submit = async () => answer = await standIn.submit(submission);
        if (probe.around) await probe.around(submission, submit);
        else await submit();
        return answer as Awaited<ReturnType<PayoutRail["submit"]>>;
      },
    };
    return wrap(payoutJobHandlers(payoutRuntime("test", MONEY_SETTINGS), railDirectory(rail)));
  };
  const m = await openMoneyFixture({ handlers: handlersOf, clock });
  try {
    await fn(m, probe, clock);
  } finally {
    await m.close();
  }
}

/** An offered payout of a payee who does not act by themselves. */
async function offered(m: MoneyFixture, amountCents = 10_000): Promise<string> {
  const created = await m.create({ email: "noaction@example.test", amountCents });
  assert.ok(created.ok);
  await m.settle();
  return created.value.payouts[0].id;
}

async function rows(m: MoneyFixture, sql: string, ...args: (string | number)[]) {
  return (await m.database.readClient.execute({ sql, args })).rows.map((row) => ({ ...row }));
}

/** What the stand-in rail received for a payout, in order, its answers as JSON. */
const standInSubmissions = (probe: RailProbe, payoutId: string) =>
  Promise.resolve(
    [...probe.received].filter(([, kept]) => kept.payoutId === payoutId).map((
      [reference, kept],
    ) => ({ reference, answer: JSON.stringify(kept.answer) })),
  );

const timeline = async (m: MoneyFixture, payoutId: string) =>
  (await rows(
    m,
    "SELECT to_status FROM payout_transitions WHERE payout_id = ? ORDER BY id",
    payoutId,
  )).map((row) => row.to_status);

/** Captures console.error lines as JSON while `fn` runs. */
async function loggedErrors(fn: () => Promise<void>): Promise<Record<string, unknown>[]> {
  const original = console.error;
  const lines: Record<string, unknown>[] = [];
  console.error = (line: string) => lines.push(JSON.parse(line));
  try {
    await fn();
  } finally {
    console.error = original;
  }
  return lines;
}

/**
 * The process "stops" once the rail has answered: every write after that fails, so neither the
 * record unit nor the failure's bookkeeping commits, as after a crash. `restart` ends it.
 */
function crashAfterTheRailAnswers(m: MoneyFixture, probe: RailProbe): { restart(): void } {
  const writer = m.database.writer;
  const write = writer.write.bind(writer);
  let stopped = false;
  writer.write = <T>(unit: WriteUnit<T>): Promise<T> =>
    stopped ? Promise.reject(new Error("the process stopped")) : write(unit);
  probe.around = async (_submission, submit) => {
    await submit();
    stopped = true;
  };
  return {
    restart() {
      writer.write = write;
      probe.around = undefined;
    },
  };
}

Deno.test("a choice commits the selection and a payout.submit job; the rail is called by the job, outside every write unit", async () => {
  await withProbedRail(async (m, probe) => {
    await m.fund(100_000);
    const id = await offered(m, 25_000);
    const selected = await m.select(id, 1, { accountNumber: "000123456789" });
    assert.ok(selected.ok);
    assert.equal(selected.value.status, "modality_selected");
    assert.equal(probe.submissions.length, 0, "the choice does not call the rail");
    assert.deepEqual(
      await rows(
        m,
        `SELECT kind, due_at, payload FROM scheduled_jobs
         WHERE subject_id = ? AND done_at IS NULL AND kind = 'payout.submit'`,
        id,
      ),
      [{ kind: "payout.submit", due_at: m.now(), payload: '{"submission":1}' }],
    );
    assert.deepEqual(await rows(m, "SELECT submission_count FROM payouts WHERE id = ?", id), [
      { submission_count: 1 },
    ]);
    assert.deepEqual(await standInSubmissions(probe, id), []);
    assert.deepEqual((await m.balances()).reserved, 25_000, "still held, not sent");

    // Inside a write unit the rail's own write would wait for a group that cannot start.
    const ownWrites: string[] = [];
    probe.around = async (submission, submit) => {
      const wrote = await Promise.race([
        m.database.writer.write(async (tx) => {
          await tx.execute("SELECT 1");
          return "written";
        }),
        new Promise((resolve) => setTimeout(() => resolve("waited: inside a write unit"), 2_000)),
      ]);
      ownWrites.push(`${submission.reference}: ${wrote}`);
      await submit();
    };
    await m.settle();
    assert.deepEqual(ownWrites, [`${id}-1: written`]);
    assert.deepEqual(probe.submissions.map((s) => [s.reference, s.attempt, s.submittedAt]), [
      [`${id}-1`, 0, m.now()],
    ]);
    const payout = await m.payout(id);
    assert.deepEqual([payout.status, payout.rail_reference], ["funds_sent", `sbx_ach_${id}_0`]);
    assert.deepEqual((await standInSubmissions(probe, id)).map((row) => row.reference), [
      `${id}-1`,
    ]);
    assert.deepEqual(await m.events(id), ["created", "offered", "selected", "processing"]);
    const b = await m.balances();
    assert.deepEqual([b.available, b.reserved, b.in_transit], [75_000, 0, 25_000]);
  });
});

Deno.test("crash window: the rail accepted, the record never committed; after the lease the same reference is submitted again and the payout is sent once", async () => {
  await withProbedRail(async (m, probe, clock) => {
    await m.fund(100_000);
    const id = await offered(m, 40_000);
    assert.ok((await m.select(id, 1, { accountNumber: "000123456789" })).ok);
    const crash = crashAfterTheRailAnswers(m, probe);
    const logged = await loggedErrors(async () => {
      await assert.rejects(m.settle(), /the process stopped/);
    });
    assert.equal(logged.length, 1);
    assert.equal(logged[0].outcome, "unrecorded");
    crash.restart();

    // The bank's side kept the submission; ours still waits, claimed until the lease ends.
    assert.deepEqual((await standInSubmissions(probe, id)).map((row) => row.reference), [
      `${id}-1`,
    ]);
    assert.equal((await m.payout(id)).status, "modality_selected");
    assert.equal(await m.settle(), 0, "nobody runs a job while its claim holds");
    assert.equal(probe.submissions.length, 1);

    clock.advance(RAIL_SUBMIT_LEASE_MS);
    assert.equal(await m.settle(), 1);
    assert.deepEqual(probe.submissions.map((s) => s.reference), [`${id}-1`, `${id}-1`]);
    const submissions = await standInSubmissions(probe, id);
    assert.equal(submissions.length, 1, "one submission at the rail");
    const payout = await m.payout(id);
    assert.deepEqual([payout.status, payout.rail_reference], ["funds_sent", `sbx_ach_${id}_0`]);
    assert.deepEqual(await timeline(m, id), [
      "created",
      "modality_offered",
      "modality_selected",
      "funds_sent",
    ]);
    assert.deepEqual(await m.events(id), ["created", "offered", "selected", "processing"]);
    assert.deepEqual(
      await rows(
        m,
        "SELECT kind, count(*) AS n FROM ledger_transactions WHERE payout_id = ? GROUP BY kind ORDER BY kind",
        id,
      ),
      [{ kind: "payout.hold", n: 1 }, { kind: "payout.send", n: 1 }],
    );
    assert.equal((await m.balances()).in_transit, 40_000);

    await m.advance(3 * DAY_SECONDS);
    assert.equal((await m.payout(id)).status, "completed");
    assert.deepEqual(await m.events(id), [
      "created",
      "offered",
      "selected",
      "processing",
      "completed",
    ]);
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  });
});

Deno.test("a record that fails once on storage is retried with the same reference; the rail keeps one submission", async () => {
  let failures = 1;
  const failRecordOnce = (handlers: JobHandlers): JobHandlers => {
    const submit = handlers["payout.submit"] as ExternalJob<unknown, unknown>;
    return {
      ...handlers,
      "payout.submit": {
        ...submit,
        record: (tx, job, answer) => {
          if (failures-- > 0) throw new WriteGroupError(new Error("disk I/O error"));
          return submit.record(tx, job, answer);
        },
      },
    };
  };
  await withProbedRail(async (m, probe) => {
    await m.fund(100_000);
    const id = await offered(m);
    assert.ok((await m.select(id, 1, { accountNumber: "000123456789" })).ok);
    const logged = await loggedErrors(() => m.settle().then(() => {}));
    assert.deepEqual(logged.map((line) => [line.kind, line.outcome, line.error]), [
      ["payout.submit", "retried", "write group was not committed: disk I/O error"],
    ]);
    assert.equal((await m.payout(id)).status, "modality_selected");
    await m.advance(5); // the first retry of a job comes 5 s later
    assert.deepEqual(probe.submissions.map((s) => s.reference), [`${id}-1`, `${id}-1`]);
    assert.equal((await standInSubmissions(probe, id)).length, 1);
    assert.equal((await m.payout(id)).status, "funds_sent");
    assert.deepEqual(await m.events(id), ["created", "offered", "selected", "processing"]);
  }, failRecordOnce);
});

Deno.test("a rail that cannot be reached is asked again with the same reference", async () => {
  await withProbedRail(async (m, probe) => {
    await m.fund(100_000);
    const id = await offered(m);
    assert.ok((await m.select(id, 6, {})).ok);
    let unreachable = 1;
    probe.around = async (_submission, submit) => {
      if (unreachable-- > 0) throw new TransientJobError("connection refused");
      await submit();
    };
    const logged = await loggedErrors(() => m.settle().then(() => {}));
    assert.deepEqual(logged.map((line) => [line.kind, line.outcome]), [[
      "payout.submit",
      "retried",
    ]]);
    assert.deepEqual(await standInSubmissions(probe, id), [], "nothing reached the rail");
    await m.advance(5);
    assert.deepEqual(probe.submissions.map((s) => s.reference), [`${id}-1`, `${id}-1`]);
    assert.equal((await standInSubmissions(probe, id)).length, 1);
    assert.equal((await m.payout(id)).status, "funds_sent");
  });
});

Deno.test("a refused submission fails the payout and offers the methods again, as before the seam", async () => {
  await withProbedRail(async (m, probe) => {
    await m.fund(100_000);
    const created = await m.create({ email: "fail+vcc@example.test", amountCents: 12_000 });
    assert.ok(created.ok);
    const id = created.value.payouts[0].id;
    await m.settle(); // offered; the test payee picks a virtual card; its submission is refused
    assert.deepEqual(probe.submissions.map((s) => [s.reference, s.details.scenario]), [
      [`${id}-1`, "declined"],
    ]);
    const payout = await m.payout(id);
    assert.deepEqual(
      [payout.status, payout.failure_reason, payout.payment_method_id, payout.submission_count],
      ["modality_offered", "card_declined", null, 1],
    );
    assert.deepEqual(await m.events(id), ["created", "offered", "selected", "failed", "offered"]);
    assert.deepEqual(await timeline(m, id), [
      "created",
      "modality_offered",
      "modality_selected",
      "failed",
      "modality_offered",
    ]);
    assert.deepEqual(
      (await standInSubmissions(probe, id)).map((row) => JSON.parse(String(row.answer))),
      [{
        kind: "refused",
        reason: "card_declined",
        message: "the card issuer declined the payment",
      }],
    );
    const b = await m.balances();
    assert.deepEqual([b.available, b.reserved, b.in_transit], [88_000, 12_000, 0]);

    // Chosen again: a new submission with its own reference.
    assert.ok((await m.select(id, 1, { accountNumber: "000123456789" })).ok);
    await m.settle();
    assert.equal(probe.submissions.at(-1)!.reference, `${id}-2`);
    assert.equal((await m.payout(id)).status, "funds_sent");
  });
});

Deno.test("an automatic retry after the rail's transient failure is a new submission with the next number", async () => {
  await withProbedRail(async (m, probe) => {
    await m.fund(100_000);
    const id = await offered(m, 5_000);
    assert.ok((await m.select(id, 1, { accountNumber: "000222222227" })).ok);
    await m.settle();
    assert.equal((await m.payout(id)).status, "funds_sent");
    await m.advance(10); // the transient failure arrives after 5 s and is retried at once
    assert.deepEqual(probe.submissions.map((s) => [s.reference, s.attempt]), [
      [`${id}-1`, 0],
      [`${id}-2`, 1],
    ]);
    assert.deepEqual(
      (await standInSubmissions(probe, id)).map((row) => [
        row.reference,
        JSON.parse(String(row.answer)).railReference,
      ]),
      [[`${id}-1`, `sbx_ach_${id}_0`], [`${id}-2`, `sbx_ach_${id}_1`]],
    );
    const payout = await m.payout(id);
    assert.deepEqual(
      [payout.status, payout.retry_count, payout.submission_count, payout.rail_reference],
      ["funds_sent", 1, 2, `sbx_ach_${id}_1`],
    );
    assert.deepEqual(await m.events(id), [
      "created",
      "offered",
      "selected",
      "processing",
      "failed",
      "processing",
    ]);
  });
});

Deno.test("a payout whose retry is at the rail cannot be canceled until the rail answers; the answer is applied once", async () => {
  await withProbedRail(async (m, probe) => {
    await m.fund(100_000);
    const id = await offered(m, 5_000);
    assert.ok((await m.select(id, 1, { accountNumber: "000222222227" })).ok);
    await m.settle();
    await m.advance(4);
    // The company tries to cancel the failed payout while its retry is being submitted.
    const refusals: (string | undefined)[] = [];
    probe.around = async (submission, submit) => {
      if (submission.reference === `${id}-2`) {
        const refused = await m.cancel(id);
        refusals.push(refused.ok ? undefined : refused.code);
      }
      await submit();
    };
    const logged = await loggedErrors(() => m.advance(1).then(() => {}));
    assert.deepEqual(logged, []);
    assert.deepEqual(refusals, ["payout_in_flight"]);
    const payout = await m.payout(id);
    assert.deepEqual(
      [payout.status, payout.submission_count, payout.rail_reference],
      ["funds_sent", 2, `sbx_ach_${id}_1`],
    );
    assert.deepEqual(await timeline(m, id), [
      "created",
      "modality_offered",
      "modality_selected",
      "funds_sent",
      "failed",
      "funds_sent",
    ]);
    const b = await m.balances();
    assert.deepEqual([b.available, b.reserved, b.in_transit], [95_000, 0, 5_000]);
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  });
});
