/**
 * drizzle over a client we give it. `drizzle-orm/libsql` loads `@libsql/client` (its native driver
 * and network protocols) only to offer building a client from a URL, which costs a cold start
 * hundreds of milliseconds; its core builds the same database object from our client. The core's
 * declarations leave that function out, so it is typed here and checked when loaded.
 */
import type { Client } from "@libsql/client";
import type { DrizzleConfig } from "drizzle-orm";
import * as core from "drizzle-orm/libsql/driver-core";
import type { LibSQLDatabase } from "drizzle-orm/libsql/driver-core";

type Construct = <TSchema extends Record<string, unknown> = Record<string, never>>(
  client: Client,
  config?: DrizzleConfig<TSchema>,
) => LibSQLDatabase<TSchema>;

const { construct } = core as unknown as { construct?: Construct };
if (typeof construct !== "function") {
  throw new Error("drizzle-orm/libsql/driver-core no longer exports construct(client, config)");
}

/** A drizzle database over `client`, as `drizzle(client, config)` of `drizzle-orm/libsql` builds. */
export const drizzle: Construct = construct;
