/**
 * drizzle and the schema's tables, which every query of the stores is built with: loaded once,
 * when first needed, so that a start that only opens the databases (the service's cold start)
 * does not pay for them.
 */
import type { Client } from "@libsql/client";
import type { DrizzleConfig } from "drizzle-orm";
import type { LibSQLDatabase } from "drizzle-orm/libsql/driver-core";
import type * as Schema from "./schema.ts";

export type Db = LibSQLDatabase<typeof Schema>;

interface QueryLayer {
  readonly drizzle: (client: Client, config: DrizzleConfig<typeof Schema>) => Db;
  readonly schema: typeof Schema;
}

let loaded: QueryLayer | null = null;
let loading: Promise<QueryLayer> | null = null;

/** Loads drizzle and the schema (once). */
export function loadQueryLayer(): Promise<QueryLayer> {
  return loading ??= Promise.all([import("./drizzle.ts"), import("./schema.ts")]).then((
    [{ drizzle }, schema],
  ) => (loaded = { drizzle, schema }));
}

/** drizzle over `client` with the schema; the layer must have been loaded. */
export function drizzleOver(client: Client): Db {
  if (loaded === null) {
    throw new Error("the query layer is not loaded: await loadQueryLayer() first");
  }
  return loaded.drizzle(client, { schema: loaded.schema });
}
