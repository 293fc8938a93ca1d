/**
 * The bank's SFTP transport against a real OpenSSH server (tests/sshd_helpers.ts): uploads go under
 * a temporary name and are renamed, the host key is checked, a server that is down answers
 * not_uploaded, a failure once the put began throws (the file is then in doubt), and the inbound
 * directory is read and emptied into processed/.
 */
import assert from "node:assert/strict";
import {
  fetchInboundFiles,
  INBOUND_FILE_BYTES_MAX,
  markInboundFilesProcessed,
  markInboundProcessed,
  uploadAchFile,
} from "../lib/ach/transport.ts";
import { sandboxBankSettings, type SftpTarget } from "../lib/ach/bank_settings.ts";
import { saveBankSettings } from "../lib/ach/bank_store.ts";
import {
  ensureInboundPolling,
  INBOUND_POLL_JOB,
  inboundPollJob,
  nextInboundPollAt,
} from "../lib/ach/inbound.ts";
import { JOBS_PER_BATCH_MAX, runDueJobs } from "../db/scheduler.ts";
import { scheduleJob } from "../db/scheduler_store.ts";
import type { WriteTx, WriteUnit } from "../db/writer.ts";
import { checkNachaFile } from "../lib/ach/nacha.ts";
import { ACH_IMPORT_ENTRIES_PER_UNIT_MAX, ACH_IMPORT_RESUME_JOB } from "../lib/ach/import_rules.ts";
import { importResumeJob } from "../lib/ach/import_resume.ts";
import { addFunds } from "../lib/funding/store.ts";
import { jobHandlersOf } from "../lib/payouts/runtime.ts";
import { FakeClock } from "../lib/platform/clock.ts";
import { BATCH_TRANSMIT_LEASE_MS } from "../lib/rails/batch.ts";
import { MONEY_SETTINGS } from "./money_core_helpers.ts";
import { testSecretBox } from "./helpers.ts";
import {
  COMPANY,
  type ImportFixture,
  LINE,
  noticeOf,
  NOW,
  returnFile,
  returnOf,
  ROUTING,
  withImports,
} from "./ach_import_helpers.ts";
import { correctedAccount } from "../lib/ach/corrections.ts";
import { startTestSshd, type TestSshd } from "./sshd_helpers.ts";

const FILE_NAME = "ACH_1234567890_20261124_A.txt";
const encode = (text: string) => new TextEncoder().encode(text);
const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

async function withSshd(fn: (sshd: TestSshd) => Promise<void>): Promise<void> {
  const sshd = await startTestSshd();
  try {
    await fn(sshd);
  } finally {
    await sshd.close();
  }
}

/** In the caller's unit: the company's bank settings with `sftp` as target, its polling planned. */
async function pollingFrom(tx: WriteTx, sftp: SftpTarget | null): Promise<void> {
  await saveBankSettings(
    tx,
    testSecretBox,
    COMPANY,
    { ...sandboxBankSettings("Acme", "123456789"), sftp },
    "op_admin",
    NOW,
  );
  await ensureInboundPolling(tx, COMPANY, NOW);
}

async function names(dir: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(dir)) found.push(entry.name);
  return found.sort();
}

Deno.test("an upload lands under its final name and its temporary name never remains", async () => {
  await withSshd(async (sshd) => {
    const content = encode("101 021000021 1234567890\r\n");
    const answer = await uploadAchFile(sshd.target, FILE_NAME, content);
    assert.deepEqual(answer, { kind: "uploaded", remotePath: `${sshd.outboundDir}/${FILE_NAME}` });
    assert.deepEqual(await names(sshd.outboundDir), [FILE_NAME]);
    assert.deepEqual(await Deno.readFile(`${sshd.outboundDir}/${FILE_NAME}`), content);
    // Full account numbers: readable by the server's owner only, whatever its umask.
    const mode = (await Deno.stat(`${sshd.outboundDir}/${FILE_NAME}`)).mode! & 0o777;
    assert.equal(mode.toString(8), "600");

    // Uploaded again (its answer was lost): the same content there counts as uploaded, once.
    assert.deepEqual(await uploadAchFile(sshd.target, FILE_NAME, content), answer);
    assert.deepEqual(await names(sshd.outboundDir), [FILE_NAME]);

    // Other content under the same name: nobody knows what the bank has.
    await assert.rejects(
      () => uploadAchFile(sshd.target, FILE_NAME, encode("something else")),
      /already exists on the bank's server with other content/,
    );
    assert.deepEqual(await Deno.readFile(`${sshd.outboundDir}/${FILE_NAME}`), content);
  });
});

