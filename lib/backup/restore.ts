/**
 * Restores a backup into an empty data directory. The archive is read twice: first without
 * writing anything (every header, the manifest, each database's SHA-256 and size, the whole
 * file's SHA-256 against `FILE.sha256` or the one given, the migration level against this
 * code's), then once more to write the two databases, checked again as they are written. Any
 * refusal leaves the directory as it was (a directory the restore made is removed).
 */
import { DatabaseSync } from "node:sqlite";
import { migrationJournal } from "../../db/client.ts";
import { acquireWriterLock } from "../../db/data_dir.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import { type BackupManifest, DATABASE_FILES, readArchive, sha256FromLine } from "./archive.ts";

export interface RestoreOptions {
  /** The backup archive. */
  readonly from: string;
  /** The data directory to fill: absent or empty. */
  readonly dataDir: string;
  /** The archive's expected SHA-256; else the one in `from.sha256`, when that file exists. */
  readonly sha256?: string | null;
}

export interface Restored {
  readonly dataDir: string;
  readonly files: readonly string[];
  readonly sha256: string;
  /** Where the whole file's SHA-256 was checked against: the flag, the .sha256 file, or nothing. */
  readonly sha256Checked: "flag" | "sha256_file" | "manifest_only";
  readonly manifest: BackupManifest;
}

export type RestoreRefusal =
  | "backup_not_found"
  | "backup_corrupted"
  | "backup_newer_than_code"
  | "data_dir_not_empty"
  | "invalid_input";

/** Entries listed in a refusal of a non-empty directory, at most. */
const LISTED_ENTRIES_MAX = 5;

export async function restoreBackup(
  options: RestoreOptions,
): Promise<Result<Restored, RestoreRefusal>> {
  const { from, dataDir } = options;
  try {
    if (!(await Deno.stat(from)).isFile) {
      return refuse("backup_not_found", `${from} is not a file`, { field: "from" });
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    return refuse("backup_not_found", `no backup at ${from}`, { field: "from" });
  }
  const empty = await checkEmpty(dataDir);
  if (!empty.ok) return empty;

  const expected = await expectedSha256(options);
  if (!expected.ok) return expected;
  const verified = await readArchive(from, () => Promise.resolve(null));
  if (!verified.ok) return verified;
  if (expected.value && verified.value.sha256 !== expected.value.sha256) {
    return refuse(
      "backup_corrupted",
      `the SHA-256 of ${from} is ${verified.value.sha256}; ${
        expected.value.source === "flag" ? "--sha256" : `${from}.sha256`
      } says ${expected.value.sha256}`,
      { field: "from" },
    );
  }
  const manifest = verified.value.manifest;
  const known = new Set((await migrationJournal()).map((entry) => entry.tag));
  for (const environment of ["live", "test"] as const) {
    const newest = manifest.databases[environment].migrations.newest;
    if (newest !== null && !known.has(newest)) {
      return refuse(
        "backup_newer_than_code",
        `the ${environment} database of ${from} is at migration ${newest}, which this code does ` +
          "not know: restore it with the version that wrote it",
        { field: "from" },
      );
    }
  }

  const created = empty.value === "absent";
  await Deno.mkdir(dataDir, { recursive: true });
  const lock = await acquireWriterLock(dataDir);
  if (!lock.ok) {
    if (created) await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    return refuse("data_dir_not_empty", lock.message, { field: "data-dir" });
  }
  const written: string[] = [];
  let restored = false;
  try {
    // Written under temporary names, checked again as written, then checked by SQLite itself.
    const again = await readArchive(from, async (name) => {
      const path = `${dataDir}/${name}.restoring`;
      written.push(path);
      const file = await Deno.open(path, { write: true, createNew: true, mode: 0o600 });
      return {
        async write(chunk: Uint8Array) {
          for (let at = 0; at < chunk.length;) at += await file.write(chunk.subarray(at));
        },
        async close() {
          await file.sync();
          file.close();
        },
      };
    });
    if (!again.ok) return again;
    if (again.value.sha256 !== verified.value.sha256) {
      return refuse("backup_corrupted", `${from} changed while it was restored`, {
        field: "from",
      });
    }
    for (const name of Object.values(DATABASE_FILES)) {
      const problem = quickCheck(`${dataDir}/${name}.restoring`);
      if (problem !== null) {
        return refuse("backup_corrupted", `${name} of ${from} fails SQLite's check: ${problem}`, {
          field: "from",
        });
      }
    }
    const files: string[] = [];
    for (const name of Object.values(DATABASE_FILES)) {
      await Deno.rename(`${dataDir}/${name}.restoring`, `${dataDir}/${name}`);
      written.push(`${dataDir}/${name}`);
      files.push(`${dataDir}/${name}`);
    }
    restored = true;
    return ok({
      dataDir,
      files,
      sha256: verified.value.sha256,
      sha256Checked: expected.value?.source ?? "manifest_only",
      manifest,
    });
  } finally {
    await lock.value.release();
    await Deno.remove(`${dataDir}/writer.lock`).catch(() => {});
    if (!restored) {
      for (const path of written) await removeWithSidecars(path);
      if (created) await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    }
  }
}

/** "absent" or "empty", else the refusal naming the directory and what it holds. */
async function checkEmpty(
  dataDir: string,
): Promise<Result<"absent" | "empty", "data_dir_not_empty" | "invalid_input">> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(dataDir);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return ok("absent");
    throw error;
  }
  if (!info.isDirectory) {
    return refuse("invalid_input", `${dataDir} is not a directory`, { field: "data-dir" });
  }
  const entries: string[] = [];
  for await (const entry of Deno.readDir(dataDir)) entries.push(entry.name);
  if (entries.length === 0) return ok("empty");
  entries.sort();
  return refuse(
    "data_dir_not_empty",
    `${dataDir} is not empty (${entries.slice(0, LISTED_ENTRIES_MAX).join(", ")}${
      entries.length > LISTED_ENTRIES_MAX ? `, … ${entries.length} entries` : ""
    }): a restore fills an empty data directory only`,
    { field: "data-dir" },
  );
}

async function expectedSha256(
  options: RestoreOptions,
): Promise<
  Result<{ sha256: string; source: "flag" | "sha256_file" } | null, "invalid_input">
> {
  if (options.sha256) {
    const sha256 = sha256FromLine(options.sha256);
    if (sha256 === null) {
      return refuse("invalid_input", "--sha256 must be 64 hexadecimal characters", {
        field: "sha256",
      });
    }
    return ok({ sha256, source: "flag" });
  }
  let text: string;
  try {
    text = await Deno.readTextFile(`${options.from}.sha256`);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return ok(null);
    throw error;
  }
  const sha256 = sha256FromLine(text);
  if (sha256 === null) {
    return refuse("invalid_input", `${options.from}.sha256 holds no SHA-256`, { field: "from" });
  }
  return ok({ sha256, source: "sha256_file" });
}

/** SQLite's quick_check of a restored file: null when it passes, else its first findings. */
function quickCheck(path: string): string | null {
  const database = new DatabaseSync(path);
  try {
    const found = database.prepare("PRAGMA quick_check").all().map((row) =>
      String(Object.values(row)[0])
    );
    return found.length === 1 && found[0] === "ok" ? null : found.slice(0, 3).join("; ");
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    database.close();
  }
}

async function removeWithSidecars(path: string): Promise<void> {
  for (const suffix of ["", "-wal", "-shm", "-journal"]) {
    await Deno.remove(path + suffix).catch(() => {});
  }
}
