/**
 * Opens one environment's database: the single group-commit writer connection, a read
 * connection, and the committed drizzle-kit migrations. A `file:` URL is the embedded default,
 * migrated at start (this process holds the DATA_DIR lock). `libsql://` and http(s) URLs reach a
 * libSQL server that several nodes share: a node checks the server answers and carries every
 * migration of its code, and refuses to start otherwise; `deno task admin migrate` applies them
 * once, under a lock in the database.
 */
import type { Client } from "@libsql/client";
import { CommittedReadCache } from "../lib/platform/committed_read_cache.ts";
import type { Config, Environment } from "../lib/platform/config.ts";
import { filePathOf, openEmbeddedClient } from "./embedded_client.ts";
import { WAL_FRAMES_RESTART_MIN, WalCheckpointer } from "./checkpointer.ts";
import type { CachedV1Disbursement } from "../lib/disbursements/v1_store.ts";
import { type Db, GroupCommitWriter } from "./writer.ts";
import { WalSync } from "./wal_sync.ts";
import { forgetCommits, trackCommits } from "../lib/platform/durability.ts";
import { drizzleOver, loadQueryLayer } from "./query_layer.ts";
import { serviceFileUrl } from "../lib/platform/service_files.ts";

export const migrationsFolder = serviceFileUrl("db/migrations").pathname;

export interface Database {
  readonly environment: Environment;
  readonly url: string;
  /**
   * True for a libSQL server, which other nodes write too: what this process holds in memory
   * (a running idempotency key, a cached row) decides nothing there; the database does.
   */
  readonly shared: boolean;
  readonly writer: GroupCommitWriter;
  /** Reads of committed data; never used to decide a write (that read belongs in the unit). */
  readonly read: Db;
  readonly readClient: Client;
  /** How another thread of this process opens a read connection of its own (openReader). */
  readonly readerOptions: ReaderOptions;
  /**
   * /v1 disbursements as last committed, by id, for GETs. Only an embedded file has one: its
   * writer (this process, under the DATA_DIR lock) invalidates every copy it changes. Another
   * process may write a libSQL server's database, so there the cache keeps nothing.
   */
  readonly disbursementReads: CommittedReadCache<CachedV1Disbursement>;
  /** Starts an embedded file's WAL checkpoint worker now (a service, with its other workers). */
  startCheckpoints(): void;
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

/**
 * A database the configuration names cannot be used: unreachable, refusing the credentials, or
 * on other migrations than the code. The service says this at start and does not start.
 */
export class DatabaseStartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DatabaseStartError";
  }
}

/** What a read connection of a database is opened with; plain data a worker can be handed. */
export interface ReaderOptions {
  readonly url: string;
  readonly authToken: string | null;
  readonly busyTimeoutMs: number;
}

/**
 * A read connection of committed data: its own embedded connection (query only) for a `file:`
 * URL, a client of the libSQL server otherwise.
 */
export async function openReader(options: ReaderOptions): Promise<Client> {
  if (options.url.startsWith("file:")) {
    const client = openEmbeddedClient(options.url, options.busyTimeoutMs);
    await client.execute("PRAGMA query_only=1");
    return client;
  }
  const { createClient } = await import("@libsql/client");
  // Each read on a server is a round trip of its own stream: one at a time would queue every
  // GET and poll of the node behind the slowest (the write client stays one transaction).
  return createClient({
    url: options.url,
    authToken: options.authToken ?? undefined,
    timeout: options.busyTimeoutMs,
    concurrency: REMOTE_READS_CONCURRENT_MAX,
  });
}

/** WAL pages at which a commit checkpoints on the writer's connection (see openDatabase). */
const WAL_AUTOCHECKPOINT_PAGES = 4 * WAL_FRAMES_RESTART_MIN;

/** Reads a node keeps in flight to a libSQL server at once (`@libsql/client`'s own default). */
const REMOTE_READS_CONCURRENT_MAX = 20;

