/**
 * A kept ACH file is opened for its transmission only when it is the very file its build checked
 * (the SHA-256 the build took of the content that passed the strict checker and matched the
 * database): content changed after the build is never handed to the bank, even when it still
 * reads as a valid NACHA file. The file worker's opening and the service's own are the same rule.
 * Such a file was handed to nobody, so it is never in doubt: its attempt is not transmitted.
 */
import assert from "node:assert/strict";
import { FILE_WORKER_ENTRIES_MIN } from "../lib/ach/jobs.ts";
import { checkNachaFile } from "../lib/ach/nacha.ts";
import { alpha } from "../lib/ach/nacha_records.ts";
import { loadAchFile, openFileContent } from "../lib/ach/files_store.ts";
import { keepSealedInstead } from "./ach_file_rows.ts";
import { sha256Hex } from "../lib/platform/keys.ts";
import { batches, chooseAch, logLines, quietly, rows, withScriptedBank } from "./ach_helpers.ts";
import { testSecretBox } from "./helpers.ts";

const MINUTE_SECONDS = 60;
const ACCOUNT = "000123456789";
const OTHER_ACCOUNT = "000987654321";

/** The content with its first entry paid to `account` (positions 13-29): still a valid file. */
function payingFirstEntryTo(content: string, account: string): string {
  const records = content.split("\r\n");
  const first = records.findIndex((record) => record[0] === "6");
  const record = records[first];
  records[first] = record.slice(0, 12) + alpha(account, 17) + record.slice(29);
  return records.join("\r\n");
}

Deno.test("a kept file changed after its build is not handed to the bank, though it still reads as a valid NACHA file, nor is it in doubt: its attempts were not transmitted, and at the end of its window its entries go in a file built again; the file as built goes with its entries' accounts", async () => {
  for (const count of [3, FILE_WORKER_ENTRIES_MIN]) {
    await withScriptedBank(async ({ m, bank }) => {
      await m.fund(100_000_000);
      await chooseAch(m, Array.from({ length: count }, () => 1_000), ACCOUNT);
      bank.answers.push({ kind: "not_uploaded", reason: "connection refused" });
      // The 10:30 file is refused once and waits for its retry.
      await quietly(() => m.advance(30 * MINUTE_SECONDS));
      const [built] = await batches(m);
      assert.equal(built.status, "built");
      assert.equal(bank.received.length, 1);
      const first = bank.received[0];
      const [{ sha256 }] = await rows(m, "SELECT sha256 FROM ach_files");
      assert.equal(await sha256Hex(first.content), sha256);
      assert.deepEqual(first.accountNumbers, Array.from({ length: count }, () => ACCOUNT));

      const kept = await loadAchFile(m.database.readClient, String(built.id));
      assert.ok(kept);
      const changed = payingFirstEntryTo(
        await openFileContent(testSecretBox, kept.contentSealed),
        OTHER_ACCOUNT,
      );
      assert.ok(checkNachaFile(changed).ok, "the changed content reads as a valid file");
      await keepSealedInstead(m.database, String(built.id), await testSecretBox.sealText(changed));

      const logged = await logLines(() => m.advance(MINUTE_SECONDS));
      assert.equal(bank.received.length, 1, `a file of ${count}: nothing more was handed over`);
      const notOpened = `ACH file ${built.id} is not the file its build checked`;
      const alerts = logged.map((line) => JSON.parse(line)).filter((line) =>
        line.level === "error" &&
        line.msg === "a kept ACH file could not be opened: nothing was handed over"
      );
      // One alert at each of its two retries within the minute.
      assert.equal(alerts.length, 2, logged.join("\n"));
      assert.equal(alerts[0].batch_id, built.id);
      assert.ok(
        alerts[0].reason.includes(notOpened) && alerts[0].reason.includes(`the build's ${sha256}`),
        alerts[0].reason,
      );
      // Nothing reached the bank, and everyone knows it: not in doubt, it waits built.
      const [waiting] = await batches(m);
      assert.equal(waiting.status, "built");
      const why = String(waiting.error);
      assert.ok(
        why.startsWith("the kept file could not be opened: ") && why.includes(notOpened),
        why,
      );
      const attempts = await rows(
        m,
        "SELECT attempt, outcome, detail FROM rail_batch_attempts ORDER BY attempt",
      );
      // Its retries within the minute (after 5 s and 30 s) failed the same way.
      assert.deepEqual(attempts, [
        { attempt: 1, outcome: "not_transmitted", detail: "connection refused" },
        { attempt: 2, outcome: "not_transmitted", detail: waiting.error },
        { attempt: 3, outcome: "not_transmitted", detail: waiting.error },
      ]);

      // Its window closes: it is voided and its entries go to the next file, built from the
      // database again, which the bank takes as built.
      await quietly(() => m.advance(24 * 60 * MINUTE_SECONDS));
      const [voided, next] = await batches(m);
      assert.equal(voided.status, "voided");
      assert.equal(next.status, "transmitted");
      assert.equal(next.entry_count, count);
      assert.equal(bank.received.length, 2);
      assert.deepEqual(
        bank.received[1].accountNumbers,
        Array.from({ length: count }, () => ACCOUNT),
      );
    });
  }
});
