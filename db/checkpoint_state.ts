/**
 * The counters the service's thread and its WAL checkpoint worker share (db/checkpointer.ts and
 * db/checkpoint_worker.ts), by index in an Int32Array over a SharedArrayBuffer.
 */
export const CheckpointState = {
  /** Groups the writer committed (the writer adds). */
  commits: 0,
  /** The commits the last checkpoint saw before it began: its copy holds all of theirs. */
  seen: 1,
  /** The WAL's frames at the last checkpoint, and how many of them are copied. */
  frames: 2,
  copied: 3,
  /** Checkpoints done (the worker adds, and wakes who waits on it). */
  reports: 4,
  /** Set when the writer waits for a checkpoint: the worker runs one at once. */
  wanted: 5,
  /** Set to stop the worker. */
  closing: 6,
  length: 7,
} as const;
