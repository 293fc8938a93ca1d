/**
 * Can Litestream (v0.3.13, from npm:@flydotio/litestream-linux-x64) be trusted with the service's
 * databases? The issue's procedure, beside the real service: `main.ts --dev` on an empty DATA_DIR,
 * Litestream replicating both database files to a local file replica, fundings written under
 * load through /api/funds (each acknowledged 201 remembered by its funding_uuid), kill -9 of the
 * service while Litestream keeps running, `litestream restore` of both databases, then
 * ledger:verify and every acknowledged funding looked for.
 *
 * A run takes 15 to 30 s and the verdict is recorded in the README ("Backups and restore"). The
 * trial runs with LITESTREAM_TRIAL=1 (LITESTREAM_RUNS runs, 5 by default), prints one JSON line of
 * figures per run, and passes only when every run restored whole with nothing acknowledged lost,
 * which is what recommending Litestream would need. Without it the test is skipped, saying so: a
 * failure as rare as the one measured would make CI fail at random.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { freePort } from "../bench/service.ts";
import { openDatabase } from "../db/client.ts";
import { verifyLedger } from "../lib/ledger/reports.ts";
import type { SandboxCredentials } from "../lib/sandbox/seed.ts";

const root = new URL("..", import.meta.url).pathname;
const LITESTREAM = `${root}node_modules/@flydotio/litestream-linux-x64/litestream`;
const TRIAL = Deno.env.get("LITESTREAM_TRIAL") === "1";
const RUNS = Number(Deno.env.get("LITESTREAM_RUNS") ?? 5);
/** Clients writing at once, and for how long before the kill (LITESTREAM_WRITERS, _LOAD_MS). */
const WRITERS = Number(Deno.env.get("LITESTREAM_WRITERS") ?? 16);
const LOAD_MS = Number(Deno.env.get("LITESTREAM_LOAD_MS") ?? 6_000);
/** How long Litestream keeps running after the kill, before it is stopped and asked to restore. */
const AFTER_KILL_MS = 4_000;

interface RunFigures {
  run: number;
  acknowledged: number;
  in_flight_at_kill: number;
  restored_fundings: number | null;
  acknowledged_missing: number | null;
  ledger_problems: number | null;
  restore_error: string | null;
  wal_bytes_max: number;
  /** The test database's WAL size every 5 s of load: whether checkpoints keep it bounded. */
  wal_bytes_every_5s: number[];
  litestream_errors: string[];
}

