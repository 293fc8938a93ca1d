/**
 * The bundle `deno task build` writes serves as the sources do. Built into a temporary directory
 * under dist/ and started with `--dev` on a temporary DATA_DIR, beside a start from the sources:
 * /readyz goes 503 starting → 200, the API answers, the console's and the portal's pages are the
 * sources' own HTML (the bundler drops each page's JSX comment), the contract is served from the
 * bundle's copy, and both worker threads run from the bundle: the scheduled backup's copy and the
 * build of an ACH file large enough for its worker. `deno task start` (cli/start.ts) builds it
 * when it is missing or its sources changed, and starts from it; it reaches a libSQL server too.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { freePort } from "../bench/service.ts";
import { BUILD_STAMP, bundleIsCurrent } from "../cli/build.ts";
import { serviceEntry } from "../cli/start.ts";
import { FILE_WORKER_ENTRIES_MIN } from "../lib/ach/jobs.ts";
import { sha256Hasher } from "../lib/backup/archive.ts";
import { serviceFileUrl } from "../lib/platform/service_files.ts";
import type { SandboxCredentials } from "../lib/sandbox/seed.ts";
import { migratePrimary, startPrimary } from "./node_helpers.ts";

const START_TIMEOUT_MS = 60_000;
/** Readiness is asked this often from the spawn on, so the start's 503s are seen. */
const POLL_INTERVAL_MS = 2;
const BACKUP_TIMEOUT_MS = 30_000;
/** `deno task start`'s flags. */
const START_FLAGS = [
  "-A",
  "--unstable-cron",
  "--unstable-lazy-dynamic-imports",
  "--v8-flags=--min-semi-space-size=16",
];
/** The /api statuses of a payout that went out in a bank file. */
const SENT = ["Processing", "Completed"];

interface Service {
  readonly base: string;
  readonly dataDir: string;
  readonly child: Deno.ChildProcess;
  readonly stderr: Promise<string>;
  /** Each distinct /readyz answer until the first 200, in order. */
  readonly readiness: string[];
}

/** Environment of a production start (no `--dev`): secrets given, live notifications off. */
const PRODUCTION = {
  JWT_SECRET: "j".repeat(40),
  ENCRYPTION_KEY: btoa("e".repeat(32)),
  LIVE_NOTIFICATIONS: "off",
};

/**
 * Starts `entry` (in dev mode unless `production`), adds it to `started` (which the caller
 * stops), and returns once /readyz answers 200.
 */
async function startService(
  started: Service[],
  entry: string,
  options: { production?: boolean; env?: Record<string, string> } = {},
): Promise<Service> {
  const dataDir = await Deno.makeTempDir({ prefix: "disbursement-bundle-" });
  const port = freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...START_FLAGS, entry, ...(options.production ? [] : ["--dev"])],
    env: {
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: "127.0.0.1",
      LOG_FORMAT: "off",
      ...(options.production ? PRODUCTION : {}),
      ...options.env,
    },
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const service = {
    base,
    dataDir,
    child,
    stderr: new Response(child.stderr).text(),
    readiness: [] as string[],
  };
  started.push(service);
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    const answer = await fetch(`${base}/readyz`)
      .then(async (res) => `${res.status} ${await res.text()}`)
      .catch(() => null);
    if (answer !== null && service.readiness.at(-1) !== answer) service.readiness.push(answer);
    if (answer?.startsWith("200 ")) return service;
    if (Date.now() > deadline) assert.fail(`${entry} was not ready within 60 s`);
    await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
  }
}

/** SIGTERM, then the data directory goes; returns the exit code and what it wrote on stderr. */
async function stopService(service: Service): Promise<{ code: number; stderr: string }> {
  try {
    service.child.kill("SIGTERM");
  } catch {
    // Already stopped.
  }
  const { code } = await service.child.status;
  const stderr = await service.stderr;
  await Deno.remove(service.dataDir, { recursive: true });
  return { code, stderr };
}

/** A page's status and HTML, its form's sign-in token (a new one per request) masked. */
async function page(service: Service, path: string): Promise<string> {
  const res = await fetch(`${service.base}${path}`);
  const html = await res.text();
  return `${res.status} ${html.replace(/name="csrf" value="[^"]+"/g, 'name="csrf" value="…"')}`;
}

