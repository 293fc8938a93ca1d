/**
 * drizzle, which the stores build their queries with: loaded once, when first needed, so that a
 * start that only opens the databases (the service's cold start) does not pay for it. drizzle is
 * given no schema: the stores build every query from the tables they import (db/schema.ts) and
 * none uses its relational queries (`db.query`), whose configuration drizzle computed from the
 * whole schema for each database object it built (about 2 to 3 ms of the service's thread, at the
 * first write unit that used `tx.db`: a cutoff's recording unit).
 */
import type { Client } from "@libsql/client";
import type { DrizzleConfig } from "drizzle-orm";
import type { LibSQLDatabase } from "drizzle-orm/libsql/driver-core";

export type Db = LibSQLDatabase;

interface QueryLayer {
  readonly drizzle: (client: Client, config: DrizzleConfig) => Db;
}

let loaded: QueryLayer | null = null;
let loading: Promise<QueryLayer> | null = null;

/** Loads drizzle (once). */
export function loadQueryLayer(): Promise<QueryLayer> {
  return loading ??= import("./drizzle.ts").then(({ drizzle }) => (loaded = { drizzle }));
}

/** drizzle over `client`; the layer must have been loaded. */
export function drizzleOver(client: Client): Db {
  if (loaded === null) {
    throw new Error("the query layer is not loaded: await loadQueryLayer() first");
  }
  return loaded.drizzle(client, {});
}
