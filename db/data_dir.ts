/**
 * Files the running service keeps in DATA_DIR: the writer lock (one process writes a database
 * file at a time, contract §12), the admin token and the service file the operator CLI reads to
 * reach a running service's loopback admin endpoint; and whether the databases are there at all.
 */
import { DatabaseSync } from "node:sqlite";
import type { Environment } from "../lib/platform/config.ts";
import { ok, refuse, type Result } from "../lib/platform/result.ts";
import { randomBase62 } from "../lib/platform/keys.ts";
import { filePathOf } from "./file_url.ts";

export interface WriterLock {
  release(): Promise<void>;
}

/**
 * Takes the DATA_DIR writer lock without waiting. The lock is an exclusive SQLite lock on
 * DATA_DIR/writer.lock held by an open connection, so the operating system releases it when the
 * process dies, however it dies. Deno's built-in node:sqlite is used for this one file because
 * its close() releases the lock at once (the libsql driver closes lazily).
 */
export function acquireWriterLock(dataDir: string): Promise<Result<WriterLock, "data_dir_locked">> {
  const path = `${dataDir}/writer.lock`;
  const connection = new DatabaseSync(path, { timeout: 0 });
  try {
    // Under EXCLUSIVE locking mode an exclusive transaction keeps its lock until the connection
    // closes. Nothing is written: a write here cost every start its journal's fsyncs (issue 21).
    connection.exec("PRAGMA locking_mode=EXCLUSIVE; BEGIN EXCLUSIVE; COMMIT;");
  } catch (error) {
    connection.close();
    if (!/locked|busy/i.test(String(error))) throw error;
    return Promise.resolve(refuse(
      "data_dir_locked",
      `another process is using DATA_DIR ${dataDir} (lock ${path} is held): stop it, or use another DATA_DIR`,
    ));
  }
  return Promise.resolve(ok({
    release() {
      connection.close();
      return Promise.resolve();
    },
  }));
}

/** Whether a running process holds the DATA_DIR writer lock. */
export async function isDataDirLocked(dataDir: string): Promise<boolean> {
  try {
    await Deno.stat(`${dataDir}/writer.lock`);
  } catch {
    return false;
  }
  const lock = await acquireWriterLock(dataDir);
  if (lock.ok) await lock.value.release();
  return !lock.ok;
}

/**
 * Writes a fresh admin token (mode 0600) for this run and returns it. Synchronously, as the
 * service file: the start waits for both anyway, and Deno's first asynchronous file write loads
 * its streams module, several milliseconds of a cold start (issue 21).
 */
export function writeAdminToken(dataDir: string): string {
  const token = randomBase62(43);
  const path = `${dataDir}/admin-token`;
  Deno.writeTextFileSync(path, token + "\n", { mode: 0o600 });
  Deno.chmodSync(path, 0o600);
  return token;
}

/**
 * The id of the node that runs on this DATA_DIR, made once and kept: the scheduler's claims are
 * held in its name, so that a restart on the same DATA_DIR (which holds its lock) takes over the
 * claims its stopped process left, and another node's stay theirs.
 */
export function nodeIdOf(dataDir: string): string {
  const path = `${dataDir}/node-id`;
  try {
    return Deno.readTextFileSync(path).trim();
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  const id = `node_${randomBase62(22)}`;
  Deno.writeTextFileSync(path, id + "\n", { mode: 0o600 });
  return id;
}

export async function readAdminToken(dataDir: string): Promise<string> {
  return (await Deno.readTextFile(`${dataDir}/admin-token`)).trim();
}

export interface ServiceFile {
  readonly admin_url: string;
}

export function writeServiceFile(dataDir: string, service: ServiceFile): void {
  Deno.writeTextFileSync(`${dataDir}/service.json`, JSON.stringify(service) + "\n", {
    mode: 0o600,
  });
}

export async function readServiceFile(dataDir: string): Promise<ServiceFile> {
  return JSON.parse(await Deno.readTextFile(`${dataDir}/service.json`)) as ServiceFile;
}

/**
 * The absolute paths of the embedded database files that the given URLs name and that do not
 * exist. A libSQL server URL names no file here (the server keeps its databases); nor does
 * `:memory:`.
 */
export async function missingDatabaseFiles(
  urls: Readonly<Record<Environment, string>>,
): Promise<string[]> {
  // Imported here, not at the top: node:path loads Deno's Node compatibility layer, which the
  // service's cold start does not need (issue 21).
  const { resolve } = await import("node:path");
  const missing: string[] = [];
  for (const url of [urls.test, urls.live]) {
    if (!url.startsWith("file:")) continue;
    const path = filePathOf(url);
    if (path === "" || path === ":memory:") continue;
    try {
      await Deno.stat(path);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
      missing.push(resolve(path));
    }
  }
  return missing;
}