async function json(service: Service, method: string, path: string, token: string, body?: unknown) {
  const res = await fetch(`${service.base}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

/** The backup file and its `.sha256` once the scheduled backup wrote them. */
async function scheduledBackup(service: Service): Promise<{ tar: string; sha256: string }> {
  const dir = `${service.dataDir}/backups`;
  const deadline = Date.now() + BACKUP_TIMEOUT_MS;
  for (;;) {
    const names = await Array.fromAsync(Deno.readDir(dir), (entry) => entry.name)
      .catch(() => [] as string[]);
    const tar = names.find((name) => name.endsWith(".tar") && names.includes(`${name}.sha256`));
    if (tar) {
      return { tar: `${dir}/${tar}`, sha256: await Deno.readTextFile(`${dir}/${tar}.sha256`) };
    }
    if (Date.now() > deadline) assert.fail(`no scheduled backup within 30 s: ${names.join(", ")}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

Deno.test("deno task build: the bundle starts, answers, renders the sources' pages and runs both workers", async () => {
  const dist = serviceFileUrl("dist").pathname;
  await Deno.mkdir(dist, { recursive: true });
  // A dot folder: tests that walk the repository's sources skip it while it comes and goes.
  const outdir = await Deno.makeTempDir({ dir: dist, prefix: ".bundle-test-" });
  const services: Service[] = [];
  try {
    // As `deno task start` finds it without a bundle: it builds one, then starts from it.
    const [sources, entry] = await Promise.all([
      startService(services, serviceFileUrl("main.ts").pathname),
      serviceEntry(new URL(`file://${outdir}/`)),
    ]);
    assert.equal(entry.pathname, `${outdir}/main.js`);
    assert.ok(bundleIsCurrent(outdir), "a start finds the bundle just built current");
    // Before the API's chunk, the entry loads no Node module but SQLite's: Deno's Node layer
    // (Node's createRequire loaded it, when the libSQL server's client was bundled) waits.
    assert.deepEqual(await nodeModulesAtStart(outdir, []), ["node:sqlite"]);
    // Nor does the API's chunk, with what the service loads beside it before its first answer:
    // Node's crypto (the audit chain, webhook signing) comes after it.
    assert.deepEqual(await nodeModulesAtStart(outdir, API_CHUNKS), ["node:sqlite"]);
    // A production start, as `deno task start` runs it, and a dev one for its seeded
    // credentials; on its fresh data directory a backup is due at once, which the copy worker takes.
    const [production, bundle] = await Promise.all([
      startService(services, `${outdir}/main.js`, { production: true }),
      startService(services, `${outdir}/main.js`, { env: { BACKUP_INTERVAL_MINUTES: "60" } }),
    ]);

    // Not ready until the API answers. The bundle's API chunk may be evaluated before the first
    // request is even read (evaluation holds the event loop), so its 503 is not always seen.
    const starting = '503 {"status":"not_ready","reason":"starting","reasons":["starting"],' +
      '"databases":{"test":"ok","live":"ok"}}';
    const ready = '200 {"status":"ready","databases":{"test":"ok","live":"ok"}}';
    for (const service of [production, bundle]) {
      assert.deepEqual(service.readiness.filter((answer) => answer !== starting), [ready]);
      assert.match(await page(service, "/v1/ledgers/x/balance"), /^401 /);
    }
    const paths = [
      "/v1/ledgers/x/balance",
      "/console/sign-in",
      "/portal/no-such-link",
      "/docs/contract.md",
    ];
    for (const path of paths) {
      assert.equal(await page(bundle, path), await page(sources, path), path);
    }
    assert.match(await page(bundle, "/v1/ledgers/x/balance"), /^401 /);
    assert.match(
      await page(bundle, "/console/sign-in"),
      /^200 <html lang="en">.*<h1>Sign in<\/h1>/,
    );
    assert.match(
      await page(bundle, "/portal/no-such-link"),
      /^404 <html lang="en">.*Payment portal/,
    );

    const backup = await scheduledBackup(bundle);
    const digest = sha256Hasher().update(await Deno.readFile(backup.tar)).digest("hex");
    assert.equal(backup.sha256.split(" ")[0], digest);

    // One disbursement whose payees all go by ACH in one cutoff file, built on the file worker.
    const credentials = JSON.parse(
      await Deno.readTextFile(`${bundle.dataDir}/sandbox-credentials.json`),
    ) as SandboxCredentials;
    const acme = credentials.companies[0];
    const login = await fetch(`${bundle.base}/api/authenticate`, {
      method: "POST",
      headers: { Authorization: `Basic ${btoa(`${acme.tin}:${acme.users[0].api_key_test}`)}` },
    });
    const token = (await login.json()).access_token as string;
    const payees = Array.from({ length: FILE_WORKER_ENTRIES_MIN }, (_, index) => ({
      payee_type_id: 1,
      amount: 1,
      payee_uuid: `P-${index}`,
      first_name: "Sam",
      last_name: "Lee",
      email: "success+ach@example.test",
      allowed_payment_method_ids: [1, 2],
    }));
    const created = await json(bundle, "POST", "/api/disbursements", token, {
      disbursement_uuid: "D-1",
      large_disbursement: false,
      line: "home",
      payees,
    });
    assert.equal(created.status, 201);
    const advanced = await json(bundle, "POST", "/api/sandbox/clock/advance", token, {
      seconds: 691_200,
    });
    assert.equal(advanced.status, 200);
    // Every payout went out in the file: sent (Processing) or completed since.
    const read = await json(bundle, "GET", "/api/disbursements/D-1", token);
    const statuses = (read.body.payees as { status: string }[]).map((payee) => payee.status);
    assert.deepEqual(statuses.filter((status) => !SENT.includes(status)), []);
    assert.equal(statuses.length, payees.length);
    const database = new DatabaseSync(`${bundle.dataDir}/test.db`, { readOnly: true });
    try {
      const files = database.prepare("SELECT entry_count FROM ach_files").all();
      assert.equal(files.length, 1);
      assert.ok(Number(files[0].entry_count) >= FILE_WORKER_ENTRIES_MIN, "built on the worker");
    } finally {
      database.close();
    }
    const transaction = await json(
      bundle,
      "GET",
      "/api/disbursements/D-1/payees/P-0/transaction",
      token,
    );
    assert.equal(transaction.body.payment_method, "ACHPayment");

    for (const service of services.splice(0)) {
      const stopped = await stopService(service);
      assert.equal(stopped.code, 0, stopped.stderr);
    }

    // The bundle leaves the libSQL server's client to Deno (bundled, it could not find its
    // native driver): a node starts on a migrated server.
    const primary = await startPrimary();
    try {
      await migratePrimary(primary);
      const node = await startService(services, `${outdir}/main.js`, {
        production: true,
        env: primary.env(),
      });
      assert.match(await page(node, "/v1/ledgers/x/balance"), /^401 /);
      const stopped = await stopService(services.splice(0)[0]);
      assert.equal(stopped.code, 0, stopped.stderr);
    } finally {
      await primary.close();
    }
  } finally {
    await Promise.all(services.map(stopService));
    await Deno.remove(outdir, { recursive: true });
  }
});

/** What main.ts imports to build the API's app (its buildApi and the audit log's first check). */
const API_CHUNKS = ["api_app", "credential_cache", "query_layer", "store"];

/**
 * The Node modules the bundle's entry, and the chunks of `dynamic` it imports at its first
 * answer (by their modules' names), import statically, directly or not.
 */
async function nodeModulesAtStart(outdir: string, dynamic: readonly string[]): Promise<string[]> {
  const reached = new Set<string>();
  const modules = new Set<string>();
  const entry = await Deno.readTextFile(`${outdir}/main.js`);
  const loaded = [...entry.matchAll(/import\("\.\/(([a-z_]+)-[A-Z0-9]+\.js)"\)/g)]
    .filter(([, , name]) => dynamic.includes(name)).map(([, chunk]) => chunk);
  assert.equal(new Set(loaded).size, dynamic.length, `main.js imports ${dynamic.join(", ")}`);
  const pending = ["main.js", ...loaded];
  while (pending.length > 0) {
    const chunk = pending.pop()!;
    if (reached.has(chunk)) continue;
    reached.add(chunk);
    const source = await Deno.readTextFile(`${outdir}/${chunk}`);
    for (const [, specifier] of source.matchAll(/^(?:import|export)\b[^;]*?"([^"]+)";?$/gms)) {
      if (specifier.startsWith("./")) pending.push(specifier.slice(2));
      else if (specifier.startsWith("node:")) modules.add(specifier);
    }
  }
  return [...modules].sort();
}

Deno.test("a start finds the bundle current only when every input is as it was built, by the same Deno", async () => {
  const dist = serviceFileUrl("dist").pathname;
  await Deno.mkdir(dist, { recursive: true });
  const outdir = await Deno.makeTempDir({ dir: dist, prefix: ".bundle-test-" });
  try {
    const input = await Deno.stat(serviceFileUrl("deno.json"));
    const stamp = (deno: string, inputs: Record<string, [number, number | null]>) =>
      Deno.writeTextFile(`${outdir}/${BUILD_STAMP}`, JSON.stringify({ deno, inputs }));
    const built: [number, number | null] = [input.size, input.mtime?.getTime() ?? null];
    assert.equal(bundleIsCurrent(outdir), false, "no stamp: never built, or a build that failed");
    await stamp(Deno.version.deno, { "deno.json": built });
    assert.equal(bundleIsCurrent(outdir), true);
    await stamp(Deno.version.deno, { "deno.json": [built[0] + 1, built[1]] });
    assert.equal(bundleIsCurrent(outdir), false, "an input's size changed");
    await stamp(Deno.version.deno, { "deno.json": [built[0], (built[1] ?? 0) - 1000] });
    assert.equal(bundleIsCurrent(outdir), false, "an input's modification time changed");
    await stamp(Deno.version.deno, { "deno.json": built, "lib/no_such_module.ts": built });
    assert.equal(bundleIsCurrent(outdir), false, "an input is gone");
    await stamp("1.0.0", { "deno.json": built });
    assert.equal(bundleIsCurrent(outdir), false, "built by another Deno");
  } finally {
    await Deno.remove(outdir, { recursive: true });
  }
});
