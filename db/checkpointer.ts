/**
 * The WAL checkpoints of an embedded database, kept off the service's thread. SQLite's automatic
 * checkpoint runs inside the commit that fills the WAL past its threshold, on the writer's
 * connection: every 100 pages it read them back, wrote them into the database and synced it, on
 * the one thread that also answers every request (about 80 µs of each create's and each offer's
 * commit, in `bench/create_cost.ts`). Here a worker thread (db/checkpoint_worker.ts) copies the
 * WAL after each commit through a connection of its own, while the service's thread goes on.
 *
 * The WAL starts over from its beginning only when the writer begins a transaction while every
 * frame is copied; under steady writes the worker is always a group behind, so the WAL would grow
 * without end. Once it holds WAL_FRAMES_RESTART_MIN frames, the writer's next group waits (without
 * holding the thread: requests are still read and answered, and units queue into the group) until
 * the worker has copied everything, then begins and the WAL starts over. A reader that keeps an old
 * snapshot (a backup's copy) can keep the worker from catching up: the group waits at most
 * CATCH_UP_WAIT_MS_MAX and then none waits for RETRY_AFTER_TIMEOUT_MS, as SQLite would let the WAL
 * grow meanwhile too.
 *
 * The worker starts when the WAL first reaches WORKER_START_WAL_BYTES, so a small database (most
 * tests) never starts one. Until then, or if it fails, SQLite's own checkpoint on the writer's
 * connection (db/client.ts) still bounds the WAL.
 */
import type { CheckpointAnswer, CheckpointRequest } from "./checkpoint_worker.ts";
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
  #failed = false;
  /** A checkpoint was asked and not yet answered. */
  #asked = false;
  /** A group committed while a checkpoint ran: its frames need another. */
  #again = false;
  /** The WAL's frames at the last checkpoint; 0 once it starts over. */
  #frames = 0;
  #caughtUp: (() => void) | null = null;
  #closed: (() => void) | null = null;
  #noWaitUntil = 0;
  /**
   * Checkpoints the worker ran; groups that waited for one, those whose wait timed out, and those
   * that began with the whole WAL copied (the WAL starts over).
   */
  readonly stats = { checkpoints: 0, waits: 0, waitsTimedOut: 0, restarts: 0 };

  constructor(path: string, busyTimeoutMs: number) {
    this.#path = path;
    this.#busyTimeoutMs = busyTimeoutMs;
  }

  /** Whether the worker runs (it starts once the WAL is large enough). */
  get started(): boolean {
    return this.#worker !== null;
  }

  committed(): void {
    if (this.#failed) return;
    if (this.#worker === null) {
      if (this.#walBytes() < WORKER_START_WAL_BYTES) return;
      this.#start();
    }
    this.#ask();
  }

  beforeGroup(): Promise<void> | null {
    if (this.#worker === null || this.#frames < WAL_FRAMES_RESTART_MIN) return null;
    if (performance.now() < this.#noWaitUntil) return null;
    this.stats.waits += 1;
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.stats.waitsTimedOut += 1;
        this.#noWaitUntil = performance.now() + RETRY_AFTER_TIMEOUT_MS;
        this.#caughtUp = null;
        resolve();
      }, CATCH_UP_WAIT_MS_MAX);
      this.#caughtUp = () => {
        clearTimeout(timer);
        this.#caughtUp = null;
        resolve();
      };
      this.#ask();
    });
  }

  async close(): Promise<void> {
    this.#caughtUp?.();
    const worker = this.#worker;
    if (worker === null) return;
    this.#worker = null;
    if (!this.#failed) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((resolve) => {
        this.#closed = resolve;
        timer = setTimeout(resolve, CLOSE_WAIT_MS_MAX);
        worker.postMessage({ kind: "close" } satisfies CheckpointRequest);
      });
      clearTimeout(timer);
    }
    worker.terminate();
  }

  #walBytes(): number {
    try {
      return Deno.statSync(`${this.#path}-wal`).size;
    } catch {
      return 0;
    }
  }

  #start(): void {
    const worker = new Worker(workerModuleUrl("db/checkpoint_worker.ts"), { type: "module" });
    worker.onmessage = (event: MessageEvent<CheckpointAnswer>) => this.#answered(event.data);
    worker.onerror = (event) => {
      event.preventDefault();
      this.#fail(event.message);
    };
    const open: CheckpointRequest = {
      kind: "open",
      path: this.#path,
      busyTimeoutMs: this.#busyTimeoutMs,
    };
    worker.postMessage(open);
    this.#worker = worker;
    // The open's answer comes first, as if a checkpoint were asked.
    this.#asked = true;
  }

  #ask(): void {
    if (this.#worker === null) return;
    if (this.#asked) {
      this.#again = true;
      return;
    }
    this.#asked = true;
    this.#worker.postMessage({ kind: "checkpoint" } satisfies CheckpointRequest);
  }

  #answered(answer: CheckpointAnswer): void {
    if (answer.kind === "closed") {
      this.#closed?.();
      return;
    }
    if (answer.kind === "failed") {
      this.#fail(answer.error);
      return;
    }
    this.#asked = false;
    this.stats.checkpoints += 1;
    this.#frames = answer.frames;
    // A group committed since this checkpoint was asked (`again`): its frames may not be copied.
    if (this.#caughtUp !== null && !this.#again && answer.copied >= answer.frames) {
      // Nothing is committed while a group waits: the WAL starts over at the group's first write.
      this.#frames = 0;
      this.stats.restarts += 1;
      this.#caughtUp();
      return;
    }
    if (this.#again || this.#caughtUp !== null) {
      this.#again = false;
      this.#ask();
    }
  }

  /** The worker failed: SQLite's own checkpoint on the writer's connection is what remains. */
  #fail(error: string): void {
    if (this.#failed) return;
    this.#failed = true;
    this.#frames = 0;
    this.#caughtUp?.();
    this.#closed?.();
    console.error(JSON.stringify({
      level: "error",
      msg: "the WAL checkpoint worker failed: commits checkpoint on the service's thread again",
      database: this.#path,
      error,
    }));
  }
}
