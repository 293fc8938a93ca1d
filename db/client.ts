/**
 * Opens one environment's database: the single group-commit writer connection, a read
 * connection, and the committed drizzle-kit migrations applied at start. A `file:` URL is the
 * embedded default; `libsql://` and http(s) URLs reach a libSQL server with the same code.
 */
import type { Client } from "@libsql/client";
import { CommittedReadCache } from "../lib/platform/committed_read_cache.ts";
import type { Config, Environment } from "../lib/platform/config.ts";
import { filePathOf, openEmbeddedClient } from "./embedded_client.ts";
import type { CachedV1Disbursement } from "../lib/disbursements/v1_store.ts";
import { type Db, GroupCommitWriter } from "./writer.ts";
import { drizzleOver, loadQueryLayer } from "./query_layer.ts";

export const migrationsFolder = new URL("./migrations", import.meta.url).pathname;

export interface Database {
  readonly environment: Environment;
  readonly url: string;
  readonly writer: GroupCommitWriter;
  /** Reads of committed data; never used to decide a write (that read belongs in the unit). */
  readonly read: Db;
  readonly readClient: Client;
  /**
   * /v1 disbursements as last committed, by id, for GETs. Only an embedded file has one: its
   * writer (this process, under the DATA_DIR lock) invalidates every copy it changes. Another
   * process may write a libSQL server's database, so there the cache keeps nothing.
   */
  readonly disbursementReads: CommittedReadCache<CachedV1Disbursement>;
  close(): Promise<void>;
}

export interface OpenOptions {
  readonly environment: Environment;
  readonly url: string;
  readonly authToken?: string | null;
  readonly busyTimeoutMs: number;
  readonly unitsPerGroupMax: number;
  readonly readCacheEntries: number;
  /**
   * False to open without loading drizzle and the schema: `read` then works once
   * loadQueryLayer() resolved (the service's cold start loads it with its routes).
   */
  readonly loadQueryLayer?: boolean;
}

/** Opens, configures and migrates a database. */
export async function openDatabase(options: OpenOptions): Promise<Database> {
  const local = options.url.startsWith("file:");
  if (local) await ensureParentDir(options.url);
  // `@libsql/client` (its native driver and network protocols) is loaded only for a server URL.
  const createClient = local ? null : (await import("@libsql/client")).createClient;
  // One connection each: PRAGMAs set on it stay set, and only the write connection ever writes.
  const connect = (): Client =>
    createClient === null ? openEmbeddedClient(options.url, options.busyTimeoutMs) : createClient({
      url: options.url,
      authToken: options.authToken ?? undefined,
      timeout: options.busyTimeoutMs,
      concurrency: 1,
    });
  const writeClient = connect();
  if (local) {
    await writeClient.execute("PRAGMA journal_mode=WAL");
    await writeClient.execute("PRAGMA synchronous=FULL");
    await writeClient.execute("PRAGMA foreign_keys=ON");
    await writeClient.execute("PRAGMA temp_store=MEMORY");
    await assertDurable(writeClient);
  }
  // Most starts find nothing to apply: the migrator (and its module) is loaded only when the
  // journal holds a migration the database has not seen.
  if (await hasUnappliedMigrations(writeClient)) {
    const [{ migrate }, { drizzle }] = await Promise.all([
      import("drizzle-orm/libsql/migrator"),
      import("./drizzle.ts"),
    ]);
    await migrate(drizzle(writeClient), { migrationsFolder });
  }
  if (local) await assertDurable(writeClient);

  let readClient = writeClient;
  if (local) {
    readClient = connect();
    await readClient.execute("PRAGMA query_only=1");
  }
  const writer = new GroupCommitWriter(writeClient, { unitsPerGroupMax: options.unitsPerGroupMax });
  const disbursementReads = new CommittedReadCache<CachedV1Disbursement>(
    local ? options.readCacheEntries : 0,
  );
  writer.onCommit((changed) => disbursementReads.invalidate(changed));
  if (options.loadQueryLayer !== false) await loadQueryLayer();
  let read: Db | null = null;
  return {
    environment: options.environment,
    url: options.url,
    writer,
    get read() {
      return read ??= drizzleOver(readClient);
    },
    readClient,
    disbursementReads,
    async close() {
      await writer.close();
      if (readClient !== writeClient) readClient.close();
      writeClient.close();
    },
  };
}

/** Opens the test and live databases a configuration names. */
export async function openEnvironmentDatabases(
  config: Config,
  options: { loadQueryLayer?: boolean } = {},
): Promise<Record<Environment, Database>> {
  const open = (environment: Environment) =>
    openDatabase({
      environment,
      url: config.databaseUrls[environment],
      authToken: config.databaseAuthToken,
      busyTimeoutMs: config.limits.DB_BUSY_TIMEOUT_MS,
      unitsPerGroupMax: config.limits.WRITE_GROUP_UNITS_MAX,
      readCacheEntries: config.limits.READ_CACHE_ENTRIES,
      loadQueryLayer: options.loadQueryLayer,
    });
  return { test: await open("test"), live: await open("live") };
}

/** One committed migration: its tag (the SQL file's name) and its journal time. */
export interface MigrationEntry {
  readonly tag: string;
  readonly when: number;
}

/** drizzle-kit's journal of the committed migrations, in order. */
async function readJournal(): Promise<{ entries: MigrationEntry[] }> {
  return JSON.parse(await Deno.readTextFile(`${migrationsFolder}/meta/_journal.json`));
}

/** The committed migrations, in order. */
export async function migrationJournal(): Promise<MigrationEntry[]> {
  return (await readJournal()).entries.map(({ tag, when }) => ({ tag, when }));
}

/**
 * The migrations a start would run on a database whose newest applied migration has journal time
 * `newestApplied` (null: none applied): the migrator's rule, every one newer than that.
 */
export function migrationsToRun(
  journal: readonly MigrationEntry[],
  newestApplied: number | null,
): MigrationEntry[] {
  return journal.filter((entry) => newestApplied === null || entry.when > newestApplied);
}

/**
 * The migrator's own rule: a migration runs when it is newer (by its journal time) than the
 * newest one the database records; no record table yet means nothing was applied.
 */
export async function hasUnappliedMigrations(client: Client): Promise<boolean> {
  const newest = Math.max(...(await readJournal()).entries.map((entry) => entry.when));
  let applied;
  try {
    applied = await client.execute(
      "SELECT max(created_at) AS created_at FROM __drizzle_migrations",
    );
  } catch {
    return true;
  }
  const newestApplied = applied.rows[0]?.created_at;
  return newestApplied === null || newestApplied === undefined || Number(newestApplied) < newest;
}

/** The journal's migration count against the applied ones: readiness needs both equal. */
export async function migrationsPending(database: Database): Promise<number> {
  const journal = await readJournal();
  const applied = await database.readClient.execute(
    "SELECT count(*) AS n FROM __drizzle_migrations",
  );
  return journal.entries.length - Number(applied.rows[0].n);
}

async function assertDurable(client: Client): Promise<void> {
  const rows = (await client.execute("PRAGMA synchronous")).rows;
  const level = Number(rows[0]?.synchronous);
  if (level !== 2) {
    throw new Error(
      `PRAGMA synchronous is ${level}, must be 2 (FULL): a 2xx must survive power loss`,
    );
  }
}

async function ensureParentDir(url: string): Promise<void> {
  const path = filePathOf(url);
  if (path === ":memory:" || path === "") return;
  const dir = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : ".";
  if (dir) await Deno.mkdir(dir, { recursive: true });
}
