/**
 * Statements from the bank's SFTP inbound directory (a real OpenSSH server, tests/sshd_helpers.ts):
 * a BAI2 or camt.053 file beside the return files is imported for the company whose directory it
 * is, once, and moved to processed/; a malformed one is refused whole and moved too.
 */
import assert from "node:assert/strict";
import { sandboxBankSettings } from "../lib/ach/bank_settings.ts";
import { saveBankSettings } from "../lib/ach/bank_store.ts";
import { ensureInboundPolling, INBOUND_POLL_JOB, inboundPollJob } from "../lib/ach/inbound.ts";
import { runDueJobs } from "../db/scheduler.ts";
import { writeBai2 } from "../lib/reconciliation/bai2_writer.ts";
import { COMPANY, NOW, withImports } from "./ach_import_helpers.ts";
import { testSecretBox } from "./helpers.ts";
import { startTestSshd } from "./sshd_helpers.ts";

async function names(dir: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(dir)) found.push(entry.name);
  return found.sort();
}

Deno.test("a statement in the inbound directory is imported once for its company and moved to processed/", async () => {
  const sshd = await startTestSshd();
  try {
    await withImports(async (f) => {
      await f.database.writer.write(async (tx) => {
        await saveBankSettings(
          tx,
          testSecretBox,
          COMPANY,
          {
            ...sandboxBankSettings("Acme", "123456789"),
            sftp: sshd.target,
            statementAccounts: ["000900000002"],
          },
          "op_admin",
          NOW,
        );
        await ensureInboundPolling(tx, COMPANY, NOW);
      });
      // The wire the fixture funded with arrived on its day; the bank says so.
      const statement = writeBai2({
        senderId: "021000021",
        receiverId: "ACME",
        createdDate: "2026-11-25",
        createdTime: "0200",
        fileId: "1",
        asOfDate: "2026-11-24",
      }, [{
        accountNumber: "000900000002",
        openingCents: 0,
        closingCents: 10_000_000,
        lines: [{
          line: 0,
          direction: "credit",
          amountCents: 10_000_000,
          typeCode: "195",
          kind: "wire",
          bankReference: "FW1",
          customerReference: null,
          text: "INCOMING WIRE",
        }],
      }]);
      await Deno.writeTextFile(`${sshd.inboundDir}/PRIOR_DAY_20261124.bai`, statement);
      await Deno.writeTextFile(`${sshd.inboundDir}/BROKEN.bai`, statement.replace("99,", "98,"));
      const handlers = { [INBOUND_POLL_JOB]: inboundPollJob(f.deps) };
      assert.equal(await runDueJobs(f.database, COMPANY, NOW + 86_400_000, handlers), 1);
      assert.deepEqual(
        await f.rows(
          "SELECT company_id, source, file_name, day_count, matched_count, exception_count FROM statement_imports",
        ),
        [{
          company_id: COMPANY,
          source: "sftp",
          file_name: "PRIOR_DAY_20261124.bai",
          day_count: 1,
          matched_count: 1,
          exception_count: 0,
        }],
      );
      assert.deepEqual(await names(sshd.inboundDir), ["processed"]);
      assert.deepEqual(await names(`${sshd.inboundDir}/processed`), [
        "BROKEN.bai",
        "PRIOR_DAY_20261124.bai",
      ]);
      // The same statement again under another name: imported before, nothing changes.
      await Deno.writeTextFile(`${sshd.inboundDir}/PRIOR_DAY_AGAIN.bai`, statement);
      assert.equal(
        await runDueJobs(f.database, COMPANY, NOW + 86_400_000 + 15 * 60_000, handlers),
        1,
      );
      assert.deepEqual(await f.rows("SELECT count(*) AS n FROM statement_imports"), [{ n: 1 }]);
      assert.deepEqual(await f.rows("SELECT count(*) AS n FROM statement_days"), [{ n: 1 }]);
    }, "live");
  } finally {
    await sshd.close();
  }
});