Deno.test("a wrong host key fingerprint is refused before anything is sent", async () => {
  await withSshd(async (sshd) => {
    const wrong = "SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
    const answer = await uploadAchFile(
      { ...sshd.target, hostKeyFingerprint: wrong },
      FILE_NAME,
      encode("x"),
    );
    assert.deepEqual(answer, {
      kind: "not_uploaded",
      reason:
        `host key mismatch: 127.0.0.1:${sshd.port} presented ${sshd.hostKeyFingerprint}, the bank settings expect ${wrong}`,
    });
    assert.deepEqual(await names(sshd.outboundDir), []);
  });
});

Deno.test("a server that is down answers not_uploaded; once it is up the upload goes through", async () => {
  await withSshd(async (sshd) => {
    await sshd.stop();
    const down = await uploadAchFile(sshd.target, FILE_NAME, encode("x"));
    assert.equal(down.kind, "not_uploaded");
    assert.match(
      (down as { reason: string }).reason,
      new RegExp(`^could not connect to 127\\.0\\.0\\.1:${sshd.port} as .*ECONNREFUSED`),
    );
    await sshd.start();
    assert.equal((await uploadAchFile(sshd.target, FILE_NAME, encode("x"))).kind, "uploaded");
    assert.deepEqual(await names(sshd.outboundDir), [FILE_NAME]);
  });
});

Deno.test("a missing outbound directory and a refused login are not_uploaded", async () => {
  await withSshd(async (sshd) => {
    const missing = `${sshd.root}/no-such-dir`;
    assert.deepEqual(
      await uploadAchFile({ ...sshd.target, outboundDir: missing }, FILE_NAME, encode("x")),
      { kind: "not_uploaded", reason: `the outbound directory ${missing} does not exist` },
    );
    const otherKey = await uploadAchFile(
      { ...sshd.target, privateKey: null, password: "not-the-password" },
      FILE_NAME,
      encode("x"),
    );
    assert.equal(otherKey.kind, "not_uploaded");
    assert.match((otherKey as { reason: string }).reason, /authentication/i);
    assert.deepEqual(await names(sshd.outboundDir), []);
  });
});

Deno.test("a failure once the put began throws: the bank may hold part of the file", async () => {
  await withSshd(async (sshd) => {
    // The temporary name is taken by a directory, so writing it fails after the put started.
    await Deno.mkdir(`${sshd.outboundDir}/.${FILE_NAME}.part`);
    await assert.rejects(() => uploadAchFile(sshd.target, FILE_NAME, encode("x")));
    assert.deepEqual(await names(sshd.outboundDir), [`.${FILE_NAME}.part`]);
  });
});

Deno.test("the inbound directory: plain files only, at most the size limit, then moved to processed/", async () => {
  await withSshd(async (sshd) => {
    await Deno.writeTextFile(`${sshd.inboundDir}/RET_2.txt`, "second");
    await Deno.writeTextFile(`${sshd.inboundDir}/RET_1.txt`, "first");
    await Deno.writeTextFile(`${sshd.inboundDir}/.RET_3.txt.part`, "still arriving");
    await Deno.mkdir(`${sshd.inboundDir}/processed`);
    await Deno.writeTextFile(`${sshd.inboundDir}/processed/OLD.txt`, "old");
    await Deno.writeFile(`${sshd.inboundDir}/BIG.txt`, new Uint8Array(INBOUND_FILE_BYTES_MAX + 1));

    const files = await fetchInboundFiles(sshd.target);
    assert.deepEqual(
      files.map((file) => [file.name, decode(file.content)]),
      [["RET_1.txt", "first"], ["RET_2.txt", "second"]],
    );

    await markInboundProcessed(sshd.target, "RET_1.txt");
    // A name processed before keeps both files.
    await Deno.writeTextFile(`${sshd.inboundDir}/OLD.txt`, "again");
    await markInboundFilesProcessed(sshd.target, ["RET_2.txt", "OLD.txt"]);
    assert.deepEqual(await names(sshd.inboundDir), [".RET_3.txt.part", "BIG.txt", "processed"]);
    const processed = await names(`${sshd.inboundDir}/processed`);
    const renamed = processed.filter((name) => /^OLD\.txt\.[0-9a-f]{8}$/.test(name));
    assert.equal(renamed.length, 1);
    assert.deepEqual(processed, ["OLD.txt", renamed[0], "RET_1.txt", "RET_2.txt"]);
    assert.equal(await Deno.readTextFile(`${sshd.inboundDir}/processed/${renamed[0]}`), "again");
    assert.equal(await Deno.readTextFile(`${sshd.inboundDir}/processed/OLD.txt`), "old");

    assert.deepEqual(await fetchInboundFiles(sshd.target), []);
  });
});

