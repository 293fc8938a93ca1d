/**
 * A return file's entries are applied a bounded number a write unit, with requests answered
 * between units: the import's row is true at every commit, an import stopped between two units is
 * taken up where it stopped by the next import of the same file and ends exactly as one never
 * stopped, and a file imported again applies nothing twice.
 */
import assert from "node:assert/strict";
import type { WriteUnit } from "../db/writer.ts";
import {
  type AchImportReport,
  importAchFile,
  importAchFileInUnit,
  previewAchImport,
} from "../lib/ach/imports.ts";
import {
  ACH_IMPORT_ENTRIES_PER_UNIT_MAX,
  ACH_IMPORT_RESUME_JOB,
  ACH_RETURNS_IMPORT_LEASE_MS,
} from "../lib/ach/import_rules.ts";
import { importResumeJob } from "../lib/ach/import_resume.ts";
import type { ReturnToWrite } from "../lib/ach/nacha.ts";
import {
  SANDBOX_RETURNED_ACCOUNT,
  SANDBOX_RETURNS_JOB,
  sandboxReturnsJob,
} from "../lib/ach/sandbox_bank.ts";
import { runDueJobs } from "../db/scheduler.ts";
import { quietly } from "./ach_helpers.ts";
import { FakeClock } from "../lib/platform/clock.ts";
import { verifyLedger } from "../lib/ledger/reports.ts";
import { readLineBalances } from "../lib/ledger/store.ts";
import {
  COMPANY,
  type ImportFixture,
  LINE,
  noticeOf,
  NOW,
  ODFI,
  returnFile,
  returnOf,
  scheduleFileJob,
  type SentCredit,
  type SentDebit,
  withImports,
} from "./ach_import_helpers.ts";

const RETURNS = 200;

/**
 * Imports `entries` while a timer reads, whenever the event loop turns, the committed count of
 * returned entries and the import's row (a unit holds the thread from its first statement to its
 * commit, so only what is between units shows). Returns what was seen, in order.
 */
