/** Shared fixtures: temporary databases under a fresh directory, removed after the test. */
import { StatementSync } from "node:sqlite";
import { type Database, openDatabase } from "../db/client.ts";
import type { Environment } from "../lib/platform/config.ts";
import { SecretBox } from "../lib/platform/crypto.ts";
import { auditKeysFrom, useAuditKeys } from "../lib/audit/anchor.ts";

/** The sealing key of tests that open databases without a service (bank details, bank files). */
export const testSecretBox = await SecretBox.fromBase64Key(btoa("e".repeat(32)));

/** The audit keys of tests in this process, as a service derives them from its ENCRYPTION_KEY. */
export const testAuditKeys = auditKeysFrom(btoa("e".repeat(32)));
useAuditKeys(testAuditKeys);

export async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix: "disbursement-test-" });
  try {
    return await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

export function openTempDatabase(
  dir: string,
  environment: Environment = "test",
): Promise<Database> {
  return openDatabase({
    environment,
    url: `file:${dir}/${environment}.db`,
    busyTimeoutMs: 5000,
    unitsPerGroupMax: 512,
    readCacheEntries: 10_000,
  });
}

/**
 * Spawns the service from its sources as production starts it (no --dev): its secrets given, live
 * notifications off, on 127.0.0.1:`port` over `dataDir`; `env` adds or replaces settings.
 */
export function spawnProductionService(
  dataDir: string,
  port: number,
  options: { env?: Record<string, string>; stdout?: "piped" | "null" } = {},
): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--unstable-cron",
      "--unstable-lazy-dynamic-imports",
      new URL("../main.ts", import.meta.url).pathname,
    ],
    env: {
      PORT: String(port),
      HOST: "127.0.0.1",
      DATA_DIR: dataDir,
      JWT_SECRET: "j".repeat(40),
      ENCRYPTION_KEY: btoa("e".repeat(32)),
      LIVE_NOTIFICATIONS: "off",
      LOG_FORMAT: "off",
      ...options.env,
    },
    stdout: options.stdout ?? "null",
    stderr: "piped",
  }).spawn();
}

/** The texts of the statements SQLite ran (the embedded driver's prepared ones) while `run` ran. */
export async function statementTexts<T>(
  run: () => Promise<T>,
): Promise<{ value: T; texts: string[] }> {
  const proto = StatementSync.prototype as unknown as Record<string, (...a: unknown[]) => unknown>;
  const originals = { run: proto.run, all: proto.all };
  const texts: string[] = [];
  for (const name of ["run", "all"] as const) {
    proto[name] = function (this: StatementSync, ...args: unknown[]) {
      texts.push(this.sourceSQL);
      return originals[name].apply(this, args);
    };
  }
  try {
    return { value: await run(), texts };
  } finally {
    Object.assign(proto, originals);
  }
}