Deno.test("polling a live company's inbound directory imports each file once and moves it to processed/", async () => {
  await withSshd(async (sshd) => {
    await withImports(async (f) => {
      const returned = await f.credit();
      const corrected = await f.credit({ account: "000555000001" });
      await f.database.writer.write(async (tx) => {
        await pollingFrom(tx, sshd.target);
        // Already scheduled: bank:set again adds no second poll.
        await ensureInboundPolling(tx, COMPANY, NOW);
      });
      const returns = returnFile([returnOf(returned, "R03")]);
      await Deno.writeTextFile(`${sshd.inboundDir}/RET_20261124_A.txt`, returns);
      await Deno.writeTextFile(
        `${sshd.inboundDir}/NOC_20261124_A.txt`,
        returnFile([noticeOf(corrected, "C01", { accountNumber: "000555000009" })]),
      );
      await Deno.writeTextFile(`${sshd.inboundDir}/notes.csv`, "not,a,nacha,file\n");
      await Deno.writeTextFile(`${sshd.inboundDir}/.RET_2.txt.part`, "still arriving");

      const handlers = { [INBOUND_POLL_JOB]: inboundPollJob(f.deps) };
      const pollJobs = () =>
        f.rows(
          "SELECT due_at, done_at, error FROM scheduled_jobs WHERE kind = ? ORDER BY due_at",
          INBOUND_POLL_JOB,
        );
      assert.deepEqual(await pollJobs(), [{ due_at: NOW, done_at: null, error: null }]);
      assert.equal(await runDueJobs(f.database, COMPANY, NOW, handlers), 1);

      assert.deepEqual(
        await f.rows("SELECT status, failure_reason FROM payouts WHERE id = ?", returned.payoutId),
        [{ status: "modality_offered", failure_reason: "R03" }],
      );
      assert.deepEqual(
        await f.database.writer.write((tx) =>
          correctedAccount(tx, testSecretBox, COMPANY, {
            routingNumber: ROUTING,
            accountNumber: "000555000001",
            accountType: "checking",
          })
        ),
        { routingNumber: ROUTING, accountNumber: "000555000009", accountType: "checking" },
      );
      assert.deepEqual(
        await f.rows(
          "SELECT company_id, source, file_name, applied_count FROM ach_imports ORDER BY file_name",
        ),
        [
          {
            company_id: COMPANY,
            source: "sftp",
            file_name: "NOC_20261124_A.txt",
            applied_count: 1,
          },
          {
            company_id: COMPANY,
            source: "sftp",
            file_name: "RET_20261124_A.txt",
            applied_count: 1,
          },
        ],
      );
      // Imported and refused files alike are moved; a file still arriving stays.
      assert.deepEqual(await names(sshd.inboundDir), [".RET_2.txt.part", "processed"]);
      assert.deepEqual(await names(`${sshd.inboundDir}/processed`), [
        "NOC_20261124_A.txt",
        "RET_20261124_A.txt",
        "notes.csv",
      ]);
      // The next poll is 15 minutes later.
      assert.deepEqual(
        (await pollJobs()).map((job) => [job.due_at, job.done_at === null, job.error]),
        [[NOW, false, null], [NOW + 15 * 60_000, true, null]],
      );

      // The bank drops the same return file again under another name: a duplicate, moved.
      await Deno.writeTextFile(`${sshd.inboundDir}/RET_20261124_B.txt`, returns);
      const before = await f.snapshot();
      assert.equal(await runDueJobs(f.database, COMPANY, NOW + 15 * 60_000, handlers), 1);
      assert.deepEqual(await f.snapshot(), before);
      assert.deepEqual(await names(sshd.inboundDir), [".RET_2.txt.part", "processed"]);
      assert.equal((await names(`${sshd.inboundDir}/processed`)).length, 4);

      // The server down: the poll logs it and the next one is scheduled all the same.
      await sshd.stop();
      assert.equal(await runDueJobs(f.database, COMPANY, NOW + 30 * 60_000, handlers), 1);
      assert.deepEqual(
        (await pollJobs()).map((job) => [job.due_at, job.done_at === null, job.error]),
        [
          [NOW, false, null],
          [NOW + 15 * 60_000, false, null],
          [NOW + 30 * 60_000, false, null],
          [NOW + 45 * 60_000, true, null],
        ],
      );
    }, "live");
  });
});

