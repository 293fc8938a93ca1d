/**
 * Scheduled backups (issue 21): when one is due, how many are kept with their .sha256, the copy
 * to a mounted directory, the upload to an S3-compatible target (against a local server that
 * checks PutObject as the S3 API documents it, signature included), the restore drill under
 * load, the configuration keys, and the worker started by main.ts.
 */
import assert from "node:assert/strict";
import { createHash, createHmac } from "node:crypto";
import { freePort } from "../bench/service.ts";
import { openDatabase } from "../db/client.ts";
import { ScheduledBackups, type ScheduledBackupSettings } from "../lib/backup/jobs.ts";
import { restoreBackup } from "../lib/backup/restore.ts";
import {
  backupFileName,
  backupsBeyond,
  backupTakenAt,
  isBackupDue,
} from "../lib/backup/schedule.ts";
import { verifyLedger } from "../lib/ledger/reports.ts";
import { FakeClock } from "../lib/platform/clock.ts";
import { ConfigError, loadConfig } from "../lib/platform/config.ts";
import { fundAcmeAuto, type HttpFixture, withHttpFixture } from "./http_fixture.ts";

const ACCESS_KEY_ID = "AKIDTESTBACKUPS";
const SECRET_ACCESS_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
const REGION = "us-east-1";

const sha256 = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex");
const hmac = (key: Uint8Array | string, text: string) =>
  new Uint8Array(createHmac("sha256", key).update(text).digest());

interface StoredObject {
  readonly key: string;
  readonly body: Uint8Array;
  readonly authorization: string;
}

/**
 * PutObject as the S3 API documents it, path style (`PUT /bucket/key`): Content-Length is
 * required (411 MissingContentLength), x-amz-content-sha256 must be the body's SHA-256 (400
 * XAmzContentSHA256Mismatch), and the AWS Signature V4 in Authorization must verify with the
 * secret key (403 SignatureDoesNotMatch), computed here independently of the client's library.
 */
function startS3(): { url: string; objects: StoredObject[]; close(): Promise<void> } {
  const objects: StoredObject[] = [];
  const error = (status: number, code: string) =>
    new Response(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code></Error>`, {
      status,
      headers: { "Content-Type": "application/xml" },
    });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const url = new URL(req.url);
    if (req.method !== "PUT") return error(405, "MethodNotAllowed");
    if (req.headers.get("content-length") === null) return error(411, "MissingContentLength");
    const body = new Uint8Array(await req.arrayBuffer());
    if (body.length !== Number(req.headers.get("content-length"))) {
      return error(400, "IncompleteBody");
    }
    const payloadHash = req.headers.get("x-amz-content-sha256") ?? "";
    if (payloadHash !== sha256(body)) return error(400, "XAmzContentSHA256Mismatch");
    const authorization = req.headers.get("authorization") ?? "";
    const parts =
      /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/
        .exec(authorization);
    if (!parts || parts[1] !== ACCESS_KEY_ID) return error(403, "InvalidAccessKeyId");
    const [, , date, region, signedHeaders, signature] = parts;
    const amzDate = req.headers.get("x-amz-date") ?? "";
    const canonicalRequest = [
      "PUT",
      url.pathname,
      url.search.slice(1),
      ...signedHeaders.split(";").map((name) =>
        `${name}:${(req.headers.get(name) ?? "").trim().replace(/\s+/g, " ")}`
      ),
      "",
      signedHeaders,
      payloadHash,
    ].join("\n");
    const scope = `${date}/${region}/s3/aws4_request`;
    const stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, sha256(canonicalRequest)].join("\n");
    const key = ["s3", "aws4_request"].reduce(
      (k, part) => hmac(k, part),
      hmac(hmac(`AWS4${SECRET_ACCESS_KEY}`, date), region),
    );
    const expected = createHmac("sha256", key).update(stringToSign).digest("hex");
    if (expected !== signature || !signedHeaders.split(";").includes("host")) {
      return error(403, "SignatureDoesNotMatch");
    }
    objects.push({ key: decodeURIComponent(url.pathname), body, authorization });
    return new Response(null, { status: 200, headers: { ETag: `"${sha256(body).slice(0, 32)}"` } });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/insurer-backups/disbursements`,
    objects,
    close: () => server.shutdown(),
  };
}

