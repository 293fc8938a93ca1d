/** Starts the service as a developer would (`main.ts --dev`) on a temporary DATA_DIR. */
import type { SandboxCredentials } from "../lib/sandbox/seed.ts";

export interface RunningService {
  readonly baseUrl: string;
  readonly dataDir: string;
  readonly credentials: SandboxCredentials;
  readonly pid: number;
  /** Resident set size of the service process, in MiB (Linux /proc). */
  residentMiB(): Promise<number>;
  stop(): Promise<void>;
}

/** A loopback port nobody listens on right now. */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

const READY_TIMEOUT_MS = 60_000;

/** Starts the service and waits for /readyz. */
export async function startService(
  env: Record<string, string> = {},
  options: { dataDir?: string } = {},
): Promise<RunningService> {
  // A given DATA_DIR is the caller's to keep; a fresh one is removed on stop.
  const dataDir = options.dataDir ?? await Deno.makeTempDir({ prefix: "disbursement-bench-" });
  const port = freePort();
  const mainPath = new URL("../main.ts", import.meta.url).pathname;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", mainPath, "--dev"],
    env: {
      PORT: String(port),
      HOST: "127.0.0.1",
      DATA_DIR: dataDir,
      LOG_FORMAT: "off",
      RATE_LIMIT_RPS: "0",
      ...env,
    },
    stdout: "null",
    stderr: "inherit",
  }).spawn();
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    try {
      const res = await fetch(`${baseUrl}/readyz`);
      await res.body?.cancel();
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`the service did not become ready within ${READY_TIMEOUT_MS} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const credentials = JSON.parse(
    await Deno.readTextFile(`${dataDir}/sandbox-credentials.json`),
  ) as SandboxCredentials;
  return {
    baseUrl,
    dataDir,
    credentials,
    pid: child.pid,
    async residentMiB() {
      const status = await Deno.readTextFile(`/proc/${child.pid}/status`);
      const kb = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
      return Math.round(kb / 102.4) / 10;
    },
    async stop() {
      child.kill("SIGTERM");
      await child.status;
      if (!options.dataDir) await Deno.remove(dataDir, { recursive: true });
    },
  };
}
