/**
 * `migrate --check`: the migrations a start would run on each database, read without changing
 * anything. An embedded file is opened read-only (a missing one is reported, never created); a
 * libSQL server is asked with a plain SELECT.
 */
import { resolve } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { type MigrationEntry, migrationJournal, migrationsToRun } from "../../db/client.ts";
import { filePathOf } from "../../db/embedded_client.ts";

export interface MigrationCheck {
  /** `file` or `server`. */
  readonly kind: "file" | "server";
  /** The file path, or the server URL without its credentials. */
  readonly where: string;
  readonly exists: boolean;
  readonly applied: number;
  readonly pending: readonly MigrationEntry[];
}

/** What a start would apply to the database at `url`. */
export async function checkMigrations(
  url: string,
  authToken: string | null,
  busyTimeoutMs: number,
): Promise<MigrationCheck> {
  const journal = await migrationJournal();
  if (url.startsWith("file:")) {
    const path = filePathOf(url);
    try {
      await Deno.stat(path);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
      return { kind: "file", where: resolve(path), exists: false, applied: 0, pending: journal };
    }
    // Read-write but query-only: its close leaves the directory as it was (a read-only
    // connection leaves the -wal and -shm files it had to make); nothing can be written through it.
    const database = new DatabaseSync(path, { timeout: busyTimeoutMs });
    try {
      database.exec("PRAGMA query_only=1");
      const recorded = database.prepare(
        "SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'",
      ).get()!;
      const applied = Number(recorded.n) === 0 ? { n: 0, newest: null } : database.prepare(
        "SELECT count(*) AS n, max(created_at) AS newest FROM __drizzle_migrations",
      ).get()!;
      return {
        kind: "file",
        where: resolve(path),
        exists: true,
        applied: Number(applied.n),
        pending: migrationsToRun(journal, applied.newest === null ? null : Number(applied.newest)),
      };
    } finally {
      database.close();
    }
  }
  const { createClient } = await import("@libsql/client");
  const client = createClient({ url, authToken: authToken ?? undefined });
  const where = url.replace(/\?.*$/, "");
  try {
    const tables = await client.execute(
      "SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'",
    );
    if (Number(tables.rows[0].n) === 0) {
      return { kind: "server", where, exists: true, applied: 0, pending: journal };
    }
    const applied = await client.execute(
      "SELECT count(*) AS n, max(created_at) AS newest FROM __drizzle_migrations",
    );
    const newest = applied.rows[0].newest;
    return {
      kind: "server",
      where,
      exists: true,
      applied: Number(applied.rows[0].n),
      pending: migrationsToRun(journal, newest === null ? null : Number(newest)),
    };
  } finally {
    client.close();
  }
}
