/**
 * Makes an embedded database's commits durable, for requests' writes off the service's thread.
 * The writer's connection runs `synchronous=NORMAL`: its COMMIT writes the WAL's frames but does
 * not sync them. After a group of requests' writes, `committed()` syncs the WAL file (fdatasync) on
 * Deno's blocking pool while the thread goes on reading and answering requests and committing the
 * next group. After any other group (background work: jobs, a cutoff's units) the WAL is synced on
 * the thread at once (`committedAndSynced()`), as a `synchronous=FULL` COMMIT did: reads answered
 * meanwhile would otherwise wait for that sync (below), and nobody waits on background work's
 * latency. A unit's caller is answered only once a sync that began after its commit has finished,
 * so a 2xx survives a power cut as it did when every COMMIT synced (`synchronous=FULL`): the same
 * frames reach the disk before anyone is told. One sync covers every commit before it, so groups
 * committed during a sync share the next one.
 *
 * Another connection can read a commit before its sync ends. A power cut in that moment loses the
 * commit (it was answered to nobody) but not what was read of it; so nothing may leave the
 * process on the strength of a read until `untilDurable()` (lib/platform/durability.ts): every
 * answer and every call out (a rail, a bank, a provider, a webhook, a message) waits on it first.
 *
 * SQLite keeps its own syncs where a power cut could otherwise corrupt the file: the WAL header at
 * each restart, and the WAL and the database around every checkpoint.
 */
import type { DurableCommits } from "../lib/platform/durability.ts";

/** Syncs a file's data to the disk: off the thread (`later`) or on it (`now`). */
export interface SyncFile {
  later(path: string): Promise<void>;
  now(path: string): void;
}

const syncData: SyncFile = { later: syncDataLater, now: syncDataNow };

/** No WAL: SQLite removed it after checkpointing every frame into the synced database. */
function noWal(error: unknown): null {
  if (error instanceof Deno.errors.NotFound) return null;
  throw error;
}

async function syncDataLater(path: string): Promise<void> {
  const file = await Deno.open(path, { read: true }).catch(noWal);
  if (file === null) return;
  try {
    await file.syncData();
  } finally {
    file.close();
  }
}

function syncDataNow(path: string): void {
  let file: Deno.FsFile | null;
  try {
    file = Deno.openSync(path, { read: true });
  } catch (error) {
    file = noWal(error);
  }
  if (file === null) return;
  try {
    file.syncDataSync();
  } finally {
    file.close();
  }
}

/**
 * A failed sync, in the words the writer reads as a storage failure (see storageFailureOf): a full
 * disk, or a disk I/O error.
 */
export class WalSyncError extends Error {
  constructor(cause: unknown) {
    const words = cause instanceof Error ? cause.message : String(cause);
    const full = /no space left|os error 28|quota/i.test(words);
    super(
      `${full ? "database or disk is full" : "disk I/O error"}: the WAL was not synced (${words})`,
      { cause },
    );
    this.name = "WalSyncError";
  }
}

interface Waiter {
  readonly commit: number;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Syncs that may run at once. A commit that lands while one runs needs a sync that begins after
 * it; with one at a time it would wait for the running one to end first (up to two syncs' time).
 */
export const WAL_SYNCS_IN_FLIGHT_MAX = 4;

export class WalSync implements DurableCommits {
  readonly #walPath: string;
  readonly #sync: SyncFile;
  #commits = 0;
  #syncedThrough = 0;
  #waiters: Waiter[] = [];
  /** The commit each running sync covers (what was committed when it began). */
  #running: number[] = [];
  readonly stats = { syncs: 0, commits: 0 };

  /** `databasePath`: the database file; its WAL is the file beside it named `-wal`. */
  constructor(databasePath: string, sync: SyncFile = syncData) {
    this.#walPath = `${databasePath}-wal`;
    this.#sync = sync;
  }

  /**
   * A group just committed: settles once a sync that began after this call has finished, or
   * rejects with the sync's error (the commit is then visible but may not survive a power cut).
   */
  committed(): Promise<void> {
    const commit = ++this.#commits;
    this.stats.commits += 1;
    return this.#waitFor(commit);
  }

  /**
   * A group just committed, and is synced now, on the service's thread, as a COMMIT under
   * `synchronous=FULL` is: every commit so far is then durable, those still waiting for a sync
   * off the thread too. Throws a WalSyncError when the sync fails.
   */
  committedAndSynced(): void {
    const commit = ++this.#commits;
    this.stats.commits += 1;
    try {
      this.#sync.now(this.#walPath);
    } catch (error) {
      throw new WalSyncError(error);
    }
    this.stats.syncs += 1;
    this.#syncedThrough = commit;
    const settled = this.#waiters;
    this.#waiters = [];
    for (const waiter of settled) waiter.resolve();
  }

  /** Whether every commit so far is on the disk. */
  get durableNow(): boolean {
    return this.#commits === this.#syncedThrough;
  }

  /** Settles once every commit so far is on the disk. */
  durable(): Promise<void> {
    return this.durableNow ? Promise.resolve() : this.#waitFor(this.#commits);
  }

  #waitFor(commit: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#waiters.push({ commit, resolve, reject });
      this.#startSyncs();
    });
  }

  /** Starts a sync when a waiter's commit is covered by none that runs, if one more may run. */
  #startSyncs(): void {
    const covered = Math.max(this.#syncedThrough, ...this.#running);
    if (this.#running.length >= WAL_SYNCS_IN_FLIGHT_MAX) return;
    if (!this.#waiters.some((waiter) => waiter.commit > covered)) return;
    // What is committed when the sync begins is what it makes durable.
    const through = this.#commits;
    this.#running.push(through);
    this.#sync.later(this.#walPath).then(
      () => this.#ended(through, null),
      (error) => this.#ended(through, new WalSyncError(error)),
    );
  }

  #ended(through: number, failure: WalSyncError | null): void {
    this.#running.splice(this.#running.indexOf(through), 1);
    if (failure === null) {
      this.stats.syncs += 1;
      this.#syncedThrough = Math.max(this.#syncedThrough, through);
    }
    const settled = this.#waiters.filter((waiter) => waiter.commit <= through);
    this.#waiters = this.#waiters.filter((waiter) => waiter.commit > through);
    for (const waiter of settled) {
      if (failure) waiter.reject(failure);
      else waiter.resolve();
    }
    this.#startSyncs();
  }
}