function settingsFor(
  work: string,
  extra: Partial<ScheduledBackupSettings> = {},
): ScheduledBackupSettings {
  return {
    dir: `${work}/backups`,
    copyDir: null,
    s3: null,
    intervalMinutes: 60,
    keep: 2,
    busyTimeoutMs: 5000,
    ...extra,
  };
}

const urlsOf = (f: HttpFixture) => ({
  live: f.deps.databases.live.url,
  test: f.deps.databases.test.url,
});

async function listDir(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) names.push(entry.name);
  return names.sort();
}

Deno.test("the schedule's rules: names in UTC, due after an interval, the newest N kept", () => {
  const at = Date.UTC(2026, 10, 24, 9, 30, 5);
  assert.equal(backupFileName(at), "backup-20261124T093005Z.tar");
  assert.equal(backupTakenAt("backup-20261124T093005Z.tar"), at);
  assert.equal(backupTakenAt("backup-20261124T093005Z.tar.sha256"), null);
  assert.equal(backupTakenAt("notes.tar"), null);
  assert.equal(isBackupDue(null, at, 60), true);
  assert.equal(isBackupDue(at, at + 59 * 60_000 + 59_999, 60), false);
  assert.equal(isBackupDue(at, at + 60 * 60_000, 60), true);
  assert.equal(isBackupDue(null, at, 0), false);
  const names = [
    "backup-20261124T080000Z.tar",
    "backup-20261124T080000Z.tar.sha256",
    "backup-20261124T100000Z.tar",
    "backup-20261124T090000Z.tar",
    "keep-me.txt",
  ];
  assert.deepEqual(backupsBeyond(names, 2), ["backup-20261124T080000Z.tar"]);
  assert.deepEqual(backupsBeyond(names, 3), []);
  assert.deepEqual(backupsBeyond(names, 1), [
    "backup-20261124T080000Z.tar",
    "backup-20261124T090000Z.tar",
  ]);
});

Deno.test("scheduled backups: one per interval, the newest 2 kept with their .sha256, copied and uploaded", async () => {
  await withHttpFixture(async (f) => {
    const work = await Deno.makeTempDir({ prefix: "backup-schedule-" });
    const s3 = startS3();
    try {
      const clock = new FakeClock(Date.UTC(2026, 10, 24, 8, 0, 0));
      const logs: Record<string, unknown>[] = [];
      const settings = settingsFor(work, {
        copyDir: `${work}/mounted`,
        s3: {
          url: s3.url,
          region: REGION,
          accessKeyId: ACCESS_KEY_ID,
          secretAccessKey: SECRET_ACCESS_KEY,
        },
      });
      const backups = new ScheduledBackups(urlsOf(f), settings, clock, (entry) => logs.push(entry));
      // Leftovers of a backup a crash cut short are swept away; other files stay.
      await Deno.mkdir(`${work}/backups/.scheduled-backup-abc`, { recursive: true });
      await Deno.writeTextFile(`${work}/backups/backup-20261124T070000Z.tar.partial`, "half");
      await Deno.writeTextFile(`${work}/backups/README.txt`, "ours");

      const taken: string[] = [];
      for (const minutes of [0, 0, 59, 1, 60, 30, 30]) {
        clock.advance(minutes * 60_000);
        await fundAcmeAuto(f, 100);
        const outcome = await backups.sweep();
        if (outcome.taken) taken.push(outcome.taken.file.split("/").at(-1)!);
      }
      assert.deepEqual(taken, [
        "backup-20261124T080000Z.tar",
        "backup-20261124T090000Z.tar",
        "backup-20261124T100000Z.tar",
        "backup-20261124T110000Z.tar",
      ]);
      const kept = ["backup-20261124T100000Z.tar", "backup-20261124T110000Z.tar"];
      const withSidecars = kept.flatMap((name) => [name, `${name}.sha256`]);
      assert.deepEqual(await listDir(`${work}/backups`), ["README.txt", ...withSidecars]);
      assert.deepEqual(await listDir(`${work}/mounted`), withSidecars);
      for (const name of kept) {
        const bytes = await Deno.readFile(`${work}/backups/${name}`);
        assert.equal(
          await Deno.readTextFile(`${work}/backups/${name}.sha256`),
          `${sha256(bytes)}  ${name}\n`,
        );
        assert.deepEqual(await Deno.readFile(`${work}/mounted/${name}`), bytes);
      }
      assert.deepEqual(
        logs.map((entry) => [entry.msg, String(entry.file).split("/").at(-1), entry.deleted]),
        [
          ["backup written", taken[0], []],
          ["backup written", taken[1], []],
          ["backup written", taken[2], [taken[0]]],
          ["backup written", taken[3], [taken[1]]],
        ],
      );

      // Every backup and its .sha256 reached the bucket whole, signed (S3 keeps them all: expire
      // old ones with the bucket's lifecycle rules).
      assert.deepEqual(
        s3.objects.map((object) => object.key),
        taken.flatMap((name) => [
          `/insurer-backups/disbursements/${name}`,
          `/insurer-backups/disbursements/${name}.sha256`,
        ]),
      );
      for (
        const object of s3.objects.filter((o) => kept.some((name) => o.key.endsWith(`/${name}`)))
      ) {
        assert.deepEqual(
          object.body,
          await Deno.readFile(`${work}/backups/${object.key.split("/").at(-1)}`),
        );
        assert.match(
          object.authorization,
          /^AWS4-HMAC-SHA256 Credential=AKIDTESTBACKUPS\/\d{8}\/us-east-1\/s3\/aws4_request/,
        );
      }

      // A restart reads the schedule from the names: the newest is 30 minutes old, nothing is due.
      const restarted = new ScheduledBackups(urlsOf(f), settings, clock, () => {});
      clock.advance(30 * 60_000 - 1);
      assert.equal((await restarted.sweep()).taken, null);
    } finally {
      await s3.close();
      await Deno.remove(work, { recursive: true });
    }
  });
});

