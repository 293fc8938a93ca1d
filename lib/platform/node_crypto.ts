/**
 * Node's crypto, imported at its first use instead of with the modules that use it: its import
 * loads Deno's Node compatibility layer (about 15 ms of CPU), which the service's first answer
 * does not need. An asynchronous user awaits `loadNodeCrypto()`; a synchronous one (the audit
 * chain's hash) takes `loadedNodeCrypto()`, which the module that made the chain's keys provided.
 */
type NodeCrypto = typeof import("node:crypto");

let loaded: NodeCrypto | null = null;
let loading: Promise<NodeCrypto> | undefined;

export function loadNodeCrypto(): Promise<NodeCrypto> {
  return loading ??= import("node:crypto").then((module) => loaded = module);
}

/** For a module that imports Node's crypto itself: its synchronous users may use it from then. */
export function provideNodeCrypto(module: NodeCrypto): void {
  loaded = module;
  loading ??= Promise.resolve(module);
}

/** Node's crypto when it has loaded; before, a programmer error. */
export function loadedNodeCrypto(): NodeCrypto {
  if (loaded === null) throw new Error("node:crypto is not loaded yet: await loadNodeCrypto()");
  return loaded;
}
