/**
 * Every batch rail sends a transmitted batch's entries the same way: the transmission's unit sends
 * the first SEND_ENTRIES_PER_UNIT_MAX, and the rail's send job the rest, a unit at a time with the
 * event loop's turns between units (lib/rails/batch.ts); what follows the last entry sent (a check
 * file's print release, PayPal's first poll) runs once every entry is sent.
 */
import assert from "node:assert/strict";
import { SEND_ENTRIES_PER_UNIT_MAX } from "../lib/rails/batch.ts";
import { checkFilesOf, chooseCheck, withCheckFixture } from "./checks_helpers.ts";
import { choosePaypal, withPaypal } from "./paypal_helpers.ts";

const MINUTE_S = 60;
const COUNT = SEND_ENTRIES_PER_UNIT_MAX + 5;

Deno.test("checks: a positive-pay file of more than a unit's entries is sent by check.send beyond the transmission's unit, then its print file goes", async () => {
  await withCheckFixture("test", async ({ m }) => {
    const ids = await chooseCheck(m, Array.from({ length: COUNT }, (_, i) => 1_000 + i));
    for (const id of ids) assert.equal((await m.payout(id)).status, "funds_sent");
    const files = await checkFilesOf(m);
    assert.deepEqual(files.map((f) => [f.kind, f.status, f.issue_count]), [
      ["positive_pay", "transmitted", COUNT],
      ["print", "transmitted", COUNT],
    ]);
    const sendJobs = await m.database.readClient.execute(
      "SELECT done_at IS NOT NULL AS done, error FROM scheduled_jobs WHERE kind = 'check.send'",
    );
    assert.deepEqual(sendJobs.rows.map((row) => ({ ...row })), [{ done: 1, error: null }]);
  });
});

Deno.test("PayPal: a batch of more than a unit's items is sent by paypal.send beyond the transmission's unit; its first poll is planned once every item is sent", async () => {
  await withPaypal(async ({ m, server }) => {
    await m.fund(10_000_000);
    await m.advance(MINUTE_S); // 15:01: the next cutoff is 15:05
    const ids: string[] = [];
    for (let i = 0; i < COUNT; i++) ids.push(await choosePaypal(m, "paypal", 1_000 + i, `p${i}`));
    await m.advance(4 * MINUTE_S);
    assert.equal(server.batches.size, 1);
    for (const id of ids) assert.equal((await m.payout(id)).status, "funds_sent");
    const jobs = await m.database.readClient.execute(
      `SELECT kind, done_at IS NOT NULL AS done FROM scheduled_jobs
       WHERE kind IN ('paypal.send', 'paypal.poll') ORDER BY kind`,
    );
    assert.deepEqual(jobs.rows.map((row) => ({ ...row })), [
      { kind: "paypal.poll", done: 0 },
      { kind: "paypal.send", done: 1 },
    ]);
  });
});