Deno.test("an upload the target refuses fails the sweep, naming the answer; the local backup stays", async () => {
  await withHttpFixture(async (f) => {
    const work = await Deno.makeTempDir({ prefix: "backup-schedule-" });
    const s3 = startS3();
    try {
      const clock = new FakeClock(Date.UTC(2026, 10, 24, 8, 0, 0));
      const backups = new ScheduledBackups(
        urlsOf(f),
        settingsFor(work, {
          s3: {
            url: s3.url,
            region: REGION,
            accessKeyId: ACCESS_KEY_ID,
            secretAccessKey: "not-the-secret",
          },
        }),
        clock,
        () => {},
      );
      await assert.rejects(
        backups.sweep(),
        new RegExp(
          `^Error: backup backup-20261124T080000Z\\.tar written, but upload: PUT ${s3.url}/backup-20261124T080000Z\\.tar failed: 403 .*SignatureDoesNotMatch`,
        ),
      );
      assert.deepEqual(s3.objects, []);
      assert.deepEqual(await listDir(`${work}/backups`), [
        "backup-20261124T080000Z.tar",
        "backup-20261124T080000Z.tar.sha256",
      ]);
    } finally {
      await s3.close();
      await Deno.remove(work, { recursive: true });
    }
  });
});

Deno.test("restore drill: the latest copy, taken under load, restores with ledger:verify clean and the counts of its moment", async () => {
  await withHttpFixture(async (f) => {
    const work = await Deno.makeTempDir({ prefix: "backup-drill-" });
    try {
      for (let i = 0; i < 20; i++) await fundAcmeAuto(f, 1_000 + i);
      const clock = new FakeClock(Date.UTC(2026, 10, 24, 8, 0, 0));
      const backups = new ScheduledBackups(
        urlsOf(f),
        settingsFor(work, { copyDir: `${work}/mounted`, intervalMinutes: 15, keep: 3 }),
        clock,
        () => {},
      );
      await backups.sweep();
      let acknowledged = 20;
      let loading = true;
      const load = (async () => {
        while (loading) {
          await fundAcmeAuto(f, 500);
          acknowledged++;
        }
      })();
      await new Promise((resolve) => setTimeout(resolve, 50));
      clock.advance(15 * 60_000);
      const before = acknowledged;
      const outcome = await backups.sweep();
      const after = acknowledged;
      loading = false;
      await load;
      assert.ok(outcome.taken);
      const manifest = outcome.taken.manifest;
      const manifestRows = manifest.databases.test.rows;
      assert.ok(
        manifestRows.fundings >= before && manifestRows.fundings <= after,
        `the copy holds ${manifestRows.fundings} fundings; ${before} were acknowledged when it began, ${after} when it ended`,
      );
      assert.ok(acknowledged > manifestRows.fundings, "writes went on after the copy");

      // The drill: the latest copy in the mounted directory, into an empty data directory.
      const latest = (await listDir(`${work}/mounted`)).filter((name) => name.endsWith(".tar")).at(
        -1,
      )!;
      assert.equal(latest, "backup-20261124T081500Z.tar");
      const restored = await restoreBackup({
        from: `${work}/mounted/${latest}`,
        dataDir: `${work}/drill`,
      });
      assert.ok(restored.ok, JSON.stringify(restored));
      assert.equal(restored.value.sha256Checked, "sha256_file");
      for (const environment of ["live", "test"] as const) {
        const database = await openDatabase({
          environment,
          url: `file:${work}/drill/${environment}.db`,
          busyTimeoutMs: 5000,
          unitsPerGroupMax: 512,
          readCacheEntries: 0,
        });
        try {
          assert.deepEqual(await verifyLedger(database.readClient), []);
          for (
            const [table, n] of Object.entries(manifest.databases[environment].rows)
          ) {
            const { rows } = await database.readClient.execute(
              `SELECT count(*) AS n FROM ${table}`,
            );
            assert.equal(Number(rows[0].n), n, `${environment}.${table}`);
          }
        } finally {
          await database.close();
        }
      }
    } finally {
      await Deno.remove(work, { recursive: true });
    }
  });
});

