/**
 * The one writer of a database. Concurrent write units are queued and committed together in one
 * transaction, each inside its own savepoint: a unit that throws or calls `tx.abort(refusal)`
 * rolls back its savepoint only, and every caller is answered once the group is durable: after
 * its COMMIT returned (a libSQL server), or, on an embedded file, after the WAL sync that follows
 * it (db/wal_sync.ts): on the thread at once, or, for a group of requests' writes only
 * (`pipelined`), off the thread while the next group already runs. Units queued with
 * `writeTogether` under one batch run as one call of its `many`, set-based, in one savepoint
 * (each alone again when that call throws).
 * Whatever a unit returns is committed: the writer never reads the shape of a value to decide. A
 * unit must wait on nothing but the database and must not call `write` itself: the group it would
 * wait for cannot start until the unit ends.
 *
 * On a libSQL server every statement awaited is a network round trip made while the primary's
 * write lock is held, so there the writer batches: a unit's deferred statements (`tx.defer`,
 * writes whose results it does not read) and the writer's own BEGIN, SAVEPOINT and RELEASE ride
 * with the next statement the unit awaits, and the last unit's with the COMMIT. One stream (one
 * server connection) is kept from group to group. The embedded file has no round trips: there
 * the writer's own statements run when asked, as they always did, and deferred ones in one call
 * with the unit's next statement (or before its RELEASE).
 */
import type { Client, InStatement, ResultSet, Transaction } from "@libsql/client";
import type { Refusal } from "../lib/platform/result.ts";
import { type Db, drizzleOver, loadQueryLayer } from "./query_layer.ts";
import type { WalSync } from "./wal_sync.ts";

export type { Db };

/** What a write unit gets: drizzle and raw SQL, both inside the group's transaction. */
export interface WriteTx {
  readonly db: Db;
  execute(statement: InStatement): Promise<ResultSet>;
  /**
   * Queues a statement whose result the unit does not need now: it runs, in order, before the
   * unit's next statement or at the unit's end. Its failure, or a `check` of its result that
   * throws, fails the unit (surfacing from a later `execute`, or from the unit's end).
   */
  defer(statement: InStatement, check?: (result: ResultSet) => void): void;
  /** Names a row this unit changes whose cached copies must go once the group commits. */
  changed(key: string): void;
  /**
   * Ends the unit here and undoes everything it wrote; the caller of `write` (or of `attempt`)
   * gets `refusal` as the unit's value, not a rejection. The unit's declared result type must
   * include the refusal, since the compiler cannot see it through `never`.
   */
  abort(refusal: Refusal): never;
  /**
   * Runs `part` in a savepoint of its own inside the unit: when it aborts, only its writes are
   * undone and its refusal becomes its value, and the unit goes on (an idempotent request keeps
   * the answer to a refused use case). A throw undoes the part and goes on up.
   */
  attempt<T>(part: WriteUnit<T>): Promise<T>;
}

/**
 * The WAL's checkpoints, when another thread runs them (db/checkpointer.ts): told of each commit,
 * and asked before each group whether it must wait for them.
 */
export interface WalCheckpoints {
  /** A group committed. */
  committed(): void;
  /** Null when the next group may begin now; else settles once it may. */
  beforeGroup(): Promise<void> | null;
}

/** Told, after each durable commit, which rows its units named as changed. */
export type CommitListener = (changed: ReadonlySet<string>) => void;

export type WriteUnit<T> = (tx: WriteTx) => Promise<T>;

/** Marks an input that a batch's `many` leaves to run alone, after the others. */
export const RUN_ALONE: unique symbol = Symbol("run alone");
export type RunAlone = typeof RUN_ALONE;

/**
 * Units of one kind that the writer may run together, set-based: the units of a group that carry
 * the same batch run as one call of `many`, in one savepoint, instead of one savepoint each.
 */
