/**
 * Cold start, for edge deployments: the time from spawning a process to its first `/readyz` 200,
 * for the service on an existing data directory (as `deno task start` runs it) and for a bare
 * `Deno.serve` in the same run, several runs each; prints both medians and their ratio.
 * `deno run -A bench/cold_start.ts` runs it alone; `deno task bench` runs it first.
 */
import { freePort } from "./service.ts";

/** Timed starts of each program; the first of each is a warm-up (module cache, page cache). */
const COLD_START_RUNS = 7;
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
}

const BARE_SERVER = `
const port = Number(Deno.args[0]);
Deno.serve({ hostname: "127.0.0.1", port, onListen() {} }, () => new Response("ok"));
`;

/** Starts the program on a free port and returns how long it took to answer /readyz with 200. */
async function timeToReady(program: Program): Promise<number> {
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
        if (res.status === 200) return performance.now() - started;
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
    for (let run = 0; run < runs; run++) {
      serviceRunsMs.push(await timeToReady(service));
      bareRunsMs.push(await timeToReady(bare));
    }
    const serviceMs = median(serviceRunsMs);
    const bareMs = median(bareRunsMs);
    return { serviceMs, bareMs, ratio: serviceMs / bareMs, serviceRunsMs, bareRunsMs };
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
  ].join("\n");
}

if (import.meta.main) console.log(describeColdStart(await measureColdStart()));
