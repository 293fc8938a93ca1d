/**
 * Cold start, for edge deployments: the time from spawning a process to its first `/readyz` 200,
 * for the service on an existing data directory (as `deno task start` runs it) and for a bare
 * `Deno.serve` in the same run, several runs each; prints both medians and their ratio. It also
 * times the service's first API answer after that (a /v1 request, 401 without a key), since
 * what a start leaves to the first request is paid there.
 * `deno run -A bench/cold_start.ts` runs it alone; `deno task bench` runs it first.
 */
import { freePort } from "./service.ts";

/** Timed starts of each program, after a warm-up of each (module cache, page cache). */
const COLD_START_RUNS = 11;
/** How often a starting process is asked for /readyz. */
const READY_POLL_INTERVAL_MS = 2;
const READY_TIMEOUT_MS = 60_000;

/** What `deno run` needs to start a program with its environment. */
interface Program {
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
}

export interface ColdStartResult {
  /** Medians, in milliseconds. */
  readonly serviceMs: number;
  readonly bareMs: number;
  readonly ratio: number;
  readonly serviceRunsMs: readonly number[];
  readonly bareRunsMs: readonly number[];
  /** Median time from spawn to the service's first /v1 answer, asked once /readyz said 200. */
  readonly firstApiAnswerMs: number;
}

const BARE_SERVER = `
const port = Number(Deno.args[0]);
Deno.serve({ hostname: "127.0.0.1", port, onListen() {} }, () => new Response("ok"));
`;

/** A /v1 request the service answers 401 without reading anything but its key. */
const FIRST_API_REQUEST = "/v1/ledgers/cold-start/balance";

/**
 * Starts the program on a free port; returns how long it took to answer /readyz with 200 and,
 * when asked, to answer a first API request sent right after.
 */
async function timeToReady(
  program: Program,
  firstApiRequest = false,
): Promise<{ readyMs: number; firstApiAnswerMs: number }> {
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
      try {
        const res = await fetch(`http://127.0.0.1:${port}/readyz`);
        await res.body?.cancel();
        if (res.status === 200) {
          const readyMs = performance.now() - started;
          if (!firstApiRequest) return { readyMs, firstApiAnswerMs: readyMs };
          const api = await fetch(`http://127.0.0.1:${port}${FIRST_API_REQUEST}`);
          await api.body?.cancel();
          if (api.status !== 401) throw new Error(`${FIRST_API_REQUEST} answered ${api.status}`);
          return { readyMs, firstApiAnswerMs: performance.now() - started };
        }
      } catch {
        // Not listening yet.
      }
      if (performance.now() - started > READY_TIMEOUT_MS) {
        throw new Error(
          `no /readyz 200 within ${READY_TIMEOUT_MS} ms from ${program.args.join(" ")}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, READY_POLL_INTERVAL_MS));
    }
  } finally {
    child.kill("SIGTERM");
    const status = await child.status;
    const errors = await stderr;
    if (!status.success && status.signal !== "SIGTERM") {
      console.error(`${program.args.join(" ")} exited with ${status.code}:\n${errors}`);
    }
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** `deno task start`'s flags: a change there belongs here too. */
const START_FLAGS = ["-A", "--unstable-cron", "--unstable-lazy-dynamic-imports"];

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
 * Measures the service and the bare server alternately (so load on the machine falls on both),
 * `runs` timed starts each after one warm-up, on a data directory the first start created.
 */
export async function measureColdStart(runs = COLD_START_RUNS): Promise<ColdStartResult> {
  const dataDir = await Deno.makeTempDir({ prefix: "disbursement-cold-start-" });
  const bareFile = await Deno.makeTempFile({ suffix: ".ts" });
  await Deno.writeTextFile(bareFile, BARE_SERVER);
  const service: Program = {
    args: ["run", ...START_FLAGS, new URL("../main.ts", import.meta.url).pathname],
    env: serviceEnvironment(dataDir),
  };
  const bare: Program = { args: ["run", "-A", bareFile, "{port}"], env: {} };
  try {
    // The first start creates and migrates the databases: it is the warm-up, not a cold start.
    await timeToReady(service);
    await timeToReady(bare);
    const serviceRunsMs: number[] = [];
    const bareRunsMs: number[] = [];
    const firstApiAnswersMs: number[] = [];
    for (let run = 0; run < runs; run++) {
      const started = await timeToReady(service, true);
      serviceRunsMs.push(started.readyMs);
      firstApiAnswersMs.push(started.firstApiAnswerMs);
      bareRunsMs.push((await timeToReady(bare)).readyMs);
    }
    const serviceMs = median(serviceRunsMs);
    const bareMs = median(bareRunsMs);
    return {
      serviceMs,
      bareMs,
      ratio: serviceMs / bareMs,
      serviceRunsMs,
      bareRunsMs,
      firstApiAnswerMs: median(firstApiAnswersMs),
    };
  } finally {
    await Deno.remove(dataDir, { recursive: true });
    await Deno.remove(bareFile);
  }
}

/** The two medians and their ratio, as the bench prints them. */
export function describeColdStart(result: ColdStartResult): string {
  const runs = (values: readonly number[]) => values.map((ms) => ms.toFixed(0)).join(", ");
  return [
    `cold start to /readyz 200 (median of ${result.serviceRunsMs.length} runs each):`,
    `  service on an existing data directory  ${result.serviceMs.toFixed(0)} ms  (${
      runs(result.serviceRunsMs)
    })`,
    `  bare Deno.serve                        ${result.bareMs.toFixed(0)} ms  (${
      runs(result.bareRunsMs)
    })`,
    `  ratio                                  ${result.ratio.toFixed(2)}x (target at most 2x)`,
    `  service's first API answer after that  ${result.firstApiAnswerMs.toFixed(0)} ms from spawn`,
  ].join("\n");
}

if (import.meta.main) console.log(describeColdStart(await measureColdStart()));