Deno.test("the next poll is the first 15-minute slot after the run, on the poll's own grid", () => {
  const slot = 15 * 60_000;
  const cases: [string, number, number][] = [
    ["on time", NOW, NOW + slot],
    ["late within its slot", NOW + slot - 1, NOW + slot],
    ["exactly on the next slot", NOW + slot, NOW + 2 * slot],
    ["5 hours 7 minutes late", NOW + 5 * 3_600_000 + 7 * 60_000, NOW + 21 * slot],
  ];
  for (const [name, runUntil, next] of cases) {
    assert.equal(nextInboundPollAt(NOW, runUntil), next, name);
  }
  assert.throws(
    () => nextInboundPollAt(NOW, NOW - 1),
    new Error(`a poll due at ${NOW} cannot run before it is due (now ${NOW - 1})`),
  );
});

Deno.test("after hours down, one poll imports everything waiting and the next is due at the next slot after now", async () => {
  await withSshd(async (sshd) => {
    await withImports(async (f) => {
      const returned = await f.credit();
      await f.database.writer.write(async (tx) => {
        await pollingFrom(tx, sshd.target);
      });
      // Both rails' files arrived while the service was down.
      await Deno.writeTextFile(
        `${sshd.inboundDir}/RET_20261124_A.txt`,
        returnFile([returnOf(returned, "R03")]),
      );
      await Deno.writeTextFile(
        `${sshd.inboundDir}/PAID_20261124.csv`,
        "check_number,amount,paid_date\n5001,125.00,2026-11-24\n",
      );
      const handlers = { [INBOUND_POLL_JOB]: inboundPollJob(f.deps) };
      const pollJobs = () =>
        f.rows(
          "SELECT due_at, done_at IS NULL AS pending FROM scheduled_jobs WHERE kind = ? ORDER BY due_at",
          INBOUND_POLL_JOB,
        );
      const sweepAt = async (at: number) =>
        await runDueJobs(f.database, COMPANY, at, handlers, {
          perBatch: JOBS_PER_BATCH_MAX,
          clock: new FakeClock(at),
        });

      const back = NOW + 5 * 3_600_000 + 7 * 60_000;
      assert.equal(await sweepAt(back), 1);
      assert.deepEqual(
        await f.rows("SELECT status, failure_reason FROM payouts WHERE id = ?", returned.payoutId),
        [{ status: "modality_offered", failure_reason: "R03" }],
      );
      assert.deepEqual(await f.rows("SELECT source FROM ach_imports"), [{ source: "sftp" }]);
      assert.deepEqual(await f.rows("SELECT source, item_count FROM check_paid_imports"), [
        { source: "sftp", item_count: 1 },
      ]);
      assert.deepEqual(await names(`${sshd.inboundDir}/processed`), [
        "PAID_20261124.csv",
        "RET_20261124_A.txt",
      ]);
      const nextSlot = NOW + 21 * 15 * 60_000;
      assert.deepEqual(await pollJobs(), [
        { due_at: NOW, pending: 0 },
        { due_at: nextSlot, pending: 1 },
      ]);

      // Nothing is due again before that slot; on time at it, the grid goes on.
      assert.equal(await sweepAt(nextSlot - 1), 0);
      assert.equal(await sweepAt(nextSlot), 1);
      assert.deepEqual((await pollJobs()).filter((job) => job.pending === 1), [
        { due_at: nextSlot + 15 * 60_000, pending: 1 },
      ]);
    }, "live");
  });
});

