/**
 * The one writer of a database. Concurrent write units are queued and committed together in one
 * transaction, each inside its own savepoint: a unit that throws or calls `tx.abort(refusal)`
 * rolls back its savepoint only, and every caller is answered after the group's COMMIT returned
 * (durable with synchronous=FULL). Whatever a unit returns is committed: the writer never reads
 * the shape of a value to decide. A unit must wait on nothing but the database and must not
 * call `write` itself: the group it would wait for cannot start until the unit ends.
 */
import type { Client, InStatement, ResultSet, Transaction } from "@libsql/client";
import { setImmediate } from "node:timers";
import type { Refusal } from "../lib/platform/result.ts";
import { type Db, drizzleOver, loadQueryLayer } from "./query_layer.ts";

export type { Db };

/** What a write unit gets: drizzle and raw SQL, both inside the group's transaction. */
export interface WriteTx {
  readonly db: Db;
  execute(statement: InStatement): Promise<ResultSet>;
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

/** Told, after each durable commit, which rows its units named as changed. */
export type CommitListener = (changed: ReadonlySet<string>) => void;

export type WriteUnit<T> = (tx: WriteTx) => Promise<T>;

interface QueuedUnit {
  readonly run: WriteUnit<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
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

export interface WriterStats {
  groups: number;
  units: number;
  largestGroup: number;
}

export class GroupCommitWriter {
  readonly #client: Client;
  readonly #unitsPerGroupMax: number;
  readonly #tx: WriteTx;
  #queue: QueuedUnit[] = [];
  #current: Transaction | null = null;
  #changed = new Set<string>();
  readonly #commitListeners: CommitListener[] = [];
  #running: Promise<void> | null = null;
  #scheduled = false;
  #closed = false;
  readonly stats: WriterStats = { groups: 0, units: 0, largestGroup: 0 };

  constructor(client: Client, options: { unitsPerGroupMax: number }) {
    this.#client = client;
    this.#unitsPerGroupMax = options.unitsPerGroupMax;
    const execute = (statement: InStatement) => this.#transaction().execute(statement);
    // drizzle reaches the group's transaction through this stand-in for the client.
    const inTransaction = {
      execute,
      batch: (statements: InStatement[]) => this.#transaction().batch(statements),
    } as unknown as Client;
    let db: Db | null = null;
    this.#tx = {
      // Built at the first unit that asks: a group loads the query layer before its units run.
      get db() {
        return db ??= drizzleOver(inTransaction);
      },
      execute,
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

  /** Queues a unit; resolves with its value once its group is durable. */
  write<T>(unit: WriteUnit<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new Error("the writer is closed"));
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ run: unit, resolve: resolve as (value: unknown) => void, reject });
      this.#schedule();
    });
  }

  /** Waits for every queued unit, then refuses new ones. */
  async close(): Promise<void> {
    this.#closed = true;
    while (this.#running || this.#queue.length > 0 || this.#scheduled) {
      if (this.#running) await this.#running;
      else await new Promise((resolve) => setImmediate(resolve));
    }
  }

  #transaction(): Transaction {
    if (this.#current === null) {
      throw new Error("database written outside a write unit: use writer.write()");
    }
    return this.#current;
  }

  async #attempt<T>(part: WriteUnit<T>): Promise<T> {
    const transaction = this.#transaction();
    await transaction.execute("SAVEPOINT part");
    try {
      return await part(this.#tx);
    } catch (error) {
      await transaction.execute("ROLLBACK TO part");
      if (error instanceof UnitAborted) return error.refusal as T;
      throw error;
    } finally {
      await transaction.execute("RELEASE part");
    }
  }

  #schedule(): void {
    if (this.#running || this.#scheduled) return;
    this.#scheduled = true;
    // A macrotask, not a microtask, so requests that arrived meanwhile join this group; and
    // setImmediate, not setTimeout(0), which is clamped to 4 ms once timers nest.
    setImmediate(() => {
      this.#scheduled = false;
      this.#running = this.#drain().finally(() => {
        this.#running = null;
        if (this.#queue.length > 0) this.#schedule();
      });
    });
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const group = this.#queue.splice(0, this.#unitsPerGroupMax);
      await this.#commit(group);
    }
  }

  async #commit(group: QueuedUnit[]): Promise<void> {
    const outcomes: { value?: unknown; error?: unknown; failed: boolean }[] = [];
    let transaction: Transaction;
    try {
      await loadQueryLayer();
      transaction = await this.#client.transaction("write");
    } catch (error) {
      for (const unit of group) unit.reject(new WriteGroupError(error));
      return;
    }
    this.#current = transaction;
    this.#changed = new Set();
    try {
      for (const unit of group) {
        await transaction.execute("SAVEPOINT unit");
        try {
          outcomes.push({ value: await unit.run(this.#tx), failed: false });
        } catch (error) {
          await transaction.execute("ROLLBACK TO unit");
          if (error instanceof UnitAborted) outcomes.push({ value: error.refusal, failed: false });
          else outcomes.push({ error, failed: true });
        }
        await transaction.execute("RELEASE unit");
      }
      await transaction.commit();
    } catch (error) {
      // The group's transaction itself failed: nothing of it is durable, so nobody is told so.
      this.#current = null;
      try {
        await transaction.rollback();
      } catch {
        // already rolled back by SQLite
      }
      transaction.close();
      for (const unit of group) unit.reject(new WriteGroupError(error));
      return;
    }
    this.#current = null;
    // A rolled-back unit's rows may be named too: dropping a copy that was still true is harmless.
    if (this.#changed.size > 0) {
      for (const listener of this.#commitListeners) listener(this.#changed);
    }
    this.stats.groups += 1;
    this.stats.units += group.length;
    this.stats.largestGroup = Math.max(this.stats.largestGroup, group.length);
    group.forEach((unit, i) => {
      const outcome = outcomes[i];
      if (outcome.failed) unit.reject(outcome.error);
      else unit.resolve(outcome.value);
    });
  }
}

/** Something that runs SQL: a write unit, or a read client of committed data. */
export type SqlReader = Pick<WriteTx, "execute"> | Pick<import("@libsql/client").Client, "execute">;
