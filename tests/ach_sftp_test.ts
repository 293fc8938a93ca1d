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
import { sandboxBankSettings } from "../lib/ach/bank_settings.ts";
import { saveBankSettings } from "../lib/ach/bank_store.ts";
import { ensureInboundPolling, INBOUND_POLL_JOB, inboundPollJob } from "../lib/ach/inbound.ts";
import { runDueJobs } from "../db/scheduler.ts";
import { testSecretBox } from "./helpers.ts";
import {
  COMPANY,
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
        await saveBankSettings(
          tx,
          testSecretBox,
          COMPANY,
          { ...sandboxBankSettings("Acme", "123456789"), sftp: sshd.target },
          "op_admin",
          NOW,
        );
        await ensureInboundPolling(tx, COMPANY, NOW);
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
        await saveBankSettings(
          tx,
          testSecretBox,
          COMPANY,
          { ...sandboxBankSettings("Acme", "123456789"), sftp },
          "op_admin",
          NOW,
        );
        await ensureInboundPolling(tx, COMPANY, NOW);
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
