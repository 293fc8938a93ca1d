/**
 * Cold start, for edge deployments and restarts: from spawning a process to its first API answer
 * (`GET /v1/ledgers/x/balance` without a key: a 401, which needs the routes loaded), and to its
 * first `/readyz` 200, for the service on an existing data directory (as `deno task start` runs it,
 * without the task runner: cli/start.ts, which starts from the bundle in dist/ and builds it first
 * when it is not current) against a bare `Deno.serve` started the same way, alternately, several
 * runs each; prints the medians and their ratios against the target (the first API answer within
 * 2x the bare server). On loopback the service serves with Deno.serve; it also times the first API
 * answer through the Node listener (HEADER_TIMEOUT_MS set), to show what that listener costs a
 * start, and from the sources (main.ts, as `deno task dev` and the tests run them).
 * COLD_START_ENTRY names another entry to start instead of cli/start.ts (dist/main.js, say), as
 * `deno run` with the same flags.
 * `deno run -A bench/cold_start.ts [RUNS]` runs it alone; `deno task bench` runs it first.
 */
import { freePort } from "./service.ts";

/** Timed starts of each program, after a warm-up of each (module cache, page cache). */
const COLD_START_RUNS = 11;
/** How often a starting process is asked. */
const POLL_INTERVAL_MS = 2;
const START_TIMEOUT_MS = 60_000;
/** The service's own default header timeout, which selects the Node listener on loopback. */
const NODE_LISTENER_HEADER_TIMEOUT_MS = 10_000;
/** The first API answer may take at most this many times the bare server's. */
export const COLD_START_RATIO_MAX = 2;

/** What `deno run` needs to start a program with its environment. */
interface Program {
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
}

/** Medians (ms) and every run of one measure. */
export interface Timing {
  readonly medianMs: number;
  readonly runsMs: readonly number[];
}

export interface ColdStartResult {
  /** The entry started (`deno task start`'s unless COLD_START_ENTRY names another). */
  readonly entry: string;
  readonly bare: Timing;
  /** Spawn to the first 401 of the API path, asked from the spawn on. */
  readonly firstApiAnswer: Timing;
  /** The same through the Node listener (HEADER_TIMEOUT_MS set). */
  readonly firstApiAnswerNodeListener: Timing;
  /** The same from the sources (main.ts). */
  readonly firstApiAnswerSources: Timing;
  /** Spawn to the first /readyz 200, asked from the spawn on. */
  readonly ready: Timing;
}

const BARE_SERVER = `
const port = Number(Deno.args[0]);
Deno.serve({ hostname: "127.0.0.1", port, onListen() {} }, () => new Response("ok"));
`;

/** A /v1 request the service answers 401 without reading anything but its key. */
const FIRST_API_REQUEST = "/v1/ledgers/x/balance";

/**
 * Starts the program on a free port and asks `path` from the spawn on until it answers
 * `status`; returns the milliseconds from the spawn to that answer.
 */