Deno.test("BACKUP_* settings are validated, each error naming its key", () => {
  const base = {
    JWT_SECRET: "j".repeat(40),
    ENCRYPTION_KEY: btoa("e".repeat(32)),
    DATA_DIR: "/srv/data/",
  };
  const defaults = loadConfig(base);
  assert.equal(defaults.limits.BACKUP_INTERVAL_MINUTES, 0);
  assert.equal(defaults.limits.BACKUP_KEEP, 7);
  assert.deepEqual(defaults.backup, { dir: "/srv/data/backups", copyDir: null, s3: null });
  const full = loadConfig({
    ...base,
    BACKUP_INTERVAL_MINUTES: "60",
    BACKUP_KEEP: "24",
    BACKUP_DIR: "/var/backups/disbursements",
    BACKUP_COPY_DIR: "/mnt/offsite",
    BACKUP_S3_URL: "https://s3.eu-west-1.amazonaws.com/insurer-backups/disbursements/",
    BACKUP_S3_REGION: "eu-west-1",
    BACKUP_S3_ACCESS_KEY_ID: "AKID",
    BACKUP_S3_SECRET_ACCESS_KEY: "secret",
  });
  assert.equal(full.limits.BACKUP_INTERVAL_MINUTES, 60);
  assert.equal(full.limits.BACKUP_KEEP, 24);
  assert.deepEqual(full.backup, {
    dir: "/var/backups/disbursements",
    copyDir: "/mnt/offsite",
    s3: {
      url: "https://s3.eu-west-1.amazonaws.com/insurer-backups/disbursements",
      region: "eu-west-1",
      accessKeyId: "AKID",
      secretAccessKey: "secret",
    },
  });
  const problems = (env: Record<string, string>) => {
    try {
      loadConfig({ ...base, ...env });
    } catch (error) {
      if (error instanceof ConfigError) return error.problems;
      throw error;
    }
    return [];
  };
  assert.deepEqual(problems({ BACKUP_INTERVAL_MINUTES: "-5" }), [
    'BACKUP_INTERVAL_MINUTES="-5": must be at least 0',
  ]);
  assert.deepEqual(problems({ BACKUP_INTERVAL_MINUTES: "hourly" }), [
    'BACKUP_INTERVAL_MINUTES="hourly": must be a whole number',
  ]);
  assert.deepEqual(problems({ BACKUP_KEEP: "0" }), ['BACKUP_KEEP="0": must be at least 1']);
  assert.deepEqual(
    problems({
      BACKUP_S3_URL: "http://s3.example.com/bucket",
      BACKUP_S3_ACCESS_KEY_ID: "a",
      BACKUP_S3_SECRET_ACCESS_KEY: "b",
    }),
    [
      'BACKUP_S3_URL="http://s3.example.com/bucket": must be https://endpoint/bucket[/prefix] (http only to a loopback address)',
    ],
  );
  assert.deepEqual(
    problems({
      BACKUP_S3_URL: "https://s3.example.com/",
      BACKUP_S3_ACCESS_KEY_ID: "a",
      BACKUP_S3_SECRET_ACCESS_KEY: "b",
    }),
    [
      'BACKUP_S3_URL="https://s3.example.com/": must be https://endpoint/bucket[/prefix] (http only to a loopback address)',
    ],
  );
  assert.deepEqual(problems({ BACKUP_S3_URL: "https://s3.example.com/bucket" }), [
    "BACKUP_S3_ACCESS_KEY_ID and BACKUP_S3_SECRET_ACCESS_KEY are required with BACKUP_S3_URL",
  ]);
  assert.deepEqual(
    problems({ BACKUP_S3_URL: "https://s3.example.com/bucket", BACKUP_S3_ACCESS_KEY_ID: "a" }),
    [
      "BACKUP_S3_SECRET_ACCESS_KEY is required with BACKUP_S3_ACCESS_KEY_ID",
    ],
  );
  assert.deepEqual(problems({ BACKUP_S3_ACCESS_KEY_ID: "a", BACKUP_S3_SECRET_ACCESS_KEY: "b" }), [
    "BACKUP_S3_URL is required with BACKUP_S3_ACCESS_KEY_ID",
  ]);
  assert.deepEqual(problems({ BACKUP_S3_REGION: "EU West" }), [
    'BACKUP_S3_REGION="EU West": must be a region name, e.g. us-east-1',
  ]);
  assert.deepEqual(
    problems({ BACKUP_INTERVAL_MINUTES: "60", DATABASE_URL_LIVE: "libsql://db.example.turso.io" }),
    [
      "BACKUP_INTERVAL_MINUTES=60: scheduled backups copy embedded file: databases, and " +
      "DATABASE_URL_LIVE is a libSQL server, whose backups belong to the server (set BACKUP_INTERVAL_MINUTES=0)",
    ],
  );
});

