/**
 * The one batch-rail engine's rules, on the rails that run on it (issue 28's cases 3, 4, 7 and 9):
 * hand file flows (no download before a release; a downloaded file is possibly sent), the window
 * of every held file, overflow that stays in its cutoff, real time in live, one in-doubt
 * resolution for every rail with dual control in live, and a crashed cutoff that resumes within
 * seconds of its node's restart.
 */
import assert from "node:assert/strict";
import type { InStatement } from "@libsql/client";
import type { Database } from "../db/client.ts";
import { type JobHandlers, Scheduler } from "../db/scheduler.ts";
import type { WriteUnit } from "../db/writer.ts";
import { readAchFileContent, voidAchFile } from "../lib/ach/files_service.ts";
import { readCheckFileContent } from "../lib/checks/files_service.ts";
import { voidCheckAudited } from "../lib/checks/voids.ts";
import { receiveWire } from "../lib/funding/store.ts";
import { verifyLedger } from "../lib/ledger/reports.ts";
import { approveApproval } from "../lib/operators/approvals.ts";
import { approvedActions } from "../lib/admin/approved_actions.ts";
import { runAdminCommand } from "../lib/admin/commands.ts";
import { selectMethod } from "../lib/payouts/jobs.ts";
import { jobHandlersOf } from "../lib/payouts/runtime.ts";
import { FakeClock } from "../lib/platform/clock.ts";
import type { Environment } from "../lib/platform/config.ts";
import { markInDoubt } from "../lib/rails/batch.ts";
import { resolveBatch } from "../lib/rails/batches_service.ts";
import type { AppDeps } from "../routes/context.ts";
import { batches, FIRST_CUTOFF, quietly, rows, ScriptedBank, statuses } from "./ach_helpers.ts";
import { chooseCheck, loadEmptySanctionsList, storeCheckSettings } from "./checks_helpers.ts";
import { testSecretBox } from "./helpers.ts";
import {
  MONEY_SETTINGS,
  moneyBatchDeps,
  type MoneyFixture,
  openMoneyFixture,
  START,
} from "./money_core_helpers.ts";
import { makeOperator, operatorDepsOf } from "./operator_helpers.ts";
import { choosePaypal, configurePaypal } from "./paypal_helpers.ts";
import { PaypalContractServer } from "./paypal_contract_server.ts";

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;
/** The 10:30 cutoff's window: 30 minutes. */
const FIRST_WINDOW_ENDS = FIRST_CUTOFF + 30 * MINUTE_MS;
/** Files over $100,000.00 wait for a second admin in live. */
const OVER_LIMIT_CENTS = 15_000_000;

type Actor = { operator: { id: string; email: string }; origin: string };

interface LiveRail {
  readonly m: MoneyFixture;
  readonly bank: ScriptedBank;
  readonly clock: FakeClock;
  readonly handlers: JobHandlers;
  readonly alice: Actor;
  /** Alice's session, for the commands she runs. */
  readonly aliceToken: string;
  /** Bruno approves what Alice asked for. */
  approve(approvalId: string): Promise<void>;
  /** Runs what falls due until `at` (live: the time the jobs run). */
  runUntil(at: number): Promise<void>;
}

/**
 * A live company with bank settings (a check account, no SFTP: files wait for a download) and a
 * loaded sanctions list, funded with $1,000,000.00; `scripted` hands ACH files to a scripted bank.
 */
async function withLiveRail(
  fn: (f: LiveRail) => Promise<void>,
  options: {
    scripted?: boolean;
    batchEntriesMax?: number;
    wrapDatabase?: (database: Database) => Database;
  } = {},
): Promise<void> {
  const clock = new FakeClock(START);
  const bank = new ScriptedBank();
  let handlers: JobHandlers = {};
  const m = await openMoneyFixture({
    environment: "live",
    clock,
    handlers: (database) =>
      handlers = jobHandlersOf(
        "live",
        {
          ...MONEY_SETTINGS,
          rails: {
            achTransport: options.scripted ? bank : undefined,
            batchEntriesMax: options.batchEntriesMax,
          },
        },
        options.wrapDatabase?.(database) ?? database,
        testSecretBox,
      ),
  });
  try {
    await storeCheckSettings(m, "live");
    await loadEmptySanctionsList(m);
    const funding = await m.fund(100_000_000);
    await m.database.writer.write((tx) => receiveWire(tx, funding, m.now()));
    const deps = {
      databases: { test: m.database, live: m.database },
      secretBox: testSecretBox,
      config: { dev: false },
    } as unknown as AppDeps;
    const alice = await makeOperator(deps, { email: "alice@ops.test", role: "admin" }, START);
    const bruno = await makeOperator(deps, { email: "bruno@ops.test", role: "admin" }, START);
    const actor = (op: { id: string; email: string }) => ({
      operator: { id: op.id, email: op.email },
      origin: "cli",
    });
    await fn({
      m,
      bank,
      clock,
      handlers,
      alice: actor(alice),
      aliceToken: String(alice.token),
      async approve(approvalId) {
        const approved = await approveApproval(
          operatorDepsOf(deps),
          actor(bruno),
          approvalId,
          m.now(),
          approvedActions,
        );
        assert.ok(approved.ok, approved.ok ? "" : approved.message);
        await m.settle();
      },
      async runUntil(at) {
        clock.set(Math.max(clock.now(), at));
        await m.advance((at - m.now()) / 1000);
      },
    });
  } finally {
    await m.close();
  }
}

