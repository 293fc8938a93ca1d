/** What the operator CLI's tests share: a DATA_DIR holding both databases, as a service leaves it. */
import { openTempDatabase } from "./helpers.ts";
import { loadOrCreateDevSecrets, markDevDataDir } from "../db/dev_secrets.ts";

/**
 * Both databases of a DATA_DIR, created and migrated as the service's first start does; with
 * `dev`, as `deno task dev` leaves it: marked a dev-mode sandbox, its secrets beside it.
 */
export async function createDatabases(dataDir: string, options: { dev: boolean }): Promise<void> {
  if (options.dev) await markDevSandbox(dataDir);
  for (const environment of ["test", "live"] as const) {
    await (await openTempDatabase(dataDir, environment)).close();
  }
}

/** Marks DATA_DIR a dev-mode sandbox with its generated secrets, as `deno task dev` does. */
export async function markDevSandbox(dataDir: string): Promise<void> {
  await loadOrCreateDevSecrets(dataDir);
  const refused = await markDevDataDir(dataDir, []);
  if (refused !== null) throw new Error(refused);
}
