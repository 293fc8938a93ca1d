/**
 * Builds and checks a NACHA file off the main thread: for a catastrophe day's file the library's
 * build and the strict check take seconds of CPU, which would stall every request meanwhile.
 * Started per file by lib/ach/jobs.ts; answers one message and is terminated.
 */
/// <reference lib="deno.worker" />
import { buildNachaFile, checkNachaFile, type NachaFileModel } from "./nacha.ts";

/** What the worker is asked. */
export interface FileWorkerRequest {
  readonly model: NachaFileModel;
  readonly odfi: string;
}

/** What it answers: the content and its check, or why the build threw. */
export type FileWorkerAnswer =
  | {
    readonly ok: true;
    readonly content: string;
    readonly checked: ReturnType<typeof checkNachaFile>;
  }
  | { readonly ok: false; readonly error: string };

self.onmessage = async (event: MessageEvent<FileWorkerRequest>) => {
  let answer: FileWorkerAnswer;
  try {
    const content = await buildNachaFile(event.data.model);
    answer = { ok: true, content, checked: checkNachaFile(content, { odfi: event.data.odfi }) };
  } catch (error) {
    answer = { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
  self.postMessage(answer);
};
