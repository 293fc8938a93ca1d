/**
 * The WAL checkpoints of an embedded database, kept off the service's thread. SQLite's automatic
 * checkpoint runs inside the commit that fills the WAL past its threshold, on the writer's
 * connection: every 100 pages it read them back, wrote them into the database and synced it, on
 * the one thread that also answers every request (about 80 µs of each create's and each offer's
 * commit, in `bench/create_cost.ts`). Here a worker thread (db/checkpoint_worker.ts) copies the
 * WAL through a connection of its own, while the service's thread goes on; the two share a few
 * counters (the writer's commits, the worker's last checkpoint) and send each other no message.
 *
 * The WAL starts over from its beginning only when the writer begins a transaction while every
 * frame is copied; under steady writes the worker is always a group behind, so the WAL would grow
 * without end. Once it holds WAL_FRAMES_RESTART_MIN frames, the writer's next group waits (without
 * holding the thread: requests are still read and answered, and units queue into the group) until
 * the worker has copied everything, then begins and the WAL starts over. A reader that keeps an old
 * snapshot (a backup's copy) can keep the worker from catching up: the group waits only until a
 * checkpoint that saw every commit reports frames it could not copy (at most CATCH_UP_WAIT_MS_MAX),
 * and then none waits for RETRY_AFTER_TIMEOUT_MS, as SQLite would let the WAL grow meanwhile too.
 *
 * The worker starts when the WAL first reaches WORKER_START_WAL_BYTES, so a small database (most
 * tests) never starts one, or when a service starts its workers (`start`). Until then, or if it fails, SQLite's own checkpoint on the writer's
 * connection (db/client.ts) still bounds the WAL.
 */
import type { CheckpointAnswer, CheckpointRequest } from "./checkpoint_worker.ts";
import { CheckpointState as at } from "./checkpoint_state.ts";
import type { WalCheckpoints } from "./writer.ts";
import { workerModuleUrl } from "../lib/platform/service_files.ts";

/** WAL frames (pages) at which the next group waits for the copy so that the WAL starts over. */
export const WAL_FRAMES_RESTART_MIN = 1000;
/** The longest a group waits for the worker to copy the whole WAL. */
const CATCH_UP_WAIT_MS_MAX = 100;
/** After a wait that timed out, no group waits again for this long. */
const RETRY_AFTER_TIMEOUT_MS = 1000;
/** The WAL's file size at which the worker starts (about 64 pages of 4 KiB). */
export const WORKER_START_WAL_BYTES = 256 * 1024;
/** How long closing waits for the worker to close its connection. */
const CLOSE_WAIT_MS_MAX = 5000;

export class WalCheckpointer implements WalCheckpoints {
  readonly #path: string;
  readonly #busyTimeoutMs: number;
  #worker: Worker | null = null;
  /** The counters shared with the worker (CheckpointState). */
  #state: Int32Array | null = null;
  #failed = false;
  #closed: (() => void) | null = null;
  #noWaitUntil = 0;
  /** The worker's report a group began after with the WAL copied whole: stale from then on. */
  #restartedAfter = -1;
  /**
   * Groups that waited for the worker, those whose wait timed out, those whose wait ended because a
   * reader's snapshot held the WAL, and those that began with the whole WAL copied (it starts over).
   */
  readonly stats = { waits: 0, waitsTimedOut: 0, waitsHeldByReader: 0, restarts: 0 };

  constructor(path: string, busyTimeoutMs: number) {
    this.#path = path;
    this.#busyTimeoutMs = busyTimeoutMs;
  }

  /** Whether the worker runs (it starts once the WAL is large enough). */
  get started(): boolean {
    return this.#worker !== null;
  }

