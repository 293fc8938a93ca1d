/**
 * Copies an embedded database's WAL into its file (a checkpoint) on a thread of its own, through a
 * connection of its own (db/checkpointer.ts starts it and asks). A checkpoint on the writer's
 * connection ran inside a commit, on the service's thread: its reads of the WAL, its writes to the
 * database and the database's fsync held every request behind it.
 */
/// <reference lib="deno.worker" />
import { DatabaseSync, type StatementSync } from "node:sqlite";

/** What the worker is asked: to open the database, to checkpoint it, or to close it. */
export type CheckpointRequest =
  | { readonly kind: "open"; readonly path: string; readonly busyTimeoutMs: number }
  | { readonly kind: "checkpoint" }
  | { readonly kind: "close" };

/** What it answers: a checkpoint's counts (WAL frames, frames copied), closed, or why it failed. */
export type CheckpointAnswer =
  | { readonly kind: "checkpointed"; readonly frames: number; readonly copied: number }
  | { readonly kind: "closed" }
  | { readonly kind: "failed"; readonly error: string };

let database: DatabaseSync | null = null;
let checkpoint: StatementSync | null = null;

function answer(request: CheckpointRequest): CheckpointAnswer {
  switch (request.kind) {
    case "open":
      database = new DatabaseSync(request.path, { timeout: request.busyTimeoutMs });
      // A checkpoint syncs the WAL before it copies and the database after, as the writer's did.
      database.exec("PRAGMA synchronous=FULL");
      checkpoint = database.prepare("PRAGMA wal_checkpoint(PASSIVE)");
      return { kind: "checkpointed", frames: 0, copied: 0 };
    case "checkpoint": {
      // PASSIVE: copies what no reader still needs, and never waits for the writer or a reader.
      const { log, checkpointed } = checkpoint!.get() as { log: number; checkpointed: number };
      return { kind: "checkpointed", frames: log, copied: checkpointed };
    }
    case "close":
      database?.close();
      database = checkpoint = null;
      return { kind: "closed" };
  }
}

self.onmessage = (event: MessageEvent<CheckpointRequest>) => {
  let reply: CheckpointAnswer;
  try {
    reply = answer(event.data);
  } catch (error) {
    reply = { kind: "failed", error: error instanceof Error ? error.message : String(error) };
  }
  self.postMessage(reply);
};
