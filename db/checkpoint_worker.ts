/**
 * Copies an embedded database's WAL into its file (a checkpoint) on a thread of its own, through a
 * connection of its own (db/checkpointer.ts starts it). A checkpoint on the writer's connection ran
 * inside a commit, on the service's thread: its reads of the WAL, its writes to the database and
 * the database's fsync held every request behind it.
 *
 * The worker and the service's thread share a few counters (CheckpointState) instead of messages:
 * a message to the worker after each commit woke it at once, and on two busy cores the woken
 * thread took the CPU from the service's thread inside its postMessage. The worker checkpoints on
 * its own pace (CHECKPOINT_INTERVALS_MS) and sooner when the writer waits for it.
 */
/// <reference lib="deno.worker" />
import { DatabaseSync } from "node:sqlite";
import { CheckpointState } from "./checkpoint_state.ts";

/** What the worker is asked (once): to open the database and keep it checkpointed. */
export interface CheckpointRequest {
  readonly path: string;
  readonly busyTimeoutMs: number;
  readonly state: SharedArrayBuffer;
}

/** What it answers: closed (after `closing`), or why it failed. */
export type CheckpointAnswer =
  | { readonly kind: "closed" }
  | { readonly kind: "failed"; readonly error: string };

/**
 * How long the worker sleeps between checkpoints: the first after one that copied frames, each
 * next one after one that found nothing new, up to the last while the database is idle.
 */
const CHECKPOINT_INTERVALS_MS = [2, 5, 10, 25, 50, 100] as const;

function keepCheckpointed(request: CheckpointRequest): void {
  const state = new Int32Array(request.state);
  const database = new DatabaseSync(request.path, { timeout: request.busyTimeoutMs });
  try {
    // A checkpoint syncs the WAL before it copies and the database after, as the writer's did.
    database.exec("PRAGMA synchronous=FULL");
    // PASSIVE: copies what no reader still needs, and never waits for the writer or a reader.
    const checkpoint = database.prepare("PRAGMA wal_checkpoint(PASSIVE)");
    let idle = 0;
    while (Atomics.load(state, CheckpointState.closing) === 0) {
      Atomics.store(state, CheckpointState.wanted, 0);
      const seen = Atomics.load(state, CheckpointState.commits);
      const { log, checkpointed } = checkpoint.get() as { log: number; checkpointed: number };
      const copiedBefore = Atomics.load(state, CheckpointState.copied);
      Atomics.store(state, CheckpointState.seen, seen);
      Atomics.store(state, CheckpointState.frames, log);
      Atomics.store(state, CheckpointState.copied, checkpointed);
      Atomics.add(state, CheckpointState.reports, 1);
      Atomics.notify(state, CheckpointState.reports);
      idle = checkpointed !== copiedBefore
        ? 0
        : Math.min(idle + 1, CHECKPOINT_INTERVALS_MS.length - 1);
      // Woken early when the writer waits (wanted) or the worker is to stop.
      Atomics.wait(state, CheckpointState.wanted, 0, CHECKPOINT_INTERVALS_MS[idle]);
    }
  } finally {
    database.close();
  }
}

self.onmessage = (event: MessageEvent<CheckpointRequest>) => {
  let answer: CheckpointAnswer;
  try {
    keepCheckpointed(event.data);
    answer = { kind: "closed" };
  } catch (error) {
    answer = { kind: "failed", error: error instanceof Error ? error.message : String(error) };
  }
  self.postMessage(answer);
};