/** Opens, configures and migrates a database (a libSQL server is checked, never migrated). */
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
    // Checkpoints run on a worker thread (db/checkpointer.ts), which keeps the WAL near
    // WAL_FRAMES_RESTART_MIN pages. SQLite's own, inside a commit on the service's thread, is left
    // for a WAL the worker could not keep small (not started yet, failed, or held back by a
    // reader's old snapshot) at four times that.
    await writeClient.execute(`PRAGMA wal_autocheckpoint=${WAL_AUTOCHECKPOINT_PAGES}`);
    await assertDurable(writeClient);
    // Most starts find nothing to apply: the migrator (and its module) is loaded only when the
    // journal holds a migration the database has not seen.
    if (await hasUnappliedMigrations(writeClient)) await runMigrator(writeClient);
    await assertDurable(writeClient);
  } else {
    try {
      await assertServerReady(writeClient, options);
    } catch (error) {
      writeClient.close();
      throw error;
    }
  }

  const readerOptions: ReaderOptions = {
    url: options.url,
    authToken: options.authToken ?? null,
    busyTimeoutMs: options.busyTimeoutMs,
  };
  const readClient = await openReader(readerOptions);
  const checkpointer = local
    ? new WalCheckpointer(filePathOf(options.url), options.busyTimeoutMs)
    : null;
  const walSync = local ? await syncingWalOffThread(writeClient, options.url) : null;
  const writer = new GroupCommitWriter(writeClient, {
    unitsPerGroupMax: options.unitsPerGroupMax,
    checkpoints: checkpointer ?? undefined,
    walSync: walSync ?? undefined,
  });
  const disbursementReads = new CommittedReadCache<CachedV1Disbursement>(
    local ? options.readCacheEntries : 0,
  );
  writer.onCommit((changed) => disbursementReads.invalidate(changed));
  if (options.loadQueryLayer !== false) await loadQueryLayer();
  let read: Db | null = null;
  return {
    environment: options.environment,
    url: options.url,
    shared: !local,
    writer,
    get read() {
      return read ??= drizzleOver(readClient);
    },
    readClient,
    readerOptions,
    disbursementReads,
    startCheckpoints: () => checkpointer?.start(),
    async close() {
      await writer.close();
      if (walSync) forgetCommits(walSync);
      await checkpointer?.close();
      readClient.close();
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
  const test = await open("test");
  try {
    return { test, live: await open("live") };
  } catch (error) {
    // Nothing starts half-way: the database already open is closed again.
    await test.close();
    throw error;
  }
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

async function assertDurable(client: Client, level = 2): Promise<void> {
  const rows = (await client.execute("PRAGMA synchronous")).rows;
  const found = Number(rows[0]?.synchronous);
  if (found !== level) {
    throw new Error(
      `PRAGMA synchronous is ${found}, must be ${level}: a 2xx must survive power loss`,
    );
  }
}

/**
 * From here on the writer's COMMIT does not sync the WAL (synchronous=NORMAL) and a WalSync
 * syncs it off the service's thread before any caller is answered (db/wal_sync.ts); migrations
 * above ran with every COMMIT synced. A database in memory has no WAL to sync and stays FULL.
 */
async function syncingWalOffThread(client: Client, url: string): Promise<WalSync | null> {
  const path = filePathOf(url);
  if (path === ":memory:" || path === "") return null;
  await client.execute("PRAGMA synchronous=NORMAL");
  await assertDurable(client, 1);
  const walSync = new WalSync(path);
  trackCommits(walSync);
  return walSync;
}

async function ensureParentDir(url: string): Promise<void> {
  const path = filePathOf(url);
  if (path === ":memory:" || path === "") return;
  const dir = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : ".";
  if (dir) await Deno.mkdir(dir, { recursive: true });
}

async function runMigrator(client: Client): Promise<void> {
  const [{ migrate }, { drizzle }] = await Promise.all([
    import("drizzle-orm/libsql/migrator"),
    import("./drizzle.ts"),
  ]);
  await migrate(drizzle(client), { migrationsFolder });
}

/** The server URL as logs and errors may show it: no query (a token may travel there). */
export function serverWhere(url: string): string {
  return url.replace(/\?.*$/, "");
}

/** The setting that names this environment's database. */
const urlSetting = (environment: Environment) => `DATABASE_URL_${environment.toUpperCase()}`;

/** How many committed migrations the database records, and the journal time of its newest. */
async function appliedMigrations(
  client: Client,
): Promise<{ count: number; newest: number | null }> {
  const { rows } = await client.execute(
    "SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'",
  );
  if (Number(rows[0].n) === 0) return { count: 0, newest: null };
  const applied = await client.execute(
    "SELECT count(*) AS n, max(created_at) AS newest FROM __drizzle_migrations",
  );
  const newest = applied.rows[0].newest;
  return { count: Number(applied.rows[0].n), newest: newest === null ? null : Number(newest) };
}

/**
 * A libSQL server is usable when it answers with these credentials and records exactly the
 * migrations of this code. Several nodes share it, so none migrates it at start: a node on newer
 * code than the database would change it under nodes still running the older code.
 */
async function assertServerReady(
  client: Client,
  options: Pick<OpenOptions, "environment" | "url">,
): Promise<void> {
  const setting = `${urlSetting(options.environment)} (${serverWhere(options.url)})`;
  let applied;
  try {
    applied = await appliedMigrations(client);
  } catch (error) {
    throw new DatabaseStartError(serverFailureMessage(setting, error));
  }
  const journal = await migrationJournal();
  const newestKnown = Math.max(...journal.map((entry) => entry.when));
  if (applied.newest !== null && applied.newest > newestKnown) {
    throw new DatabaseStartError(
      `${setting} records migrations newer than this code knows (${applied.count} applied, ` +
        `${journal.length} in this code's journal): a newer version migrated it; run that version`,
    );
  }
  const pending = migrationsToRun(journal, applied.newest);
  if (pending.length > 0) {
    throw new DatabaseStartError(
      `${setting} is on an older migration than this code: ${applied.count} of ` +
        `${journal.length} applied, ${pending.length} to apply (${
          pending.map((entry) => entry.tag).join(", ")
        }). Nodes never migrate a shared libSQL server at start: run \`deno task admin migrate\` ` +
        "once with this code and the same DATABASE_URL_* settings, then start the nodes",
    );
  }
}

/** Says why a libSQL server could not be used, naming the setting and what to check. */
function serverFailureMessage(setting: string, error: unknown): string {
  let status: number | null = null;
  const messages: string[] = [];
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    messages.push(current.message);
    const candidate = (current as { status?: unknown }).status;
    if (typeof candidate === "number") status = candidate;
    current = current.cause;
  }
  const detail = messages[0] ?? String(error);
  if (status === 401 || status === 403 || messages.some((m) => /\b(401|403)\b/.test(m))) {
    return `${setting} refused the credentials (${detail}): set DATABASE_AUTH_TOKEN to a token ` +
      "this libSQL server accepts";
  }
  if (error instanceof TypeError || messages.some((m) => /fetch failed|connect|refused/i.test(m))) {
    return `${setting} is unreachable (${detail}): check the URL and that the libSQL server runs`;
  }
  return `${setting} failed its first query (${detail})`;
}

/** How long a `deno task admin migrate` holds the database's migration lock at most. */
export const MIGRATION_LOCK_LEASE_MS = 600_000;
/** How often a migrator waiting for the lock looks again. */
const MIGRATION_LOCK_POLL_MS = 200;

/** What one migrator did to one database. */
export interface MigrationRun {
  /** Migrations this run applied (0 when another run had applied them). */
  readonly appliedNow: number;
  /** Migrations the database records afterwards. */
  readonly applied: number;
}

/**
 * Applies this code's pending migrations to a libSQL server once, however many migrators run at
 * the same time: each takes the lock row of `__migration_lock` (one write; the holder's lease
 * frees it if the holder dies), looks under the lock what is pending, migrates, and releases it.
 * A migrator that finds the lock held waits up to `waitMs`, then finds nothing left to apply.
 */
export async function migrateServerUnderLock(
  client: Client,
  options: { holder: string; leaseMs?: number; waitMs?: number; now?: () => number },
): Promise<MigrationRun> {
  const leaseMs = options.leaseMs ?? MIGRATION_LOCK_LEASE_MS;
  const now = options.now ?? Date.now;
  const giveUpAt = now() + (options.waitMs ?? leaseMs + MIGRATION_LOCK_POLL_MS * 5);
  await client.execute(`CREATE TABLE IF NOT EXISTS __migration_lock (
    id INTEGER PRIMARY KEY CHECK (id = 1), holder TEXT NOT NULL, lease_until INTEGER NOT NULL)`);
  for (;;) {
    const taken = await client.execute({
      sql: `INSERT INTO __migration_lock (id, holder, lease_until) VALUES (1, ?, ?)
            ON CONFLICT (id) DO UPDATE SET holder = excluded.holder, lease_until = excluded.lease_until
            WHERE __migration_lock.lease_until <= ?
            RETURNING holder`,
      args: [options.holder, now() + leaseMs, now()],
    });
    if (taken.rows.length === 1) break;
    if (now() >= giveUpAt) {
      const { rows } = await client.execute("SELECT holder, lease_until FROM __migration_lock");
      throw new Error(
        `the migration lock is held by ${rows[0]?.holder} until ${
          new Date(Number(rows[0]?.lease_until)).toISOString()
        }: another migration runs; try again after it`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, MIGRATION_LOCK_POLL_MS));
  }
  try {
    const before = await appliedMigrations(client);
    if (migrationsToRun(await migrationJournal(), before.newest).length > 0) {
      await runMigrator(client);
    }
    const after = await appliedMigrations(client);
    return { appliedNow: after.count - before.count, applied: after.count };
  } finally {
    await client.execute({
      sql: "DELETE FROM __migration_lock WHERE holder = ?",
      args: [options.holder],
    });
  }
}

/**
 * `deno task admin migrate`: applies this code's pending migrations to the libSQL server at
 * `url` under the database's migration lock. An embedded file is left alone: the service
 * migrates it at start, under the DATA_DIR lock.
 */
export async function migrateServer(
  url: string,
  options: { authToken: string | null; busyTimeoutMs: number },
): Promise<MigrationRun | null> {
  if (url.startsWith("file:")) return null;
  const { createClient } = await import("@libsql/client");
  const client = createClient({
    url,
    authToken: options.authToken ?? undefined,
    timeout: options.busyTimeoutMs,
    concurrency: 1,
  });
  try {
    return await migrateServerUnderLock(client, {
      holder: `${Deno.hostname()}:${Deno.pid}:${crypto.randomUUID()}`,
    });
  } finally {
    client.close();
  }
}
