/** Runs wrk (Debian package; installed on demand) and parses its latency report. */

export interface LoadResult {
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly requests: number;
  readonly non2xx: number;
  readonly socketErrors: number;
}

export interface LoadOptions {
  readonly url: string;
  readonly connections: number;
  readonly durationSeconds: number;
  readonly threads?: number;
  readonly headers?: Record<string, string>;
  /** A wrk Lua script file, for POSTs and per-request bodies. */
  readonly script?: string;
}

/** Makes sure wrk is on the PATH, installing Debian's package when root may. */
export async function ensureWrk(): Promise<void> {
  const found = await new Deno.Command("sh", { args: ["-c", "command -v wrk"], stdout: "null" })
    .output();
  if (found.success) return;
  console.error("wrk not found: installing the Debian package");
  const install = await new Deno.Command("sh", {
    args: ["-c", "apt-get update -qq && apt-get install -y -qq wrk"],
    stdout: "null",
    stderr: "inherit",
  }).output();
  if (!install.success) {
    throw new Error("wrk is missing and could not be installed (apt-get install wrk)");
  }
}

const toMs = (value: string, unit: string): number =>
  Number(value) * ({ us: 0.001, ms: 1, s: 1000, m: 60_000 } as Record<string, number>)[unit];

/** Runs one load and returns requests/s and latency percentiles. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const args = [
    `-t${options.threads ?? 2}`,
    `-c${options.connections}`,
    `-d${options.durationSeconds}s`,
    "--latency",
  ];
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    args.push("-H", `${name}: ${value}`);
  }
  if (options.script) args.push("-s", options.script);
  args.push(options.url);
  const output = await new Deno.Command("wrk", { args, stdout: "piped", stderr: "piped" }).output();
  const text = new TextDecoder().decode(output.stdout);
  if (!output.success) throw new Error(`wrk failed: ${new TextDecoder().decode(output.stderr)}`);
  const percentile = (p: string) => {
    const match = new RegExp(`^\\s+${p}%\\s+([\\d.]+)(us|ms|s|m)`, "m").exec(text);
    if (!match) throw new Error(`wrk printed no ${p}% latency:\n${text}`);
    return toMs(match[1], match[2]);
  };
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(text);
  const total = /(\d+) requests in/.exec(text);
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(text);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
  return {
    requestsPerSecond: rps ? Number(rps[1]) : 0,
    p50Ms: percentile("50"),
    p99Ms: percentile("99"),
    requests: total ? Number(total[1]) : 0,
    non2xx: non2xx ? Number(non2xx[1]) : 0,
    socketErrors: socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0,
  };
}