async function importWatching(
  f: ImportFixture,
  entries: readonly ReturnToWrite[],
): Promise<{ returned: number; applied: number | null; progress: unknown }[]> {
  const seen: { returned: number; applied: number | null; progress: unknown }[] = [];
  let watching = true;
  const watch = (async () => {
    while (watching) {
      const [{ n }] = await f.rows(
        "SELECT count(*) AS n FROM rail_batch_entries WHERE return_code IS NOT NULL",
      );
      const [row] = await f.rows("SELECT applied_count, progress FROM ach_imports");
      const observed = {
        returned: Number(n),
        applied: row ? Number(row.applied_count) : null,
        progress: row?.progress == null ? null : JSON.parse(String(row.progress)),
      };
      if (JSON.stringify(observed) !== JSON.stringify(seen.at(-1))) seen.push(observed);
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
  })();
  try {
    const imported = await f.import(entries);
    assert.ok(imported.ok, imported.ok ? "" : imported.message);
    assert.deepEqual([imported.value.applied, imported.value.notApplied], [entries.length, []]);
  } finally {
    watching = false;
    await watch;
  }
  return seen;
}

Deno.test("a file of 200 returns is applied ACH_IMPORT_ENTRIES_PER_UNIT_MAX a unit, the event loop turning between units, its row true at every commit", async () => {
  await withImports(async (f) => {
    const credits: SentCredit[] = [];
    for (let n = 0; n < RETURNS; n++) credits.push(await f.credit({ amountCents: 1_000 + n }));
    const seen = await importWatching(f, credits.map((credit) => returnOf(credit, "R03")));
    // Before the claim, the claim, then every unit's count: never more than a unit apart.
    const expected: unknown[] = [{ returned: 0, applied: null, progress: null }];
    for (let done = 0; done < RETURNS; done += ACH_IMPORT_ENTRIES_PER_UNIT_MAX) {
      expected.push({
        returned: done,
        applied: done,
        progress: { entries_done: done, companies: done === 0 ? [] : ["co_imports"] },
      });
    }
    expected.push({ returned: RETURNS, applied: RETURNS, progress: null });
    assert.ok(ACH_IMPORT_ENTRIES_PER_UNIT_MAX <= 25);
    assert.deepEqual(seen, expected);
    assert.deepEqual(
      await f.rows(
        "SELECT status, count(*) AS n FROM payouts GROUP BY status",
      ),
      [{ status: "modality_offered", n: RETURNS }],
    );
    assert.deepEqual(
      await f.rows("SELECT company_id, return_count, applied_count, report FROM ach_imports"),
      [{ company_id: "co_imports", return_count: RETURNS, applied_count: RETURNS, report: "[]" }],
    );
    assert.deepEqual(await verifyLedger(f.database.readClient), []);
  });
});

/** A file of every kind of entry an import meets, on entries set up the same way each time. */
interface MixedFile {
  readonly credits: readonly SentCredit[];
  readonly late: SentCredit;
  readonly debit: SentDebit;
  readonly entries: readonly ReturnToWrite[];
  /** Of each entry, in file order: whether it applies, and whether it returns its sent entry. */
  readonly expected: readonly { readonly applies: boolean; readonly returns: boolean }[];
}

async function mixedFile(f: ImportFixture): Promise<MixedFile> {
  const credits: SentCredit[] = [];
  for (let n = 0; n < 30; n++) {
    credits.push(await f.credit({ amountCents: 2_000 + n, account: `0001230000${10 + n}` }));
  }
  const late = await f.credit({ stage: "completed", amountCents: 5_000 });
  const debit = await f.debit(400_000);
  const unmatched = returnOf(credits[0], "R03");
  const returned = { applies: true, returns: true };
  // In file order: a return file keeps its PPD returns, notices of change (COR) and CCD returns
  // in batches of their own.
  const entries: (readonly [ReturnToWrite, { applies: boolean; returns: boolean }])[] = [
    ...credits.slice(0, 12).map((credit) => [returnOf(credit, "R03"), returned] as const),
    [
      { ...unmatched, original: { ...unmatched.original, traceNumber: `${ODFI}9999999` } },
      { applies: false, returns: false },
    ],
    [returnOf(late, "R02"), returned],
    ...credits.slice(12, 24).map((credit) => [returnOf(credit, "R03"), returned] as const),
    // The same trace returned twice in one file, the second time in a later unit.
    [returnOf(credits[5], "R03"), { applies: false, returns: false }],
    [returnOf(credits[26], "R14"), returned],
    // A notice of change of a payout returned earlier in the same file changes nothing.
    [noticeOf(credits[3], "C01", { accountNumber: "000999000003" }), {
      applies: false,
      returns: false,
    }],
    [noticeOf(credits[28], "C01", { accountNumber: "000999000028" }), {
      applies: true,
      returns: false,
    }],
    [returnOf(debit, "R01"), returned],
  ];
  return {
    credits,
    late,
    debit,
    entries: entries.map(([entry]) => entry),
    expected: entries.map(([, expected]) => expected),
  };
}

/**
 * What an import leaves, with every payout and funding named by its place in the fixture (the
 * ids and traces of two fixtures differ).
 */
async function outcome(f: ImportFixture, file: MixedFile): Promise<unknown> {
  const payouts = [...file.credits, file.late].map((credit) => credit.payoutId);
  const place = new Map<unknown, string>(payouts.map((id, n) => [id, `payout ${n}`]));
  const fundings = await f.rows("SELECT id FROM fundings ORDER BY created_at, id");
  fundings.forEach(({ id }, n) => place.set(id, `funding ${n}`));
  [...file.credits, file.late, file.debit].forEach((sent, n) =>
    place.set(sent.trace, `trace ${n}`)
  );
  // The import's own resume job names it by id.
  (await f.rows("SELECT id FROM ach_imports")).forEach(({ id }) => place.set(id, "the import"));
  // A transition's detail names its submission by payout id.
  const nameOf = (value: unknown) =>
    typeof value === "string"
      ? place.get(value) ??
        value.replace(/po_[0-9A-Za-z]+/g, (id) => place.get(id) ?? id)
      : value;
  const named = (rows: Record<string, unknown>[]) =>
    rows.map((row) =>
      Object.fromEntries(Object.entries(row).map(([key, value]) => [key, nameOf(value)]))
    );
  const [imported] = await f.rows(
    `SELECT company_id, source, file_name, return_count, correction_count, applied_count, report,
            progress FROM ach_imports`,
  );
  return {
    payouts: named(
      await f.rows(
        `SELECT id, status, held_cents, failure_reason, submission_count FROM payouts
          WHERE id IN (${payouts.map(() => "?").join(", ")})`,
        ...payouts,
      ),
    ).sort((a, b) => String(a.id).localeCompare(String(b.id))),
    entries: named(
      await f.rows(
        `SELECT coalesce(payout_id, funding_id) AS owner, status, return_code
           FROM rail_batch_entries ORDER BY trace_number`,
      ),
    ),
    fundings: named(await f.rows("SELECT id, status FROM fundings ORDER BY created_at, id")),
    transitions: named(
      await f.rows(
        `SELECT payout_id, from_status, to_status, detail, count(*) AS n FROM payout_transitions
          GROUP BY payout_id, from_status, to_status, detail`,
      ),
    ).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    ledger: named(
      await f.rows(
        `SELECT t.kind, t.payout_id, t.funding_id, e.account_id LIKE 'acct_%' AS ours,
                sum(e.amount_cents) AS cents, count(*) AS n
           FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
          WHERE e.amount_cents > 0
          GROUP BY t.kind, t.payout_id, t.funding_id`,
      ),
    ).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    balances: await readLineBalances(f.database.readClient, LINE),
    events: named(
      await f.rows(
        "SELECT type, payout_id, count(*) AS n FROM events GROUP BY type, payout_id",
      ),
    ).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    notifications: named(
      await f.rows("SELECT payout_id, channel, count(*) AS n FROM notifications GROUP BY 1, 2"),
    ).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    jobs: named(
      await f.rows(
        `SELECT kind, subject_id, done_at IS NULL AS open, count(*) AS n FROM scheduled_jobs
          GROUP BY 1, 2, 3`,
      ),
    ).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    corrections: await f.rows("SELECT change_code, count(*) AS n FROM ach_corrections GROUP BY 1"),
    exceptions: await f.rows("SELECT count(*) AS n FROM rail_exceptions"),
    imported: named([{
      ...imported,
      report: JSON.parse(String(imported.report)).map((entry: Record<string, unknown>) => ({
        ...entry,
        trace: place.get(entry.trace) ?? entry.trace,
      })),
    }]),
  };
}

/** An import's report without what differs between two fixtures (ids, traces: `outcome` has them). */
const reportOf = (report: AchImportReport) => ({
  ...report,
  importId: null,
  sha256: null,
  notApplied: report.notApplied.map((entry) => entry.reason),
});

/** Counts the write units from now until `restore`, which answers how many there were. */
function countingUnits(f: ImportFixture): { restore(): number } {
  const writer = f.database.writer;
  const write = writer.write.bind(writer);
  let units = 0;
  writer.write = <T>(unit: WriteUnit<T>): Promise<T> => {
    units++;
    return write(unit);
  };
  return {
    restore: () => {
      writer.write = write;
      return units;
    },
  };
}

/** Every write fails from the `units`-th write unit on, until `restart`, as after a crash. */
function stoppingAfter(f: ImportFixture, units: number): { restart(): void } {
  const writer = f.database.writer;
  const write = writer.write.bind(writer);
  let written = 0;
  writer.write = <T>(unit: WriteUnit<T>): Promise<T> =>
    ++written > units ? Promise.reject(new Error("the process stopped")) : write(unit);
  return { restart: () => writer.write = write };
}

Deno.test("an import stopped between two units, then imported again, ends exactly as one never stopped: statuses, ledger, events and its report", async () => {
  let uninterrupted: unknown = null;
  let uninterruptedReport: unknown = null;
  await withImports(async (f) => {
    const file = await mixedFile(f);
    const imported = await f.import(file.entries);
    assert.ok(imported.ok);
    uninterruptedReport = reportOf(imported.value);
    uninterrupted = await outcome(f, file);
  });
  // Stopped after its claim and two units: the file's first 2 units' entries are applied.
  await withImports(async (f) => {
    const file = await mixedFile(f);
    const stop = stoppingAfter(f, 3);
    await assert.rejects(() => f.import(file.entries), /the process stopped/);
    stop.restart();
    const [row] = await f.rows("SELECT applied_count, progress FROM ach_imports");
    const done = file.expected.slice(0, 2 * ACH_IMPORT_ENTRIES_PER_UNIT_MAX);
    assert.deepEqual(
      [row.applied_count, JSON.parse(String(row.progress)).entries_done],
      [done.filter((entry) => entry.applies).length, done.length],
    );
    assert.deepEqual(
      await f.rows(
        "SELECT count(*) AS n FROM rail_batch_entries WHERE return_code IS NOT NULL",
      ),
      [{ n: done.filter((entry) => entry.returns).length }],
    );
    // The same file again (the next poll, an operator's retry) goes on from where it stopped.
    const again = await f.import(file.entries, "RETURNS-again.txt");
    assert.ok(again.ok, again.ok ? "" : again.message);
    assert.deepEqual(reportOf(again.value), uninterruptedReport);
    assert.deepEqual(await outcome(f, file), uninterrupted);
    assert.deepEqual(await verifyLedger(f.database.readClient), []);
    // And once more: a duplicate, which changes nothing.
    const before = await f.snapshot();
    const third = await f.import(file.entries);
    assert.ok(third.ok);
    assert.deepEqual(third.value, { ...again.value, duplicate: true });
    assert.deepEqual(await f.snapshot(), before);
  });
});

Deno.test("an import stopped at any unit and taken up again ends as the uninterrupted one", async () => {
  let uninterrupted: unknown = null;
  let units = 0;
  let entryCount = 0;
  await withImports(async (f) => {
    const file = await mixedFile(f);
    entryCount = file.entries.length;
    const counting = countingUnits(f);
    assert.ok((await f.import(file.entries)).ok);
    units = counting.restore();
    uninterrupted = await outcome(f, file);
  });
  // The claim, one unit per ACH_IMPORT_ENTRIES_PER_UNIT_MAX entries, and a last one with fewer.
  assert.equal(units, 1 + Math.floor(entryCount / ACH_IMPORT_ENTRIES_PER_UNIT_MAX) + 1);
  for (let stopAfter = 1; stopAfter < units; stopAfter++) {
    await withImports(async (f) => {
      const file = await mixedFile(f);
      const stop = stoppingAfter(f, stopAfter);
      await assert.rejects(() => f.import(file.entries), /the process stopped/);
      stop.restart();
      assert.ok((await f.import(file.entries)).ok);
      assert.deepEqual(await outcome(f, file), uninterrupted, `stopped after ${stopAfter} units`);
    });
  }
});

Deno.test("the same file imported twice at once applies each entry once", async () => {
  await withImports(async (f) => {
    const credits: SentCredit[] = [];
    for (let n = 0; n < 45; n++) credits.push(await f.credit({ amountCents: 3_000 + n }));
    const content = new TextEncoder().encode(
      returnFile(credits.map((credit) => returnOf(credit, "R03"))),
    );
    const request = { content, source: "cli" as const, importedBy: "op_admin" };
    const [first, second] = await Promise.all([
      importAchFile(f.deps, { ...request, fileName: "RETURNS.txt" }, NOW),
      importAchFile(f.deps, { ...request, fileName: "RETURNS-copy.txt" }, NOW),
    ]);
    assert.ok(first.ok && second.ok);
    assert.equal(first.value.importId, second.value.importId);
    assert.deepEqual([first.value.applied, second.value.applied], [45, 45]);
    assert.deepEqual(
      await f.rows(
        `SELECT count(*) AS n, count(DISTINCT payout_id) AS payouts FROM payout_transitions
          WHERE from_status = 'funds_sent' AND to_status = 'failed'`,
      ),
      [{ n: 45, payouts: 45 }],
    );
    // One row, named as the import that claimed the file first (each seals the file before).
    const rows = await f.rows("SELECT file_name, applied_count, progress FROM ach_imports");
    assert.equal(rows.length, 1);
    assert.ok(["RETURNS.txt", "RETURNS-copy.txt"].includes(String(rows[0].file_name)));
    assert.deepEqual({ ...rows[0], file_name: null }, {
      file_name: null,
      applied_count: 45,
      progress: null,
    });
    assert.deepEqual(await verifyLedger(f.database.readClient), []);
  });
});

Deno.test("an import stopped midway: a preview shows only what is left, and an approval's unit completes it", async () => {
  await withImports(async (f) => {
    const credits: SentCredit[] = [];
    for (let n = 0; n < ACH_IMPORT_ENTRIES_PER_UNIT_MAX + 5; n++) {
      credits.push(await f.credit({ amountCents: 4_000 + n }));
    }
    const request = {
      content: new TextEncoder().encode(
        returnFile(credits.map((credit) => returnOf(credit, "R03"))),
      ),
      fileName: "RETURNS.txt",
      source: "cli" as const,
      importedBy: "op_admin",
    };
    // Stopped after its claim and its first unit.
    const stop = stoppingAfter(f, 2);
    await assert.rejects(() => importAchFile(f.deps, request, NOW), /the process stopped/);
    stop.restart();
    const left = credits.slice(ACH_IMPORT_ENTRIES_PER_UNIT_MAX).map((credit) => credit.payoutId);

    const before = await f.snapshot();
    const preview = await previewAchImport(f.deps, request, NOW);
    assert.ok(preview.ok);
    assert.deepEqual(
      [preview.value.duplicate, preview.value.applied, [...preview.value.payouts].sort()],
      [false, left.length, [...left].sort()],
    );
    assert.deepEqual(await f.snapshot(), before, "the preview wrote nothing");

    const approved = await f.database.writer.write((tx) =>
      importAchFileInUnit(tx, f.deps, { ...request, source: "console" }, NOW)
    );
    assert.ok(approved.ok);
    assert.deepEqual([approved.value.duplicate, approved.value.applied], [false, credits.length]);
    assert.deepEqual(
      await f.rows("SELECT source, applied_count, progress FROM ach_imports"),
      [{ source: "cli", applied_count: credits.length, progress: null }],
    );
    assert.deepEqual(
      await f.rows(
        `SELECT count(*) AS n, count(DISTINCT payout_id) AS payouts FROM payout_transitions
          WHERE from_status = 'funds_sent' AND to_status = 'failed'`,
      ),
      [{ n: credits.length, payouts: credits.length }],
    );
    assert.deepEqual(await verifyLedger(f.database.readClient), []);
  });
});

Deno.test("a sandbox return file whose import outlasts a minute keeps its job's claim until it records, so a settlement still waits behind it", async () => {
  await withImports(async (f) => {
    for (let n = 0; n < 3 * ACH_IMPORT_ENTRIES_PER_UNIT_MAX; n++) {
      await f.credit({ account: SANDBOX_RETURNED_ACCOUNT, amountCents: 1_000 + n });
    }
    await scheduleFileJob(f, SANDBOX_RETURNS_JOB);
    const clock = new FakeClock(NOW);
    // Each write unit takes 40 s of real time (a loaded machine, rests under API traffic).
    const writer = f.database.writer;
    const write = writer.write.bind(writer);
    const claimHeld: boolean[] = [];
    writer.write = async <T>(unit: WriteUnit<T>): Promise<T> => {
      const value = await write(unit);
      clock.advance(40_000);
      const [{ n }] = await f.rows(
        `SELECT count(*) AS n FROM scheduled_jobs
          WHERE kind = ? AND done_at IS NULL AND lease_until > ?`,
        SANDBOX_RETURNS_JOB,
        clock.now(),
      );
      claimHeld.push(Number(n) === 1);
      return value;
    };
    const handlers = { [SANDBOX_RETURNS_JOB]: sandboxReturnsJob(f.deps) };
    assert.equal(await runDueJobs(f.database, COMPANY, NOW, handlers, { clock }), 1);
    writer.write = write;
    // Held from its claim through every unit of the import; done once its answer is recorded.
    assert.ok(claimHeld.length > 3 * ACH_IMPORT_ENTRIES_PER_UNIT_MAX / 10);
    assert.deepEqual(claimHeld, [...claimHeld.slice(0, -1).map(() => true), false]);
    assert.deepEqual(
      await f.rows("SELECT count(*) AS n FROM payouts WHERE failure_reason = 'R03'"),
      [{ n: 3 * ACH_IMPORT_ENTRIES_PER_UNIT_MAX }],
    );
  });
});

Deno.test("an import stopped after any unit is resumed by its job alone, from its sealed content, and ends as the uninterrupted one", async () => {
  const handlers = (f: ImportFixture) => ({ [ACH_IMPORT_RESUME_JOB]: importResumeJob(f.deps) });
  let uninterrupted: unknown = null;
  let units = 0;
  await withImports(async (f) => {
    const file = await mixedFile(f);
    const counting = countingUnits(f);
    assert.ok((await f.import(file.entries)).ok);
    units = counting.restore();
    // Complete, it keeps no content, and its resume job is done without a run (the fixture's
    // cutoff, with no handler here, is parked by this sweep as by the other's).
    await quietly(() =>
      runDueJobs(f.database, COMPANY, NOW + ACH_RETURNS_IMPORT_LEASE_MS, handlers(f))
    );
    assert.deepEqual(
      await f.rows("SELECT content_sealed FROM ach_imports"),
      [{ content_sealed: null }],
    );
    uninterrupted = await outcome(f, file);
  });
  for (let stopAfter = 1; stopAfter < units; stopAfter++) {
    await withImports(async (f) => {
      const file = await mixedFile(f);
      const stop = stoppingAfter(f, stopAfter);
      await assert.rejects(() => f.import(file.entries), /the process stopped/);
      stop.restart();
      const [kept] = await f.rows("SELECT content_sealed FROM ach_imports");
      const content = returnFile(file.entries);
      assert.equal(
        new TextDecoder().decode(await f.deps.secretBox.open(String(kept.content_sealed))),
        content,
      );
      assert.ok(!String(kept.content_sealed).includes(content.slice(0, 94)), "sealed");
      // Nothing runs while the claim holds.
      const lapse = NOW + ACH_RETURNS_IMPORT_LEASE_MS;
      await quietly(() => runDueJobs(f.database, COMPANY, lapse - 1, handlers(f)));
      assert.deepEqual(
        await f.rows("SELECT progress IS NULL AS complete FROM ach_imports"),
        [{ complete: 0 }],
      );
      await runDueJobs(f.database, COMPANY, lapse, handlers(f));
      assert.deepEqual(await outcome(f, file), uninterrupted, `stopped after ${stopAfter} units`);
      assert.deepEqual(
        await f.rows("SELECT count(*) AS n, max(content_sealed) AS kept FROM ach_imports"),
        [{ n: 1, kept: null }],
      );
      assert.deepEqual(await verifyLedger(f.database.readClient), []);
    });
  }
});

/** What the sandbox bank's returns job leaves, payouts named by their place in `credits`. */
async function sandboxOutcome(f: ImportFixture, credits: readonly SentCredit[]): Promise<unknown> {
  const place = new Map<unknown, string>(credits.map((credit, n) => [credit.payoutId, `${n}`]));
  const named = (rows: Record<string, unknown>[]) =>
    rows.map((row) =>
      Object.fromEntries(
        Object.entries(row).map(([key, value]) => [key, place.get(value) ?? value]),
      )
    ).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  return {
    payouts: named(await f.rows("SELECT id, status, failure_reason, held_cents FROM payouts")),
    transitions: named(
      await f.rows(
        `SELECT payout_id, from_status, to_status, count(*) AS n FROM payout_transitions
          GROUP BY 1, 2, 3`,
      ),
    ),
    ledger: named(
      await f.rows(
        `SELECT t.kind, t.payout_id, sum(e.amount_cents) AS cents, count(*) AS n
           FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
          WHERE e.amount_cents > 0 GROUP BY 1, 2`,
      ),
    ),
    balances: await readLineBalances(f.database.readClient, LINE),
    events: named(await f.rows("SELECT type, payout_id, count(*) AS n FROM events GROUP BY 1, 2")),
    notifications: named(
      await f.rows("SELECT payout_id, channel, count(*) AS n FROM notifications GROUP BY 1, 2"),
    ),
    jobs: await f.rows(
      `SELECT kind, done_at IS NULL AS open, error, count(*) AS n FROM scheduled_jobs
        GROUP BY 1, 2, 3 ORDER BY 1, 2`,
    ),
    imports: await f.rows(
      `SELECT company_id, source, replace(file_name, ?, 'the file') AS file_name, return_count,
              applied_count, report, progress, content_sealed FROM ach_imports`,
      f.batchId,
    ),
  };
}

Deno.test("the sandbox bank's returns job stopped after any unit takes its own import up again: one import, ending as the uninterrupted one", async () => {
  const credits = async (f: ImportFixture) => {
    const sent: SentCredit[] = [];
    for (let n = 0; n < 2 * ACH_IMPORT_ENTRIES_PER_UNIT_MAX + 5; n++) {
      sent.push(await f.credit({ account: SANDBOX_RETURNED_ACCOUNT, amountCents: 1_000 + n }));
    }
    sent.push(await f.credit({ amountCents: 7_000 }));
    return sent;
  };
  const handlers = (f: ImportFixture) => ({
    [SANDBOX_RETURNS_JOB]: sandboxReturnsJob(f.deps),
    [ACH_IMPORT_RESUME_JOB]: importResumeJob(f.deps),
  });
  let uninterrupted: unknown = null;
  let units = 0;
  await withImports(async (f) => {
    const sent = await credits(f);
    await scheduleFileJob(f, SANDBOX_RETURNS_JOB);
    const counting = countingUnits(f);
    const clock = new FakeClock(NOW);
    assert.equal(await runDueJobs(f.database, COMPANY, NOW, handlers(f), { clock }), 1);
    units = counting.restore();
    uninterrupted = await sandboxOutcome(f, sent);
  });
  for (let stopAfter = 1; stopAfter < units; stopAfter++) {
    await withImports(async (f) => {
      const sent = await credits(f);
      await scheduleFileJob(f, SANDBOX_RETURNS_JOB);
      const clock = new FakeClock(NOW);
      const stop = stoppingAfter(f, stopAfter);
      await assert.rejects(
        () => runDueJobs(f.database, COMPANY, NOW, handlers(f), { clock }),
        /the process stopped/,
      );
      stop.restart();
      // The sweep after the claims lapsed, alone.
      clock.advance(ACH_RETURNS_IMPORT_LEASE_MS + 1);
      const later = NOW + ACH_RETURNS_IMPORT_LEASE_MS;
      await runDueJobs(f.database, COMPANY, later, handlers(f), { clock });
      assert.deepEqual(
        await sandboxOutcome(f, sent),
        uninterrupted,
        `stopped after ${stopAfter} units`,
      );
    });
  }
});
