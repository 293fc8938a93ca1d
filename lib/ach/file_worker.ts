/**
 * Builds and checks a claimed NACHA file off the service's thread (lib/ach/file_build.ts): for a
 * catastrophe day's file, reading 10,000 entries, building the file and reading it back take a
 * second of CPU that would otherwise stall every request. The worker reads the database through
 * its own connection, so nothing large crosses between threads but the answer. It also reads and opens
 * a kept file before its transmission, and checks it is the file its build checked. Started by
 * lib/ach/jobs.ts, once with a service's workers and kept for its life (elsewhere, per file, and
 * kept from a build for the opening of its file); answers each message in turn.
 */
/// <reference lib="deno.worker" />
import { openReader, type ReaderOptions } from "../../db/client.ts";
import { SecretBox } from "../platform/crypto.ts";
import {
  buildFile,
  type BuiltFile,
  type FileClaim,
  type OpenedFile,
  openKeptContent,
} from "./file_build.ts";
import { loadAchFile } from "./files_store.ts";

/** What the worker is asked: to build a claimed file, or to open and check a kept one. */
export type FileWorkerRequest =
  | {
    readonly kind: "build";
    readonly reader: ReaderOptions;
    /** The service's ENCRYPTION_KEY, base64 (SecretBox.keyForWorker). */
    readonly keyBase64: string;
    readonly sandboxTestAccounts: boolean;
    readonly claim: FileClaim;
  }
  | {
    readonly kind: "open";
    readonly reader: ReaderOptions;
    readonly keyBase64: string;
    /** The batch whose kept file the worker reads itself: its sealed content never crosses. */
    readonly batchId: string;
  };

/** What it answers: the build or the opened file, or why it threw. */
export type FileWorkerAnswer =
  | { readonly ok: true; readonly built: BuiltFile }
  | { readonly ok: true; readonly opened: OpenedFile }
  | { readonly ok: false; readonly error: string };

/**
 * Puts this thread in Linux's idle scheduling class (SCHED_IDLE: it runs only on CPU time nothing
 * else wants, and gives it up at once when a request wakes the service's thread): measured on 2
 * cores under load, the worker at normal priority took the CPU from the service's thread for
 * 6-16 ms at a time. Needs FFI (granted by -A); without it, or off Linux, the build runs at the
 * service's priority.
 */
function yieldCpuToRequests(): void {
  if (
    Deno.build.os !== "linux" || Deno.permissions.querySync({ name: "ffi" }).state !== "granted"
  ) {
    return;
  }
  try {
    const libc = Deno.dlopen("libc.so.6", {
      gettid: { parameters: [], result: "i32" },
      sched_setscheduler: { parameters: ["i32", "i32", "buffer"], result: "i32" },
    });
    try {
      const SCHED_IDLE = 5;
      // struct sched_param { int sched_priority; }: 0 for SCHED_IDLE.
      libc.symbols.sched_setscheduler(libc.symbols.gettid(), SCHED_IDLE, new Int32Array(1));
    } finally {
      libc.close();
    }
  } catch {
    // No libc.so.6 (musl): the build runs at the service's priority.
  }
}

self.onmessage = async (event: MessageEvent<FileWorkerRequest>) => {
  yieldCpuToRequests();
  const request = event.data;
  let answer: FileWorkerAnswer;
  try {
    const secretBox = await SecretBox.fromBase64Key(request.keyBase64);
    if (request.kind === "open") {
      const reader = await openReader(request.reader);
      try {
        const kept = await loadAchFile(reader, request.batchId);
        if (!kept) throw new Error(`ACH batch ${request.batchId} has no file`);
        answer = { ok: true, opened: await openKeptContent(secretBox, kept) };
      } finally {
        reader.close();
      }
    } else {
      const reader = await openReader(request.reader);
      try {
        const deps = { reader, secretBox, sandboxTestAccounts: request.sandboxTestAccounts };
        answer = { ok: true, built: await buildFile(deps, request.claim) };
      } finally {
        reader.close();
      }
    }
  } catch (error) {
    answer = { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
  // The opened file's bytes move to the service's thread; the worker keeps no copy of them.
  self.postMessage(answer, answer.ok && "opened" in answer ? [answer.opened.content.buffer] : []);
};