Deno.test("a poll whose import fails between units leaves the file in the inbound directory; the next poll's import goes on where it stopped", async () => {
  await withSshd(async (sshd) => {
    await withImports(async (f) => {
      // More than one unit's returns: the failure falls in the second unit.
      const credits = [];
      for (let n = 0; n < ACH_IMPORT_ENTRIES_PER_UNIT_MAX + 5; n++) {
        credits.push(await f.credit({ amountCents: 1_000 + n }));
      }
      const failing = credits[ACH_IMPORT_ENTRIES_PER_UNIT_MAX + 2].payoutId;
      await f.database.writer.write(async (tx) => {
        await pollingFrom(tx, sshd.target);
        await tx.execute(
          `CREATE TRIGGER fail_one BEFORE UPDATE ON payouts WHEN OLD.id = '${failing}'
             BEGIN SELECT RAISE(ABORT, 'the disk failed'); END`,
        );
      });
      await Deno.writeTextFile(
        `${sshd.inboundDir}/RET_20261124_A.txt`,
        returnFile(credits.map((credit) => returnOf(credit, "R03"))),
      );
      const handlers = {
        [INBOUND_POLL_JOB]: inboundPollJob(f.deps),
        [ACH_IMPORT_RESUME_JOB]: importResumeJob(f.deps),
      };
      const returned = () =>
        f.rows("SELECT count(*) AS n FROM payouts WHERE failure_reason = 'R03'");

      assert.equal(await quietly(() => runDueJobs(f.database, COMPANY, NOW, handlers)), 1);
      assert.deepEqual(await returned(), [{ n: ACH_IMPORT_ENTRIES_PER_UNIT_MAX }]);
      assert.deepEqual(await names(sshd.inboundDir), ["RET_20261124_A.txt"]);
      assert.deepEqual(
        await f.rows("SELECT applied_count, progress IS NULL AS complete FROM ach_imports"),
        [{ applied_count: ACH_IMPORT_ENTRIES_PER_UNIT_MAX, complete: 0 }],
      );

      await f.database.writer.write((tx) => tx.execute("DROP TRIGGER fail_one"));
      // The import's resume job, due when its claim lapsed, goes on from where it stopped; the
      // next poll finds the file imported and moves it.
      const nextSlot = NOW + 15 * 60_000;
      assert.equal(await runDueJobs(f.database, COMPANY, nextSlot, handlers), 2);
      assert.deepEqual(await returned(), [{ n: credits.length }]);
      assert.deepEqual(
        await f.rows(
          `SELECT count(*) AS n FROM payout_transitions
            WHERE from_status = 'funds_sent' AND to_status = 'failed'`,
        ),
        [{ n: credits.length }],
      );
      assert.deepEqual(
        await f.rows("SELECT source, applied_count, progress FROM ach_imports"),
        [{ source: "sftp", applied_count: credits.length, progress: null }],
      );
      assert.deepEqual(await names(`${sshd.inboundDir}/processed`), ["RET_20261124_A.txt"]);
    }, "live");
  });
});

Deno.test("a poll that finds another poll of the company pending schedules none", async () => {
  await withSshd(async (sshd) => {
    await withImports(async (f) => {
      const later = NOW + 24 * 3_600_000;
      await f.database.writer.write(async (tx) => {
        await pollingFrom(tx, sshd.target);
        await scheduleJob(tx, {
          companyId: COMPANY,
          kind: INBOUND_POLL_JOB,
          subjectId: COMPANY,
          dueAt: later,
        }, NOW);
      });
      assert.equal(
        await runDueJobs(f.database, COMPANY, NOW, { [INBOUND_POLL_JOB]: inboundPollJob(f.deps) }),
        1,
      );
      assert.deepEqual(
        await f.rows(
          "SELECT due_at FROM scheduled_jobs WHERE kind = ? AND done_at IS NULL",
          INBOUND_POLL_JOB,
        ),
        [{ due_at: later }],
      );
    }, "live");
  });
});