export interface UnitBatch<I, T> {
  /** One input's unit, as it runs alone. */
  one(input: I): WriteUnit<T>;
  /**
   * Several inputs' units in one: a value for each input, in order, or RUN_ALONE for one it
   * leaves to its own unit (run after it). A throw undoes all it wrote, and each input then runs
   * alone, so one input's failure never fails its neighbours.
   */
  many(tx: WriteTx, inputs: readonly I[]): Promise<(T | RunAlone)[]>;
}

interface QueuedUnit {
  readonly run: WriteUnit<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
  /** The batch this unit may run with, and its input there. */
  readonly batch?: UnitBatch<unknown, unknown>;
  readonly input?: unknown;
  /** A request's write: its group's WAL may be synced off the thread (WriteOptions). */
  readonly pipelined: boolean;
}

/** How a unit is written. */
export interface WriteOptions {
  /**
   * A request's write, whose caller answers once it is durable: a group of only such units has
   * its WAL synced off the service's thread while the next group runs. Background work's groups
   * are synced on the thread, so that reads answered meanwhile never wait for their sync.
   */
  readonly pipelined?: boolean;
}

/** How `abort` leaves a unit: caught by the writer or by `attempt`, never seen by a caller. */
class UnitAborted extends Error {
  constructor(readonly refusal: Refusal) {
    super(`write unit aborted: ${refusal.code}`);
    this.name = "UnitAborted";
  }
}

/** Raised to every unit of a group whose transaction could not be committed. */
export class WriteGroupError extends Error {
  constructor(cause: unknown) {
    super(`write group was not committed: ${cause instanceof Error ? cause.message : cause}`, {
      cause,
    });
    this.name = "WriteGroupError";
  }
}

/** A statement waiting to ride with the next round trip, and what must hold of its result. */
interface PendingStatement {
  readonly statement: InStatement;
  readonly check?: (result: ResultSet) => void;
  /** The unit (its index in the group) the statement belongs to; none: the group's BEGIN/COMMIT. */
  readonly unit?: number;
  /** The group's BEGIN on a kept stream: its failure is the group's, not a unit's. */
  readonly begins?: true;
}

interface Outcome {
  readonly value?: unknown;
  readonly error?: unknown;
  readonly failed: boolean;
}

/** The group's transaction (or the stream it runs on) failed: no unit of it can commit. */
class GroupBroken extends Error {
  constructor(readonly reason: unknown) {
    super(
      `the write group's transaction failed: ${reason instanceof Error ? reason.message : reason}`,
    );
    this.name = "GroupBroken";
  }
}

/** The index of the statement a batch stopped at, when the error is a statement's. */
function failedStatementIndex(error: unknown): number | null {
  const index = (error as { statementIndex?: unknown } | null)?.statementIndex;
  return typeof index === "number" ? index : null;
}

export interface WriterStats {
  groups: number;
  units: number;
  largestGroup: number;
  /** Units and groups that failed on storage (full disk, I/O error, read-only), by reason. */
  storageFailures: Record<StorageFailureReason, number>;
}

/** Why the storage refuses writes: the disk is full, or another storage error (I/O, read-only). */
export type StorageFailureReason = "disk_full" | "writes_failing";

/** The writer's recent commits fail: since when, why, and the last error's words. */
export interface WriteFailure {
  readonly reason: StorageFailureReason;
  readonly since: number;
  readonly message: string;
}

/** SQLite's primary codes of a storage that cannot take writes, and how each is reported. */
const STORAGE_FAILURES: Readonly<Record<string, StorageFailureReason>> = {
  SQLITE_FULL: "disk_full",
  SQLITE_IOERR: "writes_failing",
  SQLITE_READONLY: "writes_failing",
  SQLITE_CANTOPEN: "writes_failing",
  SQLITE_CORRUPT: "writes_failing",
  SQLITE_NOTADB: "writes_failing",
};

/**
 * Whether an error (or the cause it wraps) says the storage refuses writes, and which reason;
 * null for any other failure (a constraint, a unit's own bug).
 */
