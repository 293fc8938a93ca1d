/**
 * Whether what this process has committed is on the disk yet. An embedded database answers a
 * write's caller once its commit is synced, but its other connections may read the commit a
 * moment before (db/wal_sync.ts). So nothing leaves the process on the strength of a read before
 * `untilDurable()`: every answer, and every call out (a rail, a bank, a provider, a webhook, a
 * message), waits on it after its reads. Databases whose COMMIT is durable (a libSQL server, a
 * database in memory) register nothing, and it waits for nothing.
 */

/** The commits of one database. */
export interface DurableCommits {
  /** Whether every commit so far is on the disk. */
  readonly durableNow: boolean;
  /** Settles once every commit so far is on the disk; rejects when a sync failed. */
  durable(): Promise<void>;
}

const open = new Set<DurableCommits>();

/** Counts a database in untilDurable until `forgetCommits`. */
export function trackCommits(commits: DurableCommits): void {
  open.add(commits);
}

export function forgetCommits(commits: DurableCommits): void {
  open.delete(commits);
}

const DURABLE = Promise.resolve();

/**
 * Settles once every commit so far of every database of this process is on the disk (at once
 * when none waits for a sync); rejects when a sync failed.
 */
export function untilDurable(): Promise<void> {
  const syncing = [...open].filter((commits) => !commits.durableNow);
  if (syncing.length === 0) return DURABLE;
  if (syncing.length === 1) return syncing[0].durable();
  return Promise.all(syncing.map((commits) => commits.durable())).then(() => {});
}
