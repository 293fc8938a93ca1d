/** What an operator asks of the running service besides its commands: is each database ready. */
import { type Database, migrationsPending } from "../../db/client.ts";

/** Whether the database answers with every migration applied (DESIGN 13), and what it says. */
export async function databaseReadiness(
  database: Database,
): Promise<{ ready: boolean; check: string }> {
  try {
    await database.readClient.execute("SELECT 1");
    const pending = await migrationsPending(database);
    return pending === 0
      ? { ready: true, check: "ok" }
      : { ready: false, check: `${pending} migrations not applied` };
  } catch (error) {
    return {
      ready: false,
      check: `database unreachable: ${error instanceof Error ? error.message : error}`,
    };
  }
}

/** /readyz's answer: ready when every database is, with each one's check by environment. */
export async function serviceReadiness(
  databases: Readonly<Record<string, Database>>,
): Promise<{ status: 200 | 503; body: { status: string; databases: Record<string, string> } }> {
  const checks: Record<string, string> = {};
  let ready = true;
  for (const [environment, database] of Object.entries(databases)) {
    const readiness = await databaseReadiness(database);
    checks[environment] = readiness.check;
    ready &&= readiness.ready;
  }
  return {
    status: ready ? 200 : 503,
    body: { status: ready ? "ready" : "not_ready", databases: checks },
  };
}