export function storageFailureOf(error: unknown): StorageFailureReason | null {
  for (let e = error, depth = 0; e instanceof Error && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") {
      const primary = code.match(/^SQLITE_[A-Z]+/)?.[0];
      if (primary && primary in STORAGE_FAILURES) return STORAGE_FAILURES[primary];
    }
    if (/database or disk is full/i.test(e.message)) return "disk_full";
    if (/disk I\/O error|attempt to write a readonly database/i.test(e.message)) {
      return "writes_failing";
    }
    e = e instanceof GroupBroken ? e.reason : e.cause;
  }
  return null;
}

/**
 * How much a write probe writes: enough that a storage with no room left refuses it, as it
 * refuses the writes of requests.
 */
const WRITE_PROBE_BYTES = 65_536;
/** A failing writer is probed at most this often, however often readiness is asked. */
const WRITE_PROBE_INTERVAL_MS = 1000;

export class GroupCommitWriter {
  readonly #client: Client;
  readonly #unitsPerGroupMax: number;
  readonly #checkpoints: WalCheckpoints | null;
  /** Syncs the WAL after each commit (embedded, synchronous=NORMAL); null: COMMIT syncs. */
  readonly #walSync: WalSync | null;
  /** Committed groups whose callers wait for their sync. */
  readonly #syncing = new Set<Promise<void>>();
  /** A libSQL server: statements are batched into round trips (see the module's comment). */
  readonly #batching: boolean;
  readonly #tx: WriteTx;
  #queue: QueuedUnit[] = [];
  #current: Transaction | null = null;
  /** Remote: the stream kept from group to group; null until the first group or after a failure. */
  #kept: Transaction | null = null;
  /** Statements waiting to ride with the next round trip (remote), or the next call (embedded). */
  #pending: PendingStatement[] = [];
  /** Round trips of the group so far: a unit knows by it whether its savepoint was sent yet. */
  #flushes = 0;
  /** The running unit's index in its group (the group's length once they all ran). */
  #unit = 0;
  #outcomes: Outcome[] = [];
  #changed = new Set<string>();
  readonly #commitListeners: CommitListener[] = [];
  #running: Promise<void> | null = null;
  #scheduled = false;
  #closed = false;
  readonly stats: WriterStats = {
    groups: 0,
    units: 0,
    largestGroup: 0,
    storageFailures: { disk_full: 0, writes_failing: 0 },
  };
  #failure: WriteFailure | null = null;
  /** Whether a unit of the running group wrote a row (a result with rows affected). */
  #unitWrote = false;
  #groupWrote = false;
  #probe: Promise<void> | null = null;
  #probedAt = -Infinity;