Deno.test("no polling in the test environment, whatever is configured, nor for a live company without an SFTP target", async () => {
  const unreachable = {
    host: "127.0.0.1",
    port: 9,
    username: "nobody",
    privateKey: null,
    password: "x",
    hostKeyFingerprint: null,
    outboundDir: "/out",
    inboundDir: "/in",
  };
  for (
    const [environment, sftp] of [["test", unreachable], ["live", null]] as const
  ) {
    await withImports(async (f) => {
      await f.database.writer.write(async (tx) => {
        await pollingFrom(tx, sftp);
      });
      assert.equal(
        await runDueJobs(f.database, COMPANY, NOW, { [INBOUND_POLL_JOB]: inboundPollJob(f.deps) }),
        1,
      );
      // Done in its claiming unit, and no next poll.
      assert.deepEqual(
        await f.rows("SELECT done_at, error FROM scheduled_jobs WHERE kind = ?", INBOUND_POLL_JOB),
        [{ done_at: NOW, error: null }],
        environment,
      );
    }, environment);
  }
});

/** 10:30 in New York on Tuesday 2026-11-24: the sandbox bank's first same-day cutoff. */
const CUTOFF = NOW + 30 * 60_000;
/** Its transmission window: 30 minutes. */
const WINDOW_ENDS = CUTOFF + 30 * 60_000;

/**
 * A live company whose bank settings send files to the test sshd, with a $1,234.56 ACH funding
 * queued (its debit is the file's one entry); jobs run with real time (leases) on a fake clock.
 */
async function withLiveSftpFile(
  fn: (
    f: ImportFixture,
    sshd: TestSshd,
    runUntil: (at: number) => Promise<number>,
  ) => Promise<void>,
): Promise<void> {
  await withSshd(async (sshd) => {
    await withImports(async (f) => {
      const clock = new FakeClock(NOW);
      const handlers = jobHandlersOf("live", MONEY_SETTINGS, f.database, testSecretBox);
      await f.database.writer.write(async (tx) => {
        await saveBankSettings(
          tx,
          testSecretBox,
          COMPANY,
          { ...sandboxBankSettings("Acme", "123456789"), sftp: sshd.target },
          "op_admin",
          NOW,
        );
        const funded = await addFunds(
          tx,
          {
            companyId: COMPANY,
            lineId: LINE,
            paymentMethod: "ACH",
            amountCents: 123_456,
            description: "ACH funding",
            largeDisbursement: false,
            requestFingerprint: "ach",
          },
          "live",
          NOW,
        );
        assert.ok(funded.ok, funded.ok ? "" : funded.message);
      });
      const runUntil = (at: number) => {
        clock.set(Math.max(clock.now(), at));
        return runDueJobs(f.database, COMPANY, at, handlers, { clock });
      };
      await fn(f, sshd, runUntil);
    }, "live");
  });
}

const fileBatches = (f: ImportFixture) =>
  f.rows(
    `SELECT b.status, b.error, a.file_name, a.effective_date FROM rail_batches b
       JOIN ach_files a ON a.batch_id = b.id ORDER BY b.created_at`,
  );

const debitEntries = (f: ImportFixture) =>
  f.rows(
    `SELECT status, trace_number, effective_date FROM rail_batch_entries
      WHERE funding_id IS NOT NULL ORDER BY created_at, rowid`,
  );

