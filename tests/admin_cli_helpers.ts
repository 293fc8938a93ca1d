/** What the operator CLI's tests share: a DATA_DIR holding both databases, as a service leaves it. */
import { openTempDatabase } from "./helpers.ts";

/** Both databases of a DATA_DIR, created and migrated as the service's first start does. */
export async function createDatabases(dataDir: string): Promise<void> {
  for (const environment of ["test", "live"] as const) {
    await (await openTempDatabase(dataDir, environment)).close();
  }
}