  constructor(
    client: Client,
    options: { unitsPerGroupMax: number; checkpoints?: WalCheckpoints; walSync?: WalSync },
  ) {
    this.#client = client;
    this.#unitsPerGroupMax = options.unitsPerGroupMax;
    this.#checkpoints = options.checkpoints ?? null;
    this.#walSync = options.walSync ?? null;
    this.#batching = client.protocol !== "file";
    const execute = (statement: InStatement) => this.#execute(statement);
    // drizzle reaches the group's transaction through this stand-in for the client.
    const inTransaction = {
      execute,
      batch: (statements: InStatement[]) => this.#batch(statements),
    } as unknown as Client;
    let db: Db | null = null;
    this.#tx = {
      // Built at the first unit that asks: a group loads the query layer before its units run.
      get db() {
        return db ??= drizzleOver(inTransaction);
      },
      execute,
      defer: (statement, check) => {
        this.#transaction(); // throws outside a unit
        this.#pending.push({ statement, check, unit: this.#unit });
      },
      changed: (key) => {
        this.#transaction(); // throws outside a unit
        this.#changed.add(key);
      },
      abort: (refusal) => {
        this.#transaction(); // throws outside a unit
        throw new UnitAborted(refusal);
      },
      attempt: (part) => this.#attempt(part),
    };
  }

  onCommit(listener: CommitListener): void {
    this.#commitListeners.push(listener);
  }

  /**
   * Null while writes commit; else since when and why they fail. Set by the first unit or group
   * that fails on storage, cleared by the next group that commits a unit's written rows.
   */
  get failure(): WriteFailure | null {
    return this.#failure;
  }

  /**
   * While writes fail, tries one (at most once a second, shared by concurrent callers): a row of
   * WRITE_PROBE_BYTES into write_probes, the older probes deleted. Its commit clears the failure,
   * so readiness comes back by itself once the storage takes writes again. Never rejects.
   */
  probeWrites(): Promise<void> {
    if (this.#failure === null) return Promise.resolve();
    if (this.#probe) return this.#probe;
    if (performance.now() - this.#probedAt < WRITE_PROBE_INTERVAL_MS) return Promise.resolve();
    this.#probedAt = performance.now();
    this.#probe = this.write(async (tx) => {
      const inserted = await tx.execute({
        sql: "INSERT INTO write_probes (probed_at, padding) VALUES (?, zeroblob(?))",
        args: [Date.now(), WRITE_PROBE_BYTES],
      });
      await tx.execute({
        sql: "DELETE FROM write_probes WHERE id < ?",
        args: [inserted.lastInsertRowid ?? 0],
      });
    }).catch(() => {}).finally(() => {
      this.#probe = null;
    });
    return this.#probe;
  }

  #storageFailed(error: unknown): void {
    const reason = storageFailureOf(error);
    if (reason === null) return;
    this.stats.storageFailures[reason] += 1;
    const message = error instanceof Error ? error.message : String(error);
    this.#failure = {
      reason,
      since: this.#failure?.since ?? Date.now(),
      message,
    };
  }

  /** Queues a unit; resolves with its value once its group is durable. */
  write<T>(unit: WriteUnit<T>, options: WriteOptions = {}): Promise<T> {
    if (this.#closed) return Promise.reject(new Error("the writer is closed"));
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({
        run: unit,
        resolve: resolve as (value: unknown) => void,
        reject,
        pipelined: options.pipelined === true,
      });
      this.#schedule();
    });
  }

  /**
   * Queues `batch.one(input)`, which runs with the group's other units of the same batch in one
   * call of `batch.many` (embedded databases; on a libSQL server each runs alone); resolves with
   * its value once its group is durable.
   */
  writeTogether<I, T>(batch: UnitBatch<I, T>, input: I, options: WriteOptions = {}): Promise<T> {
    if (this.#closed) return Promise.reject(new Error("the writer is closed"));
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({
        run: batch.one(input),
        resolve: resolve as (value: unknown) => void,
        reject,
        batch: batch as UnitBatch<unknown, unknown>,
        input,
        pipelined: options.pipelined === true,
      });
      this.#schedule();
    });
  }

  /** Waits for every queued unit and its sync, then refuses new ones. */
  async close(): Promise<void> {
    this.#closed = true;
    while (this.#running || this.#queue.length > 0 || this.#scheduled) {
      if (this.#running) await this.#running;
      else await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(this.#syncing);
    this.#dropKept();
  }

  #transaction(): Transaction {
    if (this.#current === null) {
      throw new Error("database written outside a write unit: use writer.write()");
    }
    return this.#current;
  }

  /** A unit's statement: sent with whatever waits to ride with it. */
  async #execute(statement: InStatement): Promise<ResultSet> {
    const transaction = this.#transaction();
    const result = this.#pending.length === 0
      ? await transaction.execute(statement)
      : (await this.#flush([{ statement, unit: this.#unit }])).at(-1)!;
    if (result.rowsAffected > 0) this.#unitWrote = true;
    return result;
  }

  async #batch(statements: InStatement[]): Promise<ResultSet[]> {
    const transaction = this.#transaction();
    if (this.#pending.length === 0) return await transaction.batch(statements);
    const results = await this.#flush(
      statements.map((statement) => ({ statement, unit: this.#unit })),
    );
    return results.slice(results.length - statements.length);
  }

  /**
   * Sends what waits, then `more`, in one round trip (embedded: one call) that stops at the first
   * failure, and checks the deferred statements' results. An earlier unit's deferred statement
   * that fails fails that unit: it is rolled back and the rest is sent again. A failure of the
   * group's BEGIN, or of the stream, breaks the group (GroupBroken, which no unit keeps).
   */
  async #flush(more: PendingStatement[] = []): Promise<ResultSet[]> {
    let sent = [...this.#pending, ...more];
    this.#pending = [];
    let reopened = false;
    for (;;) {
      this.#flushes += 1;
      let results: ResultSet[];
      try {
        results = await this.#transaction().batch(sent.map((p) => p.statement));
      } catch (error) {
        if (!this.#batching) throw error;
        const index = failedStatementIndex(error);
        if (index === null && !reopened && sent.some((p) => p.begins)) {
          // The kept stream failed before the group began (an idle stream the server expired):
          // nothing of the group ran, so it begins again on a new stream.
          reopened = true;
          this.#dropKept();
          this.#current = this.#kept = await this.#client.transaction("write");
          sent = sent.filter((p) => !p.begins);
          continue;
        }
        if (index === null || sent[index].begins) {
          // The stream is gone, or the group could not begin: nothing of this group is there.
          this.#dropKept();
          throw new GroupBroken(error);
        }
        const owner = sent[index].unit;
        if (owner === undefined || owner === this.#unit) throw error;
        // A unit that already returned: its savepoint is still open (its RELEASE came later).
        this.#outcomes[owner] = { error, failed: true };
        this.#storageFailed(error);
        sent = [
          { statement: "ROLLBACK TO unit" },
          { statement: "RELEASE unit" },
          ...sent.slice(index + 1).filter((p) => p.unit !== owner),
        ];
        continue;
      }
      sent.forEach((p, i) => p.check?.(results[i]));
      return results;
    }
  }

  /** Remote: the kept stream is closed and forgotten; the next group opens another. */
  #dropKept(): void {
    this.#kept?.close();
    this.#kept = null;
  }

  /** The writer's own statements: run at once (embedded) or sent with the next round trip. */
  async #bookkeeping(...statements: string[]): Promise<void> {
    const queued = statements.map((statement) => ({ statement, unit: this.#unit }));
    if (this.#batching) this.#pending.push(...queued);
    else if (this.#pending.length > 0) await this.#flush(queued);
    else for (const statement of statements) await this.#transaction().execute(statement);
  }

  /**
   * Undoes the unit's (or part's) writes since its SAVEPOINT: when nothing was sent since it was
   * queued, forgetting the queued statements is enough; else what waits is all its own (a round
   * trip sent everything queued before) and is dropped, and the rollback goes with the next trip.
   */
  async #undo(savepoint: "unit" | "part", pendingAt: number, flushesAt: number): Promise<void> {
    if (this.#batching && this.#flushes === flushesAt) {
      this.#pending.length = pendingAt - 1;
      return;
    }
    this.#pending = [];
    await this.#bookkeeping(`ROLLBACK TO ${savepoint}`, `RELEASE ${savepoint}`);
  }

  async #attempt<T>(part: WriteUnit<T>): Promise<T> {
    this.#transaction();
    await this.#bookkeeping("SAVEPOINT part");
    const pendingAt = this.#pending.length;
    const flushesAt = this.#flushes;
    try {
      const value = await part(this.#tx);
      await this.#bookkeeping("RELEASE part");
      return value;
    } catch (error) {
      if (error instanceof GroupBroken) throw error;
      await this.#undo("part", pendingAt, flushesAt);
      if (error instanceof UnitAborted) return error.refusal as T;
      throw error;
    }
  }

  #schedule(): void {
    if (this.#running || this.#scheduled) return;
    this.#scheduled = true;
    // A macrotask, not a microtask, so requests that arrived meanwhile join this group; and
    // setImmediate, not setTimeout(0), which is clamped to 4 ms once timers nest. The global one:
    // importing node:timers would load Deno's Node layer at every start, not at the first write.
    // One group per turn: what waits (requests to read and answer, timers) runs between groups,
    // so a queue of long background units never holds the event loop for more than one group.
    setImmediate(() => {
      this.#scheduled = false;
      this.#running = this.#nextGroup().finally(() => {
        this.#running = null;
        if (this.#queue.length > 0) this.#schedule();
      });
    });
  }

  /**
   * Commits the units queued, once the WAL's checkpoints let the group begin: units queued during
   * that wait join the group.
   */
  async #nextGroup(): Promise<void> {
    const waiting = this.#checkpoints?.beforeGroup();
    if (waiting) await waiting;
    await this.#commit(this.#queue.splice(0, this.#unitsPerGroupMax));
  }

  /** The group's transaction: a new one (embedded), or the kept stream with BEGIN to send. */
  async #begin(): Promise<Transaction> {
    if (!this.#batching) return await this.#client.transaction("write");
    if (this.#kept !== null) {
      this.#pending.push({ statement: "BEGIN IMMEDIATE", begins: true });
      return this.#kept;
    }
    // `@libsql/client` sends its BEGIN IMMEDIATE with a new stream's first batch.
    return this.#kept = await this.#client.transaction("write");
  }

  async #commit(group: QueuedUnit[]): Promise<void> {
    let transaction: Transaction;
    this.#pending = [];
    try {
      await loadQueryLayer();
      transaction = await this.#begin();
    } catch (error) {
      this.#storageFailed(error);
      for (const unit of group) unit.reject(new WriteGroupError(error));
      return;
    }
    this.#groupWrote = false;
    this.#current = transaction;
    this.#changed = new Set();
    this.#flushes = 0;
    this.#outcomes = [];
    try {
      for (const [index, unit] of group.entries()) {
        if (this.#outcomes[index] !== undefined) continue; // ran with an earlier unit's batch
        const together = unit.batch === undefined || this.#batching
          ? [index]
          : group.flatMap((other, i) => i >= index && other.batch === unit.batch ? [i] : []);
        const alone = together.length > 1 ? await this.#runTogether(group, together) : together;
        for (const i of alone) await this.#runUnit(i, group[i].run);
      }
      this.#unit = group.length;
      if (this.#batching) await this.#flush([{ statement: "COMMIT" }]);
      else await transaction.commit();
    } catch (error) {
      // The group's transaction itself failed: nothing of it is durable, so nobody is told so.
      this.#storageFailed(error);
      this.#current = null;
      this.#pending = [];
      await this.#rollbackGroup(transaction);
      for (const unit of group) unit.reject(new WriteGroupError(unwrap(error)));
      return;
    }
    this.#current = null;
    this.#checkpoints?.committed();
    const outcomes = this.#outcomes;
    const wrote = this.#groupWrote;
    // Readers see the commit now, so copies go now, not once it is durable. A rolled-back unit's
    // rows may be named too: dropping a copy that was still true is harmless.
    if (this.#changed.size > 0) {
      for (const listener of this.#commitListeners) listener(this.#changed);
    }
    this.stats.groups += 1;
    this.stats.units += group.length;
    this.stats.largestGroup = Math.max(this.stats.largestGroup, group.length);
    const answer = () => {
      // Rows written and durable: the storage takes writes again.
      if (wrote) this.#failure = null;
      group.forEach((unit, i) => {
        const outcome = outcomes[i];
        if (outcome.failed) unit.reject(outcome.error);
        else unit.resolve(outcome.value);
      });
    };
    // Committed but not durable: its callers hear nothing of what they wrote.
    const unsynced = (error: unknown) => {
      this.#storageFailed(error);
      group.forEach((unit, i) => {
        const outcome = outcomes[i];
        unit.reject(outcome.failed ? outcome.error : new WriteGroupError(error));
      });
    };
    if (this.#walSync === null) return answer();
    if (!group.every((unit) => unit.pipelined)) {
      try {
        this.#walSync.committedAndSynced();
      } catch (error) {
        return unsynced(error);
      }
      return answer();
    }
    // The next group runs meanwhile; this one's callers hear once its frames are on the disk.
    const syncing = this.#walSync.committed().then(answer, unsynced)
      .finally(() => this.#syncing.delete(syncing));
    this.#syncing.add(syncing);
  }

  /** Runs one unit of the group in its own savepoint, and keeps its outcome. */
  async #runUnit(index: number, run: WriteUnit<unknown>): Promise<void> {
    this.#unit = index;
    await this.#bookkeeping("SAVEPOINT unit");
    const pendingAt = this.#pending.length;
    const flushesAt = this.#flushes;
    this.#unitWrote = false;
    try {
      this.#outcomes[index] = { value: await run(this.#tx), failed: false };
      // A check must pass while the unit's savepoint can still be rolled back.
      if (this.#pending.some((p) => p.check)) await this.#flush();
      await this.#bookkeeping("RELEASE unit");
      if (this.#unitWrote) this.#groupWrote = true;
    } catch (error) {
      if (error instanceof GroupBroken) throw error;
      this.#outcomes[index] = error instanceof UnitAborted
        ? { value: error.refusal, failed: false }
        : { error, failed: true };
      if (!(error instanceof UnitAborted)) this.#storageFailed(error);
      await this.#undo("unit", pendingAt, flushesAt);
    }
  }

  /**
   * Runs the units at `indices` (of one batch) as one call of its `many`, in one savepoint, and
   * keeps their outcomes. Returns the units left to run alone: those `many` left, or all of them
   * when it threw (its writes undone).
   */
  async #runTogether(group: readonly QueuedUnit[], indices: readonly number[]): Promise<number[]> {
    const batch = group[indices[0]].batch!;
    this.#unit = indices[0];
    await this.#bookkeeping("SAVEPOINT unit");
    const pendingAt = this.#pending.length;
    const flushesAt = this.#flushes;
    this.#unitWrote = false;
    let values: unknown[];
    try {
      values = await batch.many(this.#tx, indices.map((i) => group[i].input));
      if (values.length !== indices.length) {
        throw new Error(`a batch answered ${values.length} of its ${indices.length} units`);
      }
      if (this.#pending.some((p) => p.check)) await this.#flush();
      await this.#bookkeeping("RELEASE unit");
    } catch (error) {
      if (error instanceof GroupBroken) throw error;
      await this.#undo("unit", pendingAt, flushesAt);
      return [...indices];
    }
    if (this.#unitWrote) this.#groupWrote = true;
    const alone: number[] = [];
    indices.forEach((index, n) => {
      if (values[n] === RUN_ALONE) alone.push(index);
      else this.#outcomes[index] = { value: values[n], failed: false };
    });
    return alone;
  }

  async #rollbackGroup(transaction: Transaction): Promise<void> {
    if (!this.#batching) {
      try {
        await transaction.rollback();
      } catch {
        // already rolled back by SQLite
      }
      transaction.close();
      return;
    }
    if (this.#kept === null) return; // the stream is gone: the server rolls its work back
    try {
      await this.#kept.execute("ROLLBACK");
    } catch {
      // Not begun, or the stream failed: a new stream is opened for the next group.
      this.#dropKept();
    }
  }
}

/** The cause a GroupBroken carries: what the units' callers are told. */
function unwrap(error: unknown): unknown {
  return error instanceof GroupBroken ? error.reason : error;
}

/** Something that runs SQL: a write unit, or a read client of committed data. */
export type SqlReader = Pick<WriteTx, "execute"> | Pick<import("@libsql/client").Client, "execute">;