/** Live payouts that chose ACH with entered bank details, queued for the next cutoff. */
async function chooseLiveAch(m: MoneyFixture, amounts: number[]): Promise<string[]> {
  const created = await m.create(
    amounts.map((amountCents, i) => ({
      payeeUuid: `p${i}`,
      amountCents,
      allowedPaymentMethodIds: [1],
    })),
  );
  if (!created.ok) throw new Error(created.message);
  await m.settle();
  const ids = created.value.payouts.map((payout) => payout.id);
  for (const id of ids) {
    const selected = await m.database.writer.write(async (tx) =>
      selectMethod(tx, id, {
        paymentMethodId: 1,
        details: { accountNumber: "000123456789" },
        kept: {
          routing_number: "021000021",
          account_type: "checking",
          account_sealed: await testSecretBox.sealText("000123456789"),
        },
      }, m.now())
    );
    if (!selected.ok) throw new Error(selected.message);
  }
  await m.settle();
  return ids;
}

const fileDeps = (
  m: MoneyFixture,
) => (moneyBatchDeps(m.database, "live"));

const entryStatuses = async (m: MoneyFixture) =>
  (await rows(m, "SELECT reference, status FROM rail_batch_entries ORDER BY rowid")).map((row) =>
    `${row.reference}:${row.status}`
  );

Deno.test("case 3: a live file awaiting its release cannot be downloaded, an ACH file or a positive-pay file, until a second admin approves", async () => {
  await withLiveRail(async ({ m, alice, approve }) => {
    await chooseLiveAch(m, [OVER_LIMIT_CENTS]);
    const [check] = await chooseCheck(m, [OVER_LIMIT_CENTS]);
    await m.advance(30 * 60);
    const [ach] = (await batches(m)).filter((batch) => batch.rail === "ach");
    assert.equal(ach.status, "built");
    const refused = await readAchFileContent(fileDeps(m), String(ach.id), m.now());
    assert.deepEqual(refused.ok ? null : [refused.code, refused.field], [
      "ach_file_awaits_release",
      "file",
    ]);
    const [positivePay] = (await batches(m)).filter((b) => b.rail === "check_positive_pay");
    const checkRefused = await readCheckFileContent(fileDeps(m), String(positivePay.id), m.now());
    assert.deepEqual(checkRefused.ok ? null : checkRefused.code, "check_file_awaits_release");
    assert.deepEqual(
      await rows(m, "SELECT count(*) AS n FROM rail_batches WHERE downloaded_at IS NOT NULL"),
      [{ n: 0 }],
      "a refused download is not a download",
    );
    assert.equal((await m.payout(check)).status, "modality_selected");

    // Released by a second admin, the file can be downloaded (and from then on may be at the bank).
    const requested = await resolveRelease(m, alice, String(ach.id));
    await approve(requested);
    const downloaded = await readAchFileContent(fileDeps(m), String(ach.id), m.now());
    assert.ok(downloaded.ok);
    assert.deepEqual(
      await rows(m, "SELECT id FROM rail_batches WHERE downloaded_at IS NOT NULL"),
      [{ id: ach.id }],
    );
  });
});

async function resolveRelease(m: MoneyFixture, actor: Actor, fileId: string): Promise<string> {
  const { requestAchFileRelease } = await import("../lib/ach/files_service.ts");
  const requested = await requestAchFileRelease(fileDeps(m), actor, fileId, m.now());
  assert.ok(requested.ok && requested.value.approvalId !== null);
  return requested.value.approvalId!;
}

