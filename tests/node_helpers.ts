/**
 * Several service nodes on one libSQL primary, for the multi-node tests (issue 22): the primary is
 * the Hrana contract server (one per environment, as a libSQL server holds one database per
 * URL), migrated once the way an operator does it (`deno task admin migrate`); a node is either a
 * real `main.ts` process with DATABASE_URL_* pointing at it, or, in process, a Database handle of
 * its own (its own writer, its own memory).
 */
import { createClient } from "@libsql/client";
import { type Database, migrateServerUnderLock, openDatabase } from "../db/client.ts";
import type { Environment } from "../lib/platform/config.ts";
import { freePort } from "../bench/service.ts";
import { type HranaServer, startHranaServer } from "./hrana_server.ts";

const mainPath = new URL("../main.ts", import.meta.url).pathname;
export const adminCliPath = new URL("../cli/admin.ts", import.meta.url).pathname;

/** The secrets every node of one installation shares (tokens and sealed data cross nodes). */
export const SHARED_SECRETS = {
  JWT_SECRET: "n".repeat(40),
  ENCRYPTION_KEY: btoa("k".repeat(32)),
} as const;

export interface Primary {
  readonly dir: string;
  readonly servers: Record<Environment, HranaServer>;
  readonly urls: Record<Environment, string>;
  readonly authToken: string | null;
  /** The settings a node or the CLI needs to reach it. */
  env(): Record<string, string>;
  close(): Promise<void>;
}

/** Starts a primary (test and live databases) on fresh files, not migrated. */
export async function startPrimary(
  options: { authToken?: string; batonTtlMs?: number } = {},
): Promise<Primary> {
  const dir = await Deno.makeTempDir({ prefix: "disbursement-primary-" });
  const start = (environment: Environment) =>
    startHranaServer({
      path: `${dir}/${environment}.db`,
      authToken: options.authToken,
      batonTtlMs: options.batonTtlMs ?? 2000,
    });
  const servers = { test: await start("test"), live: await start("live") };
  const urls = { test: servers.test.url, live: servers.live.url };
  const authToken = options.authToken ?? null;
  return {
    dir,
    servers,
    urls,
    authToken,
    env: () => ({
      DATABASE_URL_TEST: urls.test,
      DATABASE_URL_LIVE: urls.live,
      ...(authToken === null ? {} : { DATABASE_AUTH_TOKEN: authToken }),
    }),
    async close() {
      await servers.test.close();
      await servers.live.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** Applies every migration to both databases, as `deno task admin migrate` does. */
export async function migratePrimary(primary: Primary): Promise<void> {
  for (const url of Object.values(primary.urls)) {
    const client = createClient({ url, authToken: primary.authToken ?? undefined });
    try {
      await migrateServerUnderLock(client, { holder: `test-${crypto.randomUUID()}` });
    } finally {
      client.close();
    }
  }
}

/** A SQL client on one of the primary's databases, for what a test checks. */
export function primaryClient(primary: Primary, environment: Environment) {
  return createClient({
    url: primary.urls[environment],
    authToken: primary.authToken ?? undefined,
  });
}

/** An in-process node's handle on one database of the primary: its own writer and memory. */
export function openNodeDatabase(primary: Primary, environment: Environment): Promise<Database> {
  return openDatabase({
    environment,
    url: primary.urls[environment],
    authToken: primary.authToken,
    busyTimeoutMs: 5000,
    unitsPerGroupMax: 512,
    readCacheEntries: 10_000,
  });
}

/** One service process on a primary. */
export interface ServiceNode {
  readonly port: number;
  readonly base: string;
  readonly dataDir: string;
  readonly process: Deno.ChildProcess;
  /** Stops it with SIGTERM (graceful) and removes its DATA_DIR. */
  stop(): Promise<void>;
}

function nodeEnv(
  primary: Primary,
  dataDir: string,
  port: number,
  env: Record<string, string>,
): Record<string, string> {
  return {
    ...SHARED_SECRETS,
    ...primary.env(),
    DATA_DIR: dataDir,
    PORT: String(port),
    LOG_FORMAT: "off",
    RATE_LIMIT_RPS: "0",
    ...env,
  };
}

/**
 * Spawns `main.ts` on a free port with its own DATA_DIR (the lock, the admin token and the
 * service file are per node; the data is the primary's). In dev mode (the default) one node of a
 * primary seeds the sandbox, under the seed lock, and every node writes its credentials file to
 * its own DATA_DIR. Outside dev mode nothing is seeded.
 */
export async function spawnNode(
  primary: Primary,
  env: Record<string, string> = {},
  options: { dev?: boolean } = {},
): Promise<ServiceNode> {
  const dataDir = await Deno.makeTempDir({ prefix: "disbursement-node-" });
  const port = freePort();
  const dev = options.dev ?? true;
  const process = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", mainPath, ...(dev ? ["--dev"] : [])],
    env: nodeEnv(primary, dataDir, port, dev ? env : { LIVE_NOTIFICATIONS: "off", ...env }),
    stdin: "null",
    // NODE_LOGS=1 shows the nodes' output when a test needs explaining.
    stdout: Deno.env.get("NODE_LOGS") ? "inherit" : "null",
    stderr: Deno.env.get("NODE_LOGS") ? "inherit" : "null",
  }).spawn();
  let stopped = false;
  return {
    port,
    base: `http://127.0.0.1:${port}`,
    dataDir,
    process,
    async stop() {
      if (!stopped) {
        stopped = true;
        try {
          process.kill("SIGTERM");
        } catch {
          // already gone (killed by the test)
        }
        await process.status;
      }
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    },
  };
}

/** Runs `main.ts --dev` on a primary expecting it not to start: its exit code and stderr. */
export async function startRefused(
  primary: Primary | { env(): Record<string, string> },
  env: Record<string, string> = {},
): Promise<{ code: number; stderr: string; listened: boolean }> {
  const dataDir = await Deno.makeTempDir({ prefix: "disbursement-node-" });
  const port = freePort();
  try {
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", mainPath, "--dev"],
      env: nodeEnv(primary as Primary, dataDir, port, env),
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const listened = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      async (r) => (await r.body?.cancel(), true),
      () => false,
    );
    return { code: output.code, stderr: new TextDecoder().decode(output.stderr), listened };
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
}

/** Waits until `check` holds, polling every 100 ms. */
export async function waitFor(
  check: () => Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

/** Waits for a node's /readyz. */
export function waitReady(node: ServiceNode, timeoutMs = 120_000): Promise<void> {
  return waitFor(
    async () => {
      const response = await fetch(`${node.base}/readyz`);
      await response.body?.cancel();
      return response.ok;
    },
    timeoutMs,
    `node ${node.base} to be ready`,
  );
}

/** Runs the operator CLI with these settings (and `stdin` for its prompts). */
export async function runAdminCli(
  env: Record<string, string>,
  args: string[],
  stdin = "",
): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", adminCliPath, ...args],
    env: { ...SHARED_SECRETS, LOG_FORMAT: "off", ...env },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(stdin));
  await writer.close();
  const output = await child.output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: output.code, stdout: decode(output.stdout), stderr: decode(output.stderr) };
}
