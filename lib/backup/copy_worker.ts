/**
 * A worker thread that copies one database with `VACUUM INTO` over its own read-only connection,
 * then describes the copy. node:sqlite is synchronous: run on the service's thread, a copy would
 * hold up every request and the writer for its whole duration. Here the service's writer keeps
 * committing (WAL: the copy reads one snapshot, writers append beside it).
 */
import { DatabaseSync } from "node:sqlite";

/** What the service asks: copy `source` into `into`, a path that does not exist yet. */
export interface CopyRequest {
  readonly source: string;
  readonly into: string;
  readonly busyTimeoutMs: number;
  readonly tables: readonly string[];
}

export type CopyAnswer =
  | {
    readonly ok: true;
    readonly sqlite: string;
    readonly migrationsApplied: number;
    /** The journal time of the newest migration applied (drizzle's created_at), or null. */
    readonly newestMigrationWhen: number | null;
    readonly rows: Record<string, number>;
  }
  | { readonly ok: false; readonly error: string };

function copy(request: CopyRequest): CopyAnswer {
  const source = new DatabaseSync(request.source, {
    readOnly: true,
    timeout: request.busyTimeoutMs,
  });
  try {
    source.prepare("VACUUM INTO ?").run(request.into);
  } finally {
    source.close();
  }
  const copied = new DatabaseSync(request.into, { readOnly: true });
  try {
    const check = copied.prepare("PRAGMA quick_check").all().map((row) => Object.values(row)[0]);
    if (check.length !== 1 || check[0] !== "ok") {
      return { ok: false, error: `the copy fails quick_check: ${check.slice(0, 3).join("; ")}` };
    }
    const existing = new Set(
      copied.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all()
        .map((row) => String(row.name)),
    );
    const rows: Record<string, number> = {};
    for (const table of request.tables) {
      if (!existing.has(table)) continue;
      rows[table] = Number(copied.prepare(`SELECT count(*) AS n FROM "${table}"`).get()!.n);
    }
    const migrations = existing.has("__drizzle_migrations")
      ? copied.prepare(
        "SELECT count(*) AS applied, max(created_at) AS newest FROM __drizzle_migrations",
      ).get()!
      : { applied: 0, newest: null };
    return {
      ok: true,
      sqlite: String(copied.prepare("SELECT sqlite_version() AS v").get()!.v),
      migrationsApplied: Number(migrations.applied),
      newestMigrationWhen: migrations.newest === null ? null : Number(migrations.newest),
      rows,
    };
  } finally {
    copied.close();
  }
}

/** The worker's side of the channel (this module runs only as a worker). */
const port = self as unknown as {
  onmessage: (event: MessageEvent<CopyRequest>) => void;
  postMessage(answer: CopyAnswer): void;
};

port.onmessage = (event) => {
  let answer: CopyAnswer;
  try {
    answer = copy(event.data);
  } catch (error) {
    answer = { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
  port.postMessage(answer);
};