Deno.test("case 3: a downloaded file that is voided goes in doubt: its entries are not queued again until a second admin resolves it as not received", async () => {
  await withLiveRail(async ({ m, alice, approve }) => {
    const ids = await chooseLiveAch(m, [60_000, 50_000]);
    await m.advance(30 * 60);
    const [file] = await batches(m);
    assert.equal(file.status, "built");
    const downloaded = await readAchFileContent(fileDeps(m), String(file.id), m.now());
    assert.ok(downloaded.ok);

    // Uploaded by hand, never marked sent, then voided alone: it may be at the bank.
    const voided = await voidAchFile(fileDeps(m), alice, String(file.id), m.now());
    assert.deepEqual(voided, {
      ok: true,
      value: { fileId: file.id, status: "in_doubt", approvalId: null },
    });
    assert.deepEqual(await entryStatuses(m), ids.map((id) => `${id}-1:batched`));
    await m.advance(24 * 3_600);
    assert.equal((await batches(m)).length, 1, "no cutoff sends the same payouts again");
    assert.deepEqual(await statuses(m, ids), ["modality_selected", "modality_selected"]);

    // The bank says it has nothing: a second admin confirms, and only then are they queued again.
    const resolved = await resolveBatch(
      fileDeps(m),
      alice,
      String(file.id),
      "not_received",
      m.now(),
    );
    assert.ok(resolved.ok && resolved.value.approvalId !== null);
    assert.equal((await batches(m))[0].status, "in_doubt", "waits for the second admin");
    await approve(resolved.value.approvalId!);
    assert.equal((await batches(m))[0].status, "voided");
    assert.deepEqual(await entryStatuses(m), [
      `${ids[0]}-1:voided`,
      `${ids[1]}-1:voided`,
      `${ids[0]}-2:queued`,
      `${ids[1]}-2:queued`,
    ]);
    assert.deepEqual(
      await rows(
        m,
        "SELECT action, operator_email FROM audit_log WHERE action LIKE 'ach:%' ORDER BY seq",
      ),
      [
        { action: "ach:void", operator_email: "alice@ops.test" },
        { action: "ach:resolve", operator_email: "bruno@ops.test" },
      ],
    );
  });
});

Deno.test("case 4: a held file (no SFTP, never downloaded) is voided at the end of its window and its entries go in the next cutoff's file", async () => {
  await withLiveRail(async ({ m, runUntil }) => {
    const ids = await chooseLiveAch(m, [7_000]);
    await m.advance(30 * 60);
    assert.deepEqual((await batches(m)).map((b) => b.status), ["built"]);
    await quietly(() => m.advance(30 * 60));
    const [voided] = await batches(m);
    assert.equal(voided.status, "voided");
    assert.match(String(voided.error), /window closed .*download and mark-sent/);
    assert.deepEqual(await entryStatuses(m), [`${ids[0]}-1:voided`, `${ids[0]}-2:queued`]);
    assert.deepEqual(
      await rows(m, "SELECT action, origin FROM audit_log WHERE action = 'ach:void'"),
      [{ action: "ach:void", origin: "system" }],
    );
    // The 16:00 cutoff builds the next file, effective the next banking day.
    await quietly(() => runUntil(START + 6 * HOUR_MS + MINUTE_MS));
    const files = await rows(
      m,
      "SELECT b.status, a.effective_date FROM rail_batches b JOIN ach_files a ON a.batch_id = b.id ORDER BY b.rowid",
    );
    assert.deepEqual(files.map((f) => [f.status, f.effective_date]).slice(0, 2), [
      ["voided", "2026-01-05"],
      ["built", "2026-01-06"],
    ]);
  });
});

Deno.test("case 4: a file over the approval limit never approved is voided at the end of its window, never sent", async () => {
  await withLiveRail(async ({ m, bank, runUntil }) => {
    const [id] = await chooseLiveAch(m, [OVER_LIMIT_CENTS]);
    await runUntil(FIRST_CUTOFF);
    assert.deepEqual((await batches(m)).map((b) => b.status), ["built"]);
    await quietly(() => runUntil(FIRST_WINDOW_ENDS));
    const [voided] = await batches(m);
    assert.equal(voided.status, "voided");
    assert.match(String(voided.error), /its release was not approved/);
    assert.equal(bank.received.length, 0);
    assert.equal((await m.payout(id)).status, "modality_selected");
  }, { scripted: true });
});

/** The database with a build read that waits for `gate` once, as a build still running. */
function slowBuild(database: Database, gate: { opened: Promise<void>; reached: () => void }) {
  let waited = false;
  const readClient = new Proxy(database.readClient, {
    get(target, property, receiver) {
      if (property !== "execute") return Reflect.get(target, property, receiver);
      return async (statement: InStatement) => {
        const sql = typeof statement === "string" ? statement : statement.sql;
        if (!waited && sql.includes("FROM rail_batch_entries e")) {
          waited = true;
          gate.reached();
          await gate.opened;
        }
        return await target.execute(statement);
      };
    },
  });
  return { ...database, readClient, writer: database.writer, read: database.read };
}