  /**
   * Starts the worker now, whatever the WAL's size: a service starts it with its other workers,
   * after its first answer. Its start holds the service's thread while its runtime is created
   * (about 6 ms), and a restarted service otherwise started it at its first large commit, a
   * cutoff's.
   */
  start(): void {
    if (this.#state === null && !this.#failed) this.#start();
  }

  /** Checkpoints the worker ran. */
  get checkpoints(): number {
    return this.#state === null ? 0 : Atomics.load(this.#state, at.reports);
  }

  committed(): void {
    if (this.#failed) return;
    if (this.#state === null) {
      if (this.#walBytes() < WORKER_START_WAL_BYTES) return;
      this.#start();
    }
    Atomics.add(this.#state!, at.commits, 1);
  }

  beforeGroup(): Promise<void> | null {
    const state = this.#state;
    if (state === null || this.#failed) return null;
    if (Atomics.load(state, at.frames) < WAL_FRAMES_RESTART_MIN) return null;
    if (Atomics.load(state, at.reports) === this.#restartedAfter) return null;
    if (performance.now() < this.#noWaitUntil) return null;
    if (this.#caughtUp(state)) return null;
    this.stats.waits += 1;
    return this.#waitForCopy(state);
  }

  async close(): Promise<void> {
    const worker = this.#worker;
    const state = this.#state;
    if (worker === null || state === null) return;
    this.#worker = null;
    if (!this.#failed) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((resolve) => {
        this.#closed = resolve;
        timer = setTimeout(resolve, CLOSE_WAIT_MS_MAX);
        Atomics.store(state, at.closing, 1);
        this.#wake(state);
      });
      clearTimeout(timer);
    }
    worker.terminate();
  }

  /**
   * Whether the worker's last checkpoint saw every commit and copied the whole WAL; if so the next
   * group starts the WAL over, after which this report is stale.
   */
  #caughtUp(state: Int32Array): boolean {
    for (;;) {
      const reports = Atomics.load(state, at.reports);
      const caughtUp = Atomics.load(state, at.seen) === Atomics.load(state, at.commits) &&
        Atomics.load(state, at.copied) >= Atomics.load(state, at.frames);
      // A report written while these were read: read them again.
      if (Atomics.load(state, at.reports) !== reports) continue;
      if (caughtUp) {
        this.#restartedAfter = reports;
        this.stats.restarts += 1;
      }
      return caughtUp;
    }
  }

  /**
   * Whether the worker's last checkpoint saw every commit and still left frames uncopied: only a
   * reader's snapshot holds them, and no later checkpoint copies them before that reader ends.
   */
  #heldByReader(state: Int32Array): boolean {
    return Atomics.load(state, at.seen) === Atomics.load(state, at.commits) &&
      Atomics.load(state, at.copied) < Atomics.load(state, at.frames);
  }

  /** Wakes the worker for a checkpoint now, and waits for its reports until it caught up. */
  async #waitForCopy(state: Int32Array): Promise<void> {
    const deadline = performance.now() + CATCH_UP_WAIT_MS_MAX;
    for (let woken = false;; woken = true) {
      const reports = Atomics.load(state, at.reports);
      if (this.#failed || this.#caughtUp(state)) return;
      // A checkpoint run for this wait that a reader stopped: waiting on would stall the writes
      // for nothing (a backup's copy holds its snapshot for seconds).
      if (woken && this.#heldByReader(state)) {
        this.stats.waitsHeldByReader += 1;
        this.#noWaitUntil = performance.now() + RETRY_AFTER_TIMEOUT_MS;
        return;
      }
      const left = deadline - performance.now();
      if (left <= 0) {
        this.stats.waitsTimedOut += 1;
        this.#noWaitUntil = performance.now() + RETRY_AFTER_TIMEOUT_MS;
        return;
      }
      this.#wake(state);
      const report = Atomics.waitAsync(state, at.reports, reports, left);
      if (report.async) await report.value;
    }
  }

  #wake(state: Int32Array): void {
    Atomics.store(state, at.wanted, 1);
    Atomics.notify(state, at.wanted);
  }

  #walBytes(): number {
    try {
      return Deno.statSync(`${this.#path}-wal`).size;
    } catch {
      return 0;
    }
  }

  #start(): void {
    const shared = new SharedArrayBuffer(at.length * Int32Array.BYTES_PER_ELEMENT);
    const worker = new Worker(workerModuleUrl("db/checkpoint_worker.ts"), { type: "module" });
    worker.onmessage = (event: MessageEvent<CheckpointAnswer>) => {
      if (event.data.kind === "failed") this.#fail(event.data.error);
      this.#closed?.();
    };
    worker.onerror = (event) => {
      event.preventDefault();
      this.#fail(event.message);
    };
    const request: CheckpointRequest = {
      path: this.#path,
      busyTimeoutMs: this.#busyTimeoutMs,
      state: shared,
    };
    worker.postMessage(request);
    this.#worker = worker;
    this.#state = new Int32Array(shared);
  }

  /** The worker failed: SQLite's own checkpoint on the writer's connection is what remains. */
  #fail(error: string): void {
    if (this.#failed) return;
    this.#failed = true;
    this.#closed?.();
    console.error(JSON.stringify({
      level: "error",
      msg: "the WAL checkpoint worker failed: commits checkpoint on the service's thread again",
      database: this.#path,
      error,
    }));
  }
}