async function waitReady(baseUrl: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${baseUrl}/readyz`);
      await res.body?.cancel();
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("the service did not become ready in 60 s");
}

/** SQLite's integrity_check of a restored file: null when it passes, else its first findings. */
function integrityOf(path: string): string | null {
  const database = new DatabaseSync(path, { readOnly: true });
  try {
    const found = database.prepare("PRAGMA integrity_check").all().map((row) =>
      String(Object.values(row)[0])
    );
    return found.length === 1 && found[0] === "ok" ? null : found.slice(0, 3).join("; ");
  } catch (error) {
    return String(error);
  } finally {
    database.close();
  }
}

const sizeOf = (path: string) => Deno.stat(path).then((info) => info.size, () => 0);

async function trial(run: number): Promise<RunFigures> {
  const work = await Deno.makeTempDir({ prefix: "litestream-trial-" });
  const dataDir = `${work}/data`;
  const port = freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const service = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${root}main.ts`, "--dev"],
    env: {
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: "127.0.0.1",
      LOG_FORMAT: "off",
      RATE_LIMIT_RPS: "0",
      DB_BUSY_TIMEOUT_MS: "5000",
    },
    stdout: "null",
    stderr: "null",
  }).spawn();
  let litestream: Deno.ChildProcess | null = null;
  try {
    await waitReady(baseUrl);
    const config = `${work}/litestream.yml`;
    await Deno.writeTextFile(
      config,
      ["live", "test"].map((name) =>
        `  - path: ${dataDir}/${name}.db\n    replicas:\n      - type: file\n        path: ${work}/replica/${name}\n`
      ).reduce((text, db) => text + db, "dbs:\n"),
    );
    litestream = new Deno.Command(LITESTREAM, {
      args: ["replicate", "-config", config],
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const logs: string[] = [];
    const collect = async (stream: ReadableStream<Uint8Array>) => {
      for await (const chunk of stream.pipeThrough(new TextDecoderStream())) logs.push(chunk);
    };
    const collecting = Promise.all([collect(litestream.stdout), collect(litestream.stderr)]);
    await new Promise((resolve) => setTimeout(resolve, 1_500));

    const credentials = JSON.parse(
      await Deno.readTextFile(`${dataDir}/sandbox-credentials.json`),
    ) as SandboxCredentials;
    const acme = credentials.companies[0];
    const login = await fetch(`${baseUrl}/api/authenticate`, {
      method: "POST",
      headers: { Authorization: `Basic ${btoa(`${acme.tin}:${acme.users[0].api_key_test}`)}` },
    });
    const { access_token } = await login.json() as { access_token: string };

    const acknowledged = new Set<string>();
    let inFlight = 0;
    let inFlightAtKill = 0;
    let killed = false;
    let walMax = 0;
    const writer = async (id: number) => {
      for (let i = 0; !killed; i++) {
        const fundingUuid = `trial-${run}-${id}-${i}`;
        inFlight++;
        try {
          const res = await fetch(`${baseUrl}/api/funds`, {
            method: "POST",
            headers: {
              Authorization: `Bearer ${access_token}`,
              "Content-Type": "application/json",
            },
            body: JSON.stringify({
              payment_method: "WireTransfer",
              description: "litestream trial",
              large_disbursement: false,
              amount: 1.25,
              line: "auto",
              funding_uuid: fundingUuid,
            }),
          });
          await res.body?.cancel();
          if (res.status === 201) acknowledged.add(fundingUuid);
        } catch {
          // the service was killed mid-request: not acknowledged
        } finally {
          inFlight--;
        }
      }
    };
    const writers = Array.from({ length: WRITERS }, (_, id) => writer(id));
    const started = Date.now();
    const walEvery5s: number[] = [];
    while (Date.now() - started < LOAD_MS) {
      const wal = await sizeOf(`${dataDir}/test.db-wal`);
      walMax = Math.max(walMax, wal);
      if (Date.now() - started >= (walEvery5s.length + 1) * 5_000) walEvery5s.push(wal);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    inFlightAtKill = inFlight;
    service.kill("SIGKILL");
    killed = true;
    await service.status;
    await Promise.all(writers);
    await new Promise((resolve) => setTimeout(resolve, AFTER_KILL_MS));
    litestream.kill("SIGTERM");
    await litestream.status;
    await collecting;
    litestream = null;

    const figures: RunFigures = {
      run,
      acknowledged: acknowledged.size,
      in_flight_at_kill: inFlightAtKill,
      restored_fundings: null,
      acknowledged_missing: null,
      ledger_problems: null,
      restore_error: null,
      wal_bytes_max: walMax,
      wal_bytes_every_5s: walEvery5s,
      litestream_errors: [
        ...new Set(
          logs.join("").split("\n").filter((line) => /error|locked|malformed/i.test(line))
            .map((line) => line.replace(/^\S+ \S+ /, "").slice(0, 160)),
        ),
      ].slice(0, 5),
    };
    const restoredDir = `${work}/restored`;
    await Deno.mkdir(restoredDir);
    for (const name of ["live", "test"]) {
      const restore = await new Deno.Command(LITESTREAM, {
        args: [
          "restore",
          "-config",
          config,
          "-o",
          `${restoredDir}/${name}.db`,
          `${dataDir}/${name}.db`,
        ],
        stdout: "piped",
        stderr: "piped",
      }).output();
      if (!restore.success) {
        // Litestream logs to stdout and stderr alike: its last line says why.
        const said = new TextDecoder().decode(
          new Uint8Array([...restore.stdout, ...restore.stderr]),
        );
        figures.restore_error = `${name}: exit ${restore.code}: ${
          said.trim().split("\n").filter((line) => line.trim() !== "").slice(-2).join(" / ")
        }`;
        return figures;
      }
    }
    for (const name of ["live", "test"]) {
      const problem = integrityOf(`${restoredDir}/${name}.db`);
      if (problem !== null) {
        figures.restore_error = `${name}: integrity_check: ${problem}`;
        return figures;
      }
    }
    const restored = await openDatabase({
      environment: "test",
      url: `file:${restoredDir}/test.db`,
      busyTimeoutMs: 5000,
      unitsPerGroupMax: 512,
      readCacheEntries: 0,
    });
    try {
      figures.ledger_problems = (await verifyLedger(restored.readClient)).length;
      const { rows } = await restored.readClient.execute(
        "SELECT funding_uuid FROM fundings WHERE funding_uuid LIKE ?",
        [`trial-${run}-%`],
      );
      const present = new Set(rows.map((row) => String(row.funding_uuid)));
      figures.restored_fundings = present.size;
      figures.acknowledged_missing = [...acknowledged].filter((uuid) => !present.has(uuid)).length;
    } catch (error) {
      const { code, cause } = error as { code?: string; cause?: unknown };
      figures.restore_error = `test: ${String(error)} ${code ?? ""} ${cause ?? ""}`.trim();
    } finally {
      await restored.close();
    }
    return figures;
  } finally {
    try {
      service.kill("SIGKILL");
    } catch {
      // already gone
    }
    await service.status;
    if (litestream) {
      litestream.kill("SIGKILL");
      await litestream.status;
    }
    await Deno.remove(work, { recursive: true });
  }
}

Deno.test({
  name: TRIAL
    ? `Litestream 0.3.13 beside the service: ${RUNS} crash-and-restore runs`
    : "Litestream crash trial: skipped (LITESTREAM_TRIAL=1 runs it; the README keeps its figures)",
  ignore: !TRIAL,
  fn: async () => {
    const results: RunFigures[] = [];
    for (let run = 1; run <= RUNS; run++) {
      const figures = await trial(run);
      console.log(JSON.stringify(figures));
      results.push(figures);
    }
    const held = results.filter((r) =>
      r.restore_error === null && r.acknowledged_missing === 0 && r.ledger_problems === 0
    ).length;
    console.log(JSON.stringify({ runs: RUNS, held }));
    assert.ok(
      results.every((r) =>
        r.acknowledged > 0
      ),
      "the load was acknowledged in every run",
    );
    // What recommending Litestream would need: every run restored whole, nothing acknowledged lost.
    assert.equal(held, RUNS, `Litestream held in ${held} of ${RUNS} runs`);
  },
});