Deno.test("case 4: overflow stays in its cutoff when another node runs the cutoff's next file while the first is still being built", async () => {
  let open = () => {};
  let reached = () => {};
  const gate = {
    opened: new Promise<void>((resolve) => open = resolve),
    reached: () => reached(),
  };
  const buildStarted = new Promise<void>((resolve) => reached = resolve);
  await withLiveRail(async ({ m, bank, clock, handlers }) => {
    const ids = await chooseLiveAch(m, [1_000, 2_000, 3_000]);
    clock.set(FIRST_CUTOFF);
    const { runDueJobs } = await import("../db/scheduler.ts");
    // Node A takes the cutoff: a full file of two, its build still running...
    const nodeA = runDueJobs(m.database, m.companyId, FIRST_CUTOFF, handlers, { clock });
    await buildStarted;
    // ... while node B finds the overflow's job of the same cutoff due.
    await runDueJobs(m.database, m.companyId, FIRST_CUTOFF, handlers, { clock });
    open();
    await nodeA;
    clock.set(FIRST_CUTOFF + 10_000);
    await runDueJobs(m.database, m.companyId, FIRST_CUTOFF + 10_000, handlers, { clock });
    const files = await rows(
      m,
      `SELECT b.status, b.entry_count, b.cutoff_at, a.effective_date FROM rail_batches b
         JOIN ach_files a ON a.batch_id = b.id ORDER BY b.rowid`,
    );
    assert.deepEqual(files, [
      {
        status: "transmitted",
        entry_count: 2,
        cutoff_at: FIRST_CUTOFF,
        effective_date: "2026-01-05",
      },
      {
        status: "transmitted",
        entry_count: 1,
        cutoff_at: FIRST_CUTOFF,
        effective_date: "2026-01-05",
      },
    ]);
    assert.equal(bank.received.length, 2);
    assert.deepEqual(await statuses(m, ids), ["funds_sent", "funds_sent", "funds_sent"]);
  }, { scripted: true, batchEntriesMax: 2, wrapDatabase: (database) => slowBuild(database, gate) });
});

Deno.test("case 7: five days late in live, the overdue cutoff sends no late file; its entries go in the next cutoff after the real time, stamped with it", async () => {
  await withLiveRail(async ({ m, bank, runUntil }) => {
    const ids = await chooseLiveAch(m, [4_000, 5_000]);
    // The service was down: the clock is five days past the 10:30 cutoff when the jobs run.
    const late = START + 5 * DAY_MS; // Saturday 2026-01-10, 10:00 in New York
    await quietly(() => runUntil(late));
    assert.deepEqual(await batches(m), [], "no file for a cutoff whose window closed");
    assert.equal(bank.received.length, 0);
    assert.deepEqual(await statuses(m, ids), ["modality_selected", "modality_selected"]);
    const nextCutoff = Date.UTC(2026, 0, 12, 15, 30); // Monday 2026-01-12, 10:30 in New York
    assert.deepEqual(
      await rows(
        m,
        "SELECT due_at FROM scheduled_jobs WHERE kind = 'rail.cutoff' AND done_at IS NULL",
      ),
      [{ due_at: nextCutoff }],
    );
    await runUntil(nextCutoff + MINUTE_MS);
    const files = await rows(
      m,
      `SELECT b.status, b.created_at, b.transmitted_at, a.effective_date, a.bank_date
         FROM rail_batches b JOIN ach_files a ON a.batch_id = b.id`,
    );
    assert.deepEqual(files, [{
      status: "transmitted",
      created_at: nextCutoff + MINUTE_MS,
      transmitted_at: nextCutoff + MINUTE_MS,
      effective_date: "2026-01-12",
      bank_date: "2026-01-12",
    }]);
    assert.deepEqual(await statuses(m, ids), ["funds_sent", "funds_sent"]);
  }, { scripted: true });
});

