/**
 * Where the service finds the files of its own it reads at run time (the migrations, the contract)
 * and the modules its worker threads run, in both layouts it starts from: the repository's sources
 * (`deno task dev`, tests, `deno compile`), and the bundle `deno task build` writes into `dist/`
 * (`deno task start`), which holds copies of those files at the same paths and each worker
 * as an entry of its own (`.js`). A bundle keeps no module of ours but its chunks, all at its top,
 * so this module finds the layout's top from where it runs.
 */
const bundled = !import.meta.url.endsWith(".ts");
const top = new URL(bundled ? "./" : "../../", import.meta.url);

/** A file of the service's, by its path in the repository (`docs/contract.md`). */
export function serviceFileUrl(path: string): URL {
  return new URL(path, top);
}

/** A worker thread's module, by its source's path in the repository (`lib/ach/file_worker.ts`). */
export function workerModuleUrl(sourcePath: `${string}.ts`): URL {
  return new URL(bundled ? sourcePath.replace(/\.ts$/, ".js") : sourcePath, top);
}