async function timeToAnswer(program: Program, path: string, status: number): Promise<number> {
  const port = freePort();
  const started = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: [...program.args.map((arg) => arg === "{port}" ? String(port) : arg)],
    env: { ...program.env, PORT: String(port) },
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  try {
    for (;;) {
      const answered = await fetch(`http://127.0.0.1:${port}${path}`)
        .then(async (res) => (await res.body?.cancel(), res.status))
        .catch(() => null);
      if (answered === status) return performance.now() - started;
      if (performance.now() - started > START_TIMEOUT_MS) {
        throw new Error(`no ${status} at ${path} within ${START_TIMEOUT_MS} ms`);
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
    }
  } finally {
    child.kill("SIGTERM");
    const exited = await child.status;
    const errors = await stderr;
    if (!exited.success && exited.signal !== "SIGTERM") {
      console.error(`${program.args.join(" ")} exited with ${exited.code}:\n${errors}`);
    }
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/**
 * `deno task start`'s flags: a change there belongs here too. V8's young generation starts at its
 * full 16 MiB instead of growing to it: the start's allocations then take fewer collections (about
 * 9 ms less of the process's CPU before its first API answer, the bundle at load 5 to 7).
 */
const START_FLAGS = [
  "-A",
  "--unstable-cron",
  "--unstable-lazy-dynamic-imports",
  "--v8-flags=--min-semi-space-size=16",
];

/** Environment of a production start: secrets given, live notifications off, no access log. */
function serviceEnvironment(dataDir: string): Record<string, string> {
  return {
    HOST: "127.0.0.1",
    DATA_DIR: dataDir,
    JWT_SECRET: "cold-start-bench-jwt-secret-of-at-least-32-bytes",
    ENCRYPTION_KEY: btoa(String.fromCharCode(...new Uint8Array(32).fill(7))),
    LIVE_NOTIFICATIONS: "off",
    LOG_FORMAT: "off",
  };
}

/**
 * Measures the service and the bare server in turns (so load on the machine falls on all alike),
 * `runs` timed starts of each after one warm-up, on a data directory the first start created.
 */
export async function measureColdStart(runs = COLD_START_RUNS): Promise<ColdStartResult> {
  const dataDir = await Deno.makeTempDir({ prefix: "disbursement-cold-start-" });
  const bareFile = await Deno.makeTempFile({ suffix: ".ts" });
  await Deno.writeTextFile(bareFile, BARE_SERVER);
  const entry = Deno.env.get("COLD_START_ENTRY") ??
    new URL("../cli/start.ts", import.meta.url).pathname;
  const service: Program = {
    args: ["run", ...START_FLAGS, entry],
    env: serviceEnvironment(dataDir),
  };
  const sources: Program = {
    args: ["run", ...START_FLAGS, new URL("../main.ts", import.meta.url).pathname],
    env: service.env,
  };
  const nodeListener: Program = {
    args: service.args,
    env: { ...service.env, HEADER_TIMEOUT_MS: String(NODE_LISTENER_HEADER_TIMEOUT_MS) },
  };
  const bare: Program = { args: ["run", "-A", bareFile, "{port}"], env: {} };
  try {
    // The first start creates and migrates the databases (and builds the bundle when it is not
    // current): it is the warm-up, not a cold start.
    await timeToAnswer(service, FIRST_API_REQUEST, 401);
    await timeToAnswer(nodeListener, FIRST_API_REQUEST, 401);
    await timeToAnswer(sources, FIRST_API_REQUEST, 401);
    await timeToAnswer(bare, "/", 200);
    const runsMs = {
      bare: [] as number[],
      api: [] as number[],
      nodeListener: [] as number[],
      sources: [] as number[],
    };
    const readyMs: number[] = [];
    for (let run = 0; run < runs; run++) {
      runsMs.api.push(await timeToAnswer(service, FIRST_API_REQUEST, 401));
      runsMs.bare.push(await timeToAnswer(bare, "/", 200));
      readyMs.push(await timeToAnswer(service, "/readyz", 200));
      runsMs.nodeListener.push(await timeToAnswer(nodeListener, FIRST_API_REQUEST, 401));
      runsMs.sources.push(await timeToAnswer(sources, FIRST_API_REQUEST, 401));
    }
    const timing = (values: number[]): Timing => ({ medianMs: median(values), runsMs: values });
    return {
      entry,
      bare: timing(runsMs.bare),
      firstApiAnswer: timing(runsMs.api),
      firstApiAnswerNodeListener: timing(runsMs.nodeListener),
      firstApiAnswerSources: timing(runsMs.sources),
      ready: timing(readyMs),
    };
  } finally {
    await Deno.remove(dataDir, { recursive: true });
    await Deno.remove(bareFile);
  }
}

/** The first API answer's ratio to the bare server: the figure the target is about. */
export function coldStartRatio(result: ColdStartResult): number {
  return result.firstApiAnswer.medianMs / result.bare.medianMs;
}

/** The medians, their ratios to the bare server, and the target's verdict, as the bench prints. */
export function describeColdStart(result: ColdStartResult): string {
  const line = (label: string, timing: Timing) =>
    `  ${label.padEnd(44)} ${timing.medianMs.toFixed(0).padStart(5)} ms  ${
      (timing.medianMs / result.bare.medianMs).toFixed(2)
    }x  (${timing.runsMs.map((ms) => ms.toFixed(0)).join(", ")})`;
  const ratio = coldStartRatio(result);
  return [
    `cold start from spawn of ${result.entry}, on an existing data directory (median of ${result.bare.runsMs.length} runs each):`,
    line("bare Deno.serve, first answer", result.bare),
    line("service, first API answer (401)", result.firstApiAnswer),
    line("service, first /readyz 200", result.ready),
    line("service, Node listener, first API answer", result.firstApiAnswerNodeListener),
    line("sources (main.ts), first API answer", result.firstApiAnswerSources),
    `  first API answer ${
      ratio.toFixed(2)
    }x the bare server (target at most ${COLD_START_RATIO_MAX}x): ${
      ratio <= COLD_START_RATIO_MAX ? "PASS" : "FAIL"
    }`,
  ].join("\n");
}

if (import.meta.main) {
  const runs = Number(Deno.args[0] ?? COLD_START_RUNS);
  console.log(describeColdStart(await measureColdStart(runs)));
}