Deno.test("case 7: a built file whose transmission runs five days late is voided and its entries queued again, at the real time, never sent late", async () => {
  await withLiveRail(async ({ m, bank, runUntil }) => {
    const ids = await chooseLiveAch(m, [4_000]);
    bank.answers.push({ kind: "not_uploaded", reason: "connection refused" });
    await quietly(() => runUntil(FIRST_CUTOFF));
    assert.deepEqual((await batches(m)).map((b) => b.status), ["built"]);
    // The retry falls due 5 s later, but the service runs it five days later.
    const late = FIRST_CUTOFF + 5 * DAY_MS;
    await quietly(() => runUntil(late));
    const [voided] = await batches(m);
    assert.equal(voided.status, "voided");
    assert.equal(voided.transmitted_at, null);
    assert.equal(bank.received.length, 1, "only the refused first attempt");
    assert.deepEqual(await entryStatuses(m), [`${ids[0]}-1:voided`, `${ids[0]}-2:queued`]);
    assert.deepEqual(
      await rows(m, "SELECT at FROM audit_log WHERE action = 'ach:void'"),
      [{ at: late }],
      "stamped with the time it ran",
    );
    assert.deepEqual(
      await rows(m, "SELECT attempt, outcome, detail FROM rail_batch_attempts ORDER BY attempt"),
      [{ attempt: 1, outcome: "not_transmitted", detail: "connection refused" }],
    );
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  }, { scripted: true });
});

Deno.test("case 9: an in-doubt check file is resolved through the one resolution of every rail, by a second admin in live", async () => {
  await withLiveRail(async ({ m, alice, approve }) => {
    const [id] = await chooseCheck(m, [4_000]);
    await m.advance(3_600);
    const [positivePay] = (await batches(m)).filter((b) => b.rail === "check_positive_pay");
    await quietly(() => m.database.writer.write((tx) => markInDoubt(tx, String(positivePay.id))));
    const requested = await resolveBatch(
      fileDeps(m),
      alice,
      String(positivePay.id),
      "transmitted",
      m.now(),
    );
    assert.ok(requested.ok && requested.value.approvalId !== null, JSON.stringify(requested));
    assert.equal((await m.payout(id)).status, "modality_selected");
    await approve(requested.value.approvalId!);
    const [resolved] = (await batches(m)).filter((b) => b.rail === "check_positive_pay");
    assert.equal(resolved.status, "transmitted");
    assert.equal((await m.payout(id)).status, "funds_sent");
    assert.deepEqual(
      await rows(m, "SELECT operator_email FROM audit_log WHERE action = 'checks:resolve'"),
      [{ operator_email: "bruno@ops.test" }],
    );
  });
});

Deno.test("case 9: a crashed cutoff resumes within seconds of its node's restart, not after the claim's lease", async () => {
  await withLiveRail(async ({ m, bank, clock, handlers }) => {
    const ids = await chooseLiveAch(m, [4_000, 5_000]);
    const databases = { live: m.database } as Record<Environment, Database>;
    const scheduler = (node: string) =>
      new Scheduler(databases, { live: handlers } as Record<Environment, JobHandlers>, clock, {
        leaseHolder: node,
      });
    // Node A claims the cutoff, and its process stops in the middle of the cutoff.
    const writer = m.database.writer;
    const write = writer.write.bind(writer);
    let stopped = false;
    writer.write = async <T>(unit: WriteUnit<T>): Promise<T> => {
      if (stopped) throw new Error("the process stopped");
      const result = await write(unit);
      const { rows } = await m.database.readClient.execute("SELECT 1 FROM rail_batches");
      if (rows.length > 0) stopped = true;
      return result;
    };
    clock.set(FIRST_CUTOFF);
    await quietly(() => assert.rejects(scheduler("node_a").sweep(), /the process stopped/));
    writer.write = write;
    assert.deepEqual((await batches(m)).map((b) => b.status), ["built"]);

    // Another node must wait for the claim's lease: a few seconds later, nothing moved.
    assert.equal(await scheduler("node_b").takeOverOwnClaims(), 0);
    clock.set(FIRST_CUTOFF + 2_000);
    await scheduler("node_b").sweep();
    assert.equal(bank.received.length, 0);

    // Node A restarted on its DATA_DIR: its claims are its own dead ones, taken over at once.
    const restarted = scheduler("node_a");
    assert.equal(await quietly(() => restarted.takeOverOwnClaims()), 1);
    clock.set(FIRST_CUTOFF + 4_000);
    await restarted.sweep();
    assert.deepEqual((await batches(m)).map((b) => b.status), ["transmitted"]);
    assert.equal(bank.received.length, 1);
    assert.deepEqual(await statuses(m, ids), ["funds_sent", "funds_sent"]);
  }, { scripted: true });
});

/**
 * The database whose first write through its writer (a cutoff's first claim page) waits for
 * `gate` once, as a claim still running.
 */
function slowClaim(database: Database, gate: { opened: Promise<void>; reached: () => void }) {
  let waited = false;
  const writer = new Proxy(database.writer, {
    get(target, property, receiver) {
      if (property !== "write") return Reflect.get(target, property, receiver);
      return async <T>(unit: WriteUnit<T>): Promise<T> => {
        if (!waited) {
          waited = true;
          gate.reached();
          await gate.opened;
        }
        return await target.write(unit);
      };
    },
  });
  return { ...database, writer };
}