Deno.test("the pipeline over SFTP: the bank's server down at the cutoff, the upload is retried and lands once it is up", async () => {
  await withLiveSftpFile(async (f, sshd, runUntil) => {
    await sshd.stop();
    await quietly(() => runUntil(CUTOFF));
    const [refused] = await fileBatches(f);
    assert.equal(refused.status, "built");
    assert.match(String(refused.error), /^could not connect to 127\.0\.0\.1:\d+ as .*ECONNREFUSED/);
    assert.deepEqual(await names(sshd.outboundDir), []);

    await sshd.start();
    await runUntil(CUTOFF + 10 * 60_000);
    const [transmitted] = await fileBatches(f);
    assert.deepEqual(
      { ...transmitted },
      {
        status: "transmitted",
        error: null,
        file_name: "ACH_1123456789_20261124_A.txt",
        effective_date: "2026-11-24",
      },
    );
    assert.deepEqual(await names(sshd.outboundDir), ["ACH_1123456789_20261124_A.txt"]);
    const file = checkNachaFile(
      await Deno.readTextFile(`${sshd.outboundDir}/ACH_1123456789_20261124_A.txt`),
      { odfi: "02100002" },
    );
    assert.ok(file.ok, file.ok ? "" : file.message);
    assert.equal(file.value.debitTotalCents, 123_456);
    assert.deepEqual((await debitEntries(f)).map((entry) => entry.status), ["sent"]);
  });
});

Deno.test("the pipeline over SFTP: the window closes with the server down, the file is voided and its entry goes in the next file with a new trace", async () => {
  await withLiveSftpFile(async (f, sshd, runUntil) => {
    await sshd.stop();
    // The cutoff builds its file and fails to upload it; the retries fail until the window ends.
    await quietly(() => runUntil(CUTOFF));
    await quietly(() => runUntil(WINDOW_ENDS + 60_000));
    assert.deepEqual((await fileBatches(f)).map((batch) => batch.status), ["voided"]);
    const [voided, queued] = await debitEntries(f);
    assert.deepEqual([voided.status, queued.status], ["voided", "queued"]);
    assert.deepEqual(await names(sshd.outboundDir), []);
    assert.deepEqual(
      await f.rows("SELECT action, object_type FROM audit_log WHERE action = 'ach:void'"),
      [{ action: "ach:void", object_type: "ach_file" }],
    );

    // Up again by the 14:45 cutoff: the entry leaves in a new file, under a new trace.
    await sshd.start();
    await runUntil(NOW + 5 * 3_600_000);
    const batches = await fileBatches(f);
    assert.deepEqual(batches.map((batch) => batch.status), ["voided", "transmitted"]);
    assert.deepEqual(await names(sshd.outboundDir), [String(batches[1].file_name)]);
    const entries = await debitEntries(f);
    assert.deepEqual(entries.map((entry) => entry.status), ["voided", "sent"]);
    assert.notEqual(entries[1].trace_number, entries[0].trace_number);
  });
});

Deno.test("the pipeline over SFTP: a crash between the upload and its record leaves the file in doubt, never uploaded again", async () => {
  await withLiveSftpFile(async (f, sshd, runUntil) => {
    // The process "stops" the moment the file is on the bank's server: no write gets through.
    const writer = f.database.writer;
    const write = writer.write.bind(writer);
    const uploaded = () =>
      [...Deno.readDirSync(sshd.outboundDir)].some((entry) => !entry.name.startsWith("."));
    writer.write = <T>(unit: WriteUnit<T>): Promise<T> =>
      uploaded() ? Promise.reject(new Error("the process stopped")) : write(unit);
    await quietly(() => assert.rejects(() => runUntil(CUTOFF)));
    writer.write = write;
    assert.deepEqual(await names(sshd.outboundDir), ["ACH_1123456789_20261124_A.txt"]);
    assert.deepEqual((await fileBatches(f)).map((batch) => batch.status), ["transmitting"]);

    // The bank picks the file up; after a restart, once the claim expired, the job runs again.
    await Deno.remove(`${sshd.outboundDir}/ACH_1123456789_20261124_A.txt`);
    await quietly(() => runUntil(CUTOFF + BATCH_TRANSMIT_LEASE_MS + 60_000));
    assert.deepEqual((await fileBatches(f)).map((batch) => batch.status), ["in_doubt"]);
    assert.deepEqual(await names(sshd.outboundDir), [], "never uploaded a second time");
    assert.deepEqual((await debitEntries(f)).map((entry) => entry.status), ["batched"]);
  });
});

/** Silences the log lines of a test's deliberate failures. */
async function quietly<T>(fn: () => Promise<T>): Promise<T> {
  const original = console.error;
  console.error = () => {};
  try {
    return await fn();
  } finally {
    console.error = original;
  }
}
