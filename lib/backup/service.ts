/**
 * Online backups of both embedded databases: each is copied with `VACUUM INTO` from a read-only
 * connection on a worker thread (lib/backup/copy_worker.ts), so the service's writer keeps
 * committing; the two copies and a manifest are packed into one tar (lib/backup/archive.ts), and
 * its SHA-256 is printed and written beside it (`FILE.sha256`, as `sha256sum -c` reads it).
 */
import { basename, dirname } from "node:path";
import type { Database } from "../../db/client.ts";
import { migrationJournal } from "../../db/client.ts";
import { filePathOf } from "../../db/embedded_client.ts";
import { appendAudit, type AuditActor } from "../audit/store.ts";
import { configDefaults, type Environment } from "../platform/config.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import { workerModuleUrl } from "../platform/service_files.ts";
import {
  type BackupManifest,
  DATABASE_FILES,
  type DatabaseManifest,
  MONEY_TABLES,
  sha256Line,
  sha256OfFile,
  writeArchive,
} from "./archive.ts";
import type { CopyAnswer, CopyRequest } from "./copy_worker.ts";

export interface BackupTaken {
  /** The archive written. */
  readonly file: string;
  readonly sha256: string;
  readonly bytes: number;
  readonly manifest: BackupManifest;
}

export type BackupRefusal =
  | "backup_belongs_to_server"
  | "backup_exists"
  | "backup_failed"
  | "invalid_input";

export interface BackupOptions {
  /** Where the archive goes; it must not exist. `out.sha256` is written beside it. */
  readonly out: string;
  readonly now: number;
  /** How long the copy's read connection waits on a lock (DB_BUSY_TIMEOUT_MS). */
  readonly busyTimeoutMs?: number;
  /** Prefix of the scratch directory made beside `out` for the two copies. */
  readonly scratchPrefix?: string;
}

/**
 * Copies both databases (their `file:` URLs) into one archive at `options.out`. A libSQL server's
 * database is refused: its backups belong to the server.
 */
export async function takeBackup(
  urls: Readonly<Record<Environment, string>>,
  options: BackupOptions,
): Promise<Result<BackupTaken, BackupRefusal>> {
  for (const environment of ["live", "test"] as const) {
    if (!urls[environment].startsWith("file:")) {
      return refuse(
        "backup_belongs_to_server",
        `the ${environment} database is a libSQL server (DATABASE_URL_${environment.toUpperCase()}): ` +
          "backup belongs to the libSQL server (its own snapshots and point-in-time restore); " +
          "this command copies embedded file: databases",
      );
    }
  }
  const outDir = dirname(options.out);
  if (!(await Deno.stat(outDir).then((info) => info.isDirectory, () => false))) {
    return refuse("invalid_input", `${outDir} is not a directory: make it first`, { field: "out" });
  }
  if (await exists(options.out)) {
    return refuse("backup_exists", `${options.out} exists: choose a new file name`, {
      field: "out",
    });
  }
  const scratch = await Deno.makeTempDir({
    dir: outDir,
    prefix: options.scratchPrefix ?? ".backup-",
  });
  const partial = `${options.out}.partial`;
  try {
    const copies = { live: `${scratch}/live.db`, test: `${scratch}/test.db` };
    const described: Partial<Record<Environment, DatabaseManifest>> = {};
    let sqlite = "";
    const journal = await migrationJournal();
    for (const environment of ["live", "test"] as const) {
      const answer = await copyOnWorker({
        source: filePathOf(urls[environment]),
        into: copies[environment],
        busyTimeoutMs: options.busyTimeoutMs ?? configDefaults.DB_BUSY_TIMEOUT_MS,
        tables: MONEY_TABLES,
      });
      if (!answer.ok) {
        return refuse(
          "backup_failed",
          `copying the ${environment} database failed: ${answer.error}`,
        );
      }
      sqlite = answer.sqlite;
      const newest = answer.newestMigrationWhen;
      described[environment] = {
        file: DATABASE_FILES[environment],
        bytes: (await Deno.stat(copies[environment])).size,
        sha256: await sha256OfFile(copies[environment]),
        migrations: {
          applied: answer.migrationsApplied,
          newest: newest === null
            ? null
            : journal.find((entry) => entry.when === newest)?.tag ?? `unknown (${newest})`,
        },
        rows: answer.rows,
      };
    }
    const manifest: BackupManifest = {
      format: "disbursements-backup",
      format_version: 1,
      created_at: new Date(options.now).toISOString(),
      deno: Deno.version.deno,
      sqlite,
      databases: { live: described.live!, test: described.test! },
    };
    // Written under a temporary name, so a crash never leaves half a backup under the real one.
    const sha256 = await writeArchive(partial, manifest, copies);
    await Deno.rename(partial, options.out);
    await Deno.writeTextFile(`${options.out}.sha256`, sha256Line(sha256, basename(options.out)), {
      mode: 0o600,
    });
    return ok({ file: options.out, sha256, bytes: (await Deno.stat(options.out)).size, manifest });
  } finally {
    await Deno.remove(scratch, { recursive: true }).catch(() => {});
    await Deno.remove(partial).catch(() => {});
  }
}

/**
 * The operator's backup: both databases copied into `out`, then one audit row in the live chain
 * naming the file and its SHA-256 (the copy does not hold its own audit row).
 */
export async function backupDatabases(
  databases: Readonly<Record<Environment, Database>>,
  options: BackupOptions & { readonly actor: AuditActor },
): Promise<Result<BackupTaken, BackupRefusal>> {
  const taken = await takeBackup(
    { live: databases.live.url, test: databases.test.url },
    options,
  );
  if (!taken.ok) return taken;
  await databases.live.writer.write((tx) =>
    appendAudit(tx, "live", options.actor, {
      at: options.now,
      action: "backup",
      objectType: "backup",
      objectId: taken.value.sha256,
      companyId: null,
      before: null,
      after: { file: taken.value.file, bytes: taken.value.bytes, manifest: taken.value.manifest },
    })
  );
  return taken;
}

/** Runs one copy on its own worker thread, which ends with it. */
function copyOnWorker(request: CopyRequest): Promise<CopyAnswer> {
  const worker = new Worker(workerModuleUrl("lib/backup/copy_worker.ts"), { type: "module" });
  return new Promise<CopyAnswer>((resolve) => {
    worker.onmessage = (event: MessageEvent<CopyAnswer>) => resolve(event.data);
    worker.onerror = (event) => {
      event.preventDefault();
      resolve({ ok: false, error: event.message });
    };
    worker.postMessage(request);
  }).finally(() => worker.terminate());
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}