/** A gate a test opens, and the promise that its first waiter reached it. */
function claimGate() {
  let open = () => {};
  let reached = () => {};
  const gate = {
    opened: new Promise<void>((resolve) => open = resolve),
    reached: () => reached(),
  };
  const claimStarted = new Promise<void>((resolve) => reached = resolve);
  return { gate, open: () => open(), claimStarted };
}

/** Live PayPal settings for the fixture's company, on a contract server. */
async function withLivePaypal(
  m: MoneyFixture,
  fn: (server: PaypalContractServer) => Promise<void>,
): Promise<void> {
  const server = await PaypalContractServer.start();
  try {
    await configurePaypal(m.database, server, m.companyId, m.now());
    // Off the five-minute boundary: the payouts wait for the next cutoff.
    await m.advance(60);
    await fn(server);
  } finally {
    await server.close();
  }
}

/** `rails:release --file <batchId>`, as the operator of `sessionToken` runs it. */
const releaseAs = (m: MoneyFixture, sessionToken: string, batchId: string) =>
  runAdminCommand(
    {
      databases: { test: m.database, live: m.database },
      now: m.now(),
      keyGraceSeconds: 86_400,
      secretBox: testSecretBox,
      runtimeSettings: MONEY_SETTINGS,
      dev: false,
      origin: "cli",
      sessionToken,
      input: {},
    },
    "rails:release",
    { file: batchId },
  );

/** The next five-minute PayPal cutoff after START + 60 s. */
const PAYPAL_CUTOFF = START + 5 * MINUTE_MS;

const batchesOf = (m: MoneyFixture, rail: string) =>
  rows(
    m,
    "SELECT status, entry_count, cutoff_at, error FROM rail_batches WHERE rail = ? ORDER BY rowid",
    rail,
  );

Deno.test("case 4, every rail: overflow of a check cutoff stays in its cutoff when another node runs the cutoff's next file while the first is still being claimed", async () => {
  const { gate, open, claimStarted } = claimGate();
  await withLiveRail(async ({ m, clock, handlers }) => {
    await chooseCheck(m, [1_000, 2_000, 3_000]);
    clock.set(FIRST_CUTOFF);
    const { runDueJobs } = await import("../db/scheduler.ts");
    // Node A takes the cutoff: a full file of two, its claim still running...
    const nodeA = runDueJobs(m.database, m.companyId, FIRST_CUTOFF, handlers, { clock });
    await claimStarted;
    // ... while node B finds the overflow's job of the same cutoff due.
    await runDueJobs(m.database, m.companyId, FIRST_CUTOFF, handlers, { clock });
    open();
    await nodeA;
    clock.set(FIRST_CUTOFF + 10_000);
    await runDueJobs(m.database, m.companyId, FIRST_CUTOFF + 10_000, handlers, { clock });
    assert.deepEqual(
      (await batchesOf(m, "check_positive_pay")).map((b) => [b.entry_count, b.cutoff_at]),
      [[2, FIRST_CUTOFF], [1, FIRST_CUTOFF]],
    );
    assert.deepEqual(
      (await rows(m, "SELECT status FROM rail_batch_entries ORDER BY rowid")).map((e) => e.status),
      ["batched", "batched", "batched"],
    );
  }, { batchEntriesMax: 2, wrapDatabase: (database) => slowClaim(database, gate) });
});

Deno.test("case 4, every rail: overflow of a PayPal cutoff stays in its cutoff when another node runs the cutoff's next batch while the first is still being claimed", async () => {
  const { gate, open, claimStarted } = claimGate();
  await withLiveRail(async ({ m, clock, handlers }) => {
    await withLivePaypal(m, async (server) => {
      const ids = [];
      for (const [i, amount] of [1_000, 2_000, 3_000].entries()) {
        ids.push(await choosePaypal(m, "paypal", amount, `p${i}`));
      }
      clock.set(PAYPAL_CUTOFF);
      const { runDueJobs } = await import("../db/scheduler.ts");
      const nodeA = runDueJobs(m.database, m.companyId, PAYPAL_CUTOFF, handlers, { clock });
      await claimStarted;
      await runDueJobs(m.database, m.companyId, PAYPAL_CUTOFF, handlers, { clock });
      open();
      await nodeA;
      clock.set(PAYPAL_CUTOFF + 10_000);
      await runDueJobs(m.database, m.companyId, PAYPAL_CUTOFF + 10_000, handlers, { clock });
      assert.deepEqual(
        (await batchesOf(m, "paypal")).map((b) => [b.status, b.entry_count, b.cutoff_at]),
        [["transmitted", 2, PAYPAL_CUTOFF], ["transmitted", 1, PAYPAL_CUTOFF]],
      );
      assert.equal(server.batches.size, 2);
      assert.deepEqual(await statuses(m, ids), ["funds_sent", "funds_sent", "funds_sent"]);
    });
  }, { batchEntriesMax: 2, wrapDatabase: (database) => slowClaim(database, gate) });
});

