/**
 * The sandbox bank's returns of a file larger than a page: its credits are read and unsealed a
 * page at a time, the event loop getting its turns between pages, and the bank's answer is the
 * same as for a small file (R03 for the returned account, a late return planned for the other).
 */
import assert from "node:assert/strict";
import { runDueJobs } from "../db/scheduler.ts";
import {
  CREDITS_PAGE,
  SANDBOX_LATE_RETURNED_ACCOUNT,
  SANDBOX_LATE_RETURNS_JOB,
  SANDBOX_RETURNED_ACCOUNT,
  SANDBOX_RETURNS_JOB,
  sandboxReturnsJob,
} from "../lib/ach/sandbox_bank.ts";
import type { SecretBox } from "../lib/platform/crypto.ts";
import { verifyLedger } from "../lib/ledger/reports.ts";
import {
  COMPANY,
  NOW,
  scheduleFileJob,
  type SentCredit,
  withImports,
} from "./ach_import_helpers.ts";

/** Two full pages and part of a third. */
const COUNT = 2 * CREDITS_PAGE + 17;

Deno.test("sandbox returns of a file of several pages: the same returns, with the event loop's turns between pages", async () => {
  await withImports(async (f) => {
    const returned: SentCredit[] = [];
    const late: SentCredit[] = [];
    for (let i = 0; i < COUNT; i++) {
      // Returned and late entries on every page, the last one on the last page.
      const account = i % 50 === 7 || i === COUNT - 1
        ? SANDBOX_RETURNED_ACCOUNT
        : i % 90 === 11
        ? SANDBOX_LATE_RETURNED_ACCOUNT
        : "000123456789";
      const credit = await f.credit({ account, amountCents: 1_000 });
      if (account === SANDBOX_RETURNED_ACCOUNT) returned.push(credit);
      if (account === SANDBOX_LATE_RETURNED_ACCOUNT) late.push(credit);
    }
    // Counts the accounts the job unseals; a timer reads the count whenever the event loop turns.
    let opened = 0;
    const secretBox: SecretBox = Object.create(f.deps.secretBox);
    secretBox.openText = (sealed: string) => {
      opened++;
      return f.deps.secretBox.openText(sealed);
    };
    const seen = new Set<number>();
    let watching = true;
    const watch = (async () => {
      while (watching) {
        seen.add(opened);
        await new Promise((resolve) => setTimeout(resolve, 0));
      }
    })();
    const handlers = { [SANDBOX_RETURNS_JOB]: sandboxReturnsJob({ ...f.deps, secretBox }) };
    try {
      await scheduleFileJob(f, SANDBOX_RETURNS_JOB);
      assert.equal(await runDueJobs(f.database, COMPANY, NOW, handlers), 1);
    } finally {
      watching = false;
      await watch;
    }
    // The loop turned after each page was unsealed, never in the middle of one.
    assert.deepEqual([...seen].sort((a, b) => a - b), [0, CREDITS_PAGE, 2 * CREDITS_PAGE, COUNT]);

    assert.deepEqual(
      await f.rows(
        `SELECT file_name, return_count, applied_count, report FROM ach_imports`,
      ),
      [{
        file_name: `RETURNS_${f.batchId}.txt`,
        return_count: returned.length,
        applied_count: returned.length,
        report: "[]",
      }],
    );
    assert.deepEqual(
      await f.rows(
        `SELECT p.id, p.status, p.failure_reason FROM payouts p
           JOIN rail_batch_entries e ON e.payout_id = p.id
          WHERE e.return_code = 'R03' ORDER BY e.trace_number`,
      ),
      returned.map((credit) => ({
        id: credit.payoutId,
        status: "modality_offered",
        failure_reason: "R03",
      })),
    );
    assert.deepEqual(
      await f.rows(
        "SELECT status, count(*) AS n FROM rail_batch_entries GROUP BY status ORDER BY status",
      ),
      [{ status: "failed", n: returned.length }, {
        status: "sent",
        n: COUNT - returned.length,
      }],
    );
    const [planned] = await f.rows(
      "SELECT subject_id, payload FROM scheduled_jobs WHERE kind = ?",
      SANDBOX_LATE_RETURNS_JOB,
    );
    assert.deepEqual(
      { subject: planned.subject_id, payload: JSON.parse(String(planned.payload)) },
      { subject: f.batchId, payload: { traces: late.map((credit) => credit.trace) } },
    );
    assert.deepEqual(await verifyLedger(f.database.readClient), []);
  });
});