Deno.test("main.ts with BACKUP_INTERVAL_MINUTES takes a backup at start into DATA_DIR/backups", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "backup-main-" });
  const port = freePort();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("../main.ts", import.meta.url).pathname, "--dev"],
    env: {
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: "127.0.0.1",
      LOG_FORMAT: "json",
      BACKUP_INTERVAL_MINUTES: "60",
      BACKUP_KEEP: "3",
    },
    stdout: "piped",
    stderr: "null",
  }).spawn();
  try {
    const deadline = Date.now() + 60_000;
    let names: string[] = [];
    while (Date.now() < deadline) {
      names = await listDir(`${dataDir}/backups`).catch(() => []);
      const done = names.some((name) => name.endsWith(".tar.sha256")) &&
        names.some((name) => name.startsWith("audit-checkpoint-") && name.endsWith(".json"));
      if (done) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    // Beside the backup (no copy destination here), the signed audit checkpoint taken before it.
    const checkpoints = names.filter((name) => name.startsWith("audit-checkpoint-"));
    assert.equal(checkpoints.length, 1, names.join(", "));
    names = names.filter((name) => !checkpoints.includes(name));
    assert.equal(names.length, 2, names.join(", "));
    assert.match(names[0], /^backup-\d{8}T\d{6}Z\.tar$/);
    assert.equal(names[1], `${names[0]}.sha256`);
    const restored = await restoreBackup({
      from: `${dataDir}/backups/${names[0]}`,
      dataDir: `${dataDir}-restored`,
    });
    assert.ok(restored.ok, JSON.stringify(restored));
    await Deno.remove(`${dataDir}-restored`, { recursive: true });
  } finally {
    child.kill("SIGTERM");
    assert.equal((await child.status).code, 0);
    const printed = new TextDecoder().decode(await new Response(child.stdout).arrayBuffer());
    assert.match(printed, /"msg":"backup written"/);
    await Deno.remove(dataDir, { recursive: true });
  }
});