Deno.test("case 4, every rail: a positive-pay file never marked sent is voided at its window's end (the bank's midnight), with its print file; its unsent check is voided and the payout's check issued again, with a new number, in the next day's file", async () => {
  await withLiveRail(async ({ m, runUntil }) => {
    const [id] = await chooseCheck(m, [7_000]);
    await runUntil(FIRST_CUTOFF + MINUTE_MS);
    assert.deepEqual((await batches(m)).map((b) => [b.rail, b.status]), [
      ["check_positive_pay", "built"],
      ["check_print", "built"],
    ]);
    const midnight = Date.UTC(2026, 0, 6, 5, 0); // 2026-01-06 00:00 in New York
    await quietly(() => runUntil(midnight - MINUTE_MS));
    assert.deepEqual((await batches(m)).map((b) => b.status), ["built", "built"]);
    await quietly(() => runUntil(midnight));
    const [positivePay, print] = await batches(m);
    assert.deepEqual([positivePay.status, print.status], ["voided", "voided"]);
    assert.match(String(positivePay.error), /window closed .*download and mark-sent/);
    assert.deepEqual(await entryStatuses(m), [`${id}-1:voided`, `${id}-2:queued`]);
    assert.deepEqual(
      await rows(m, "SELECT check_number, status, void_reason, reference FROM checks ORDER BY 1"),
      [
        { check_number: 5001, status: "voided", void_reason: "file_voided", reference: `${id}-1` },
        { check_number: 5002, status: "issued", void_reason: null, reference: `${id}-2` },
      ],
    );
    assert.equal((await m.payout(id)).status, "modality_selected");
    // Tuesday's 10:30 cutoff tells the bank of the new check only: the old one it never heard of.
    await quietly(() => runUntil(Date.UTC(2026, 0, 6, 15, 31)));
    const files = await rows(
      m,
      `SELECT f.kind, f.issue_count, f.void_count, b.status FROM check_files f
         JOIN rail_batches b ON b.id = f.batch_id ORDER BY b.rowid`,
    );
    assert.deepEqual(files.slice(2), [
      { kind: "positive_pay", issue_count: 1, void_count: 0, status: "built" },
      { kind: "print", issue_count: 1, void_count: 0, status: "built" },
    ]);
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  });
});

Deno.test("PayPal release, as for bank files: in live a batch over the approval limit waits for a second admin (rails:release asks), then goes; a batch within it goes at its cutoff", async () => {
  await withLiveRail(async ({ m, aliceToken, approve, runUntil }) => {
    await withLivePaypal(m, async (server) => {
      const over = await choosePaypal(m, "paypal", OVER_LIMIT_CENTS, "p0");
      await runUntil(PAYPAL_CUTOFF);
      const [waiting] = await rows(m, "SELECT id, status FROM rail_batches WHERE rail = 'paypal'");
      assert.equal(waiting.status, "built");
      assert.equal(server.batches.size, 0, "nothing reaches PayPal before the release");
      // The one command of every rail's batches asks for it.
      const requested = await releaseAs(m, aliceToken, String(waiting.id));
      assert.ok(requested.ok, requested.ok ? "" : requested.message);
      assert.deepEqual([requested.value.rail, requested.value.status], ["paypal", "built"]);
      assert.equal(server.batches.size, 0, "one admin alone releases nothing");
      await approve(String(requested.value.approval_id));
      assert.deepEqual(await batchesOf(m, "paypal").then((b) => b.map((x) => x.status)), [
        "transmitted",
      ]);
      assert.equal(server.batches.size, 1);
      assert.equal((await m.payout(over)).status, "funds_sent");

      const within = await choosePaypal(m, "paypal", 5_000, "p1");
      await runUntil(PAYPAL_CUTOFF + 5 * MINUTE_MS);
      assert.equal(server.batches.size, 2);
      assert.equal((await m.payout(within)).status, "funds_sent");
    });
  });
});

Deno.test("rails:release of a live PayPal batch whose company has no PayPal settings is refused (batch_held, naming paypal:set), and the batch is not sent; it threw before", async () => {
  await withLiveRail(async ({ m, aliceToken, runUntil }) => {
    await withLivePaypal(m, async (server) => {
      await choosePaypal(m, "paypal", OVER_LIMIT_CENTS, "p0");
      await runUntil(PAYPAL_CUTOFF);
      const [waiting] = await rows(m, "SELECT id, status FROM rail_batches WHERE rail = 'paypal'");
      // The settings are gone since the batch was built (no command removes them; a restore can).
      await m.database.writer.write((tx) => tx.execute("DELETE FROM paypal_settings"));
      const refused = await releaseAs(m, aliceToken, String(waiting.id));
      assert.deepEqual(refused.ok ? null : [refused.code, refused.message, refused.field], [
        "batch_held",
        `PayPal batch ${waiting.id} is held: company ${m.companyId} has no PayPal settings in this environment: save them with paypal:set`,
        "file",
      ]);
      await runUntil(PAYPAL_CUTOFF + 5 * MINUTE_MS);
      assert.deepEqual(await batchesOf(m, "paypal").then((b) => b.map((x) => x.status)), [
        "built",
      ]);
      assert.equal(server.batches.size, 0);
    });
  });
});

Deno.test("case 4, every rail: a PayPal batch never released is voided a day after its cutoff, never sent; its item goes in the next cutoff's batch under a new reference", async () => {
  await withLiveRail(async ({ m, runUntil }) => {
    await withLivePaypal(m, async (server) => {
      const id = await choosePaypal(m, "paypal", OVER_LIMIT_CENTS);
      await runUntil(PAYPAL_CUTOFF);
      await quietly(() => runUntil(PAYPAL_CUTOFF + DAY_MS));
      const [voided, next] = await batchesOf(m, "paypal");
      assert.equal(voided.status, "voided");
      assert.match(String(voided.error), /its release was not approved/);
      assert.deepEqual([next.status, next.cutoff_at], ["built", PAYPAL_CUTOFF + DAY_MS]);
      assert.deepEqual(await entryStatuses(m), [`${id}-1:voided`, `${id}-2:batched`]);
      assert.equal(server.batches.size, 0);
      assert.equal((await m.payout(id)).status, "modality_selected");
      assert.deepEqual(
        await rows(m, "SELECT origin FROM audit_log WHERE action = 'paypal:void'"),
        [{ origin: "system" }],
      );
    });
  });
});

Deno.test("case 4, every rail: a check an operator voided while its positive-pay file waited is not issued again when the window voids that file; its payout fails check_voided and is offered again", async () => {
  await withLiveRail(async ({ m, alice, runUntil }) => {
    const [id] = await chooseCheck(m, [7_000]);
    await runUntil(FIRST_CUTOFF + MINUTE_MS);
    const voided = await m.database.writer.write((tx) =>
      voidCheckAudited(tx, "live", alice, {
        companyId: m.companyId,
        checkNumber: 5001,
        reason: "payee asked to stop it",
        voidedBy: alice.operator.email,
      }, m.now())
    );
    assert.ok(voided.ok, voided.ok ? "" : voided.message);
    const midnight = Date.UTC(2026, 0, 6, 5, 0); // 2026-01-06 00:00 in New York
    await quietly(() => runUntil(midnight));
    assert.deepEqual((await batches(m)).map((b) => b.status), ["voided", "voided"]);
    assert.deepEqual(await entryStatuses(m), [`${id}-1:failed`]);
    assert.deepEqual(
      await rows(m, "SELECT check_number, status, void_reason FROM checks ORDER BY 1"),
      [{ check_number: 5001, status: "voided", void_reason: "payee asked to stop it" }],
    );
    const payout = await m.payout(id);
    assert.deepEqual([payout.status, payout.failure_reason], ["modality_offered", "check_voided"]);
    const b = await m.balances();
    assert.deepEqual(
      [b.reserved, b.in_transit],
      [7_000, 0],
      "the hold waits for the payee's new choice",
    );
    // Tuesday's cutoff has nothing of this payout to tell the bank.
    await quietly(() => runUntil(Date.UTC(2026, 0, 6, 15, 31)));
    assert.deepEqual(await entryStatuses(m), [`${id}-1:failed`]);
    assert.deepEqual(
      await rows(m, "SELECT kind, issue_count, void_count FROM check_files ORDER BY rowid"),
      [{ kind: "positive_pay", issue_count: 1, void_count: 0 }, {
        kind: "print",
        issue_count: 1,
        void_count: 0,
      }],
    );
    assert.deepEqual(await verifyLedger(m.database.readClient), []);
  });
});
