/**
 * Which Increase a company's instant deposits go through, decided in this one place: its own
 * Increase settings when it stored some (in either environment); in the sandbox, without them,
 * the Increase simulator, so a test company is paid through the same adapter as live; in live,
 * none (the rail then refuses `rail_not_configured`).
 */
import type { Database } from "../../db/client.ts";
import type { SqlReader } from "../../db/writer.ts";
import type { SecretBox } from "../platform/crypto.ts";
import { IncreaseClient } from "./client.ts";
import type { IncreaseSettings } from "./settings.ts";
import { increaseSimulator, SIMULATOR_SETTINGS } from "./simulator.ts";
import { increaseSettingsStore } from "./store.ts";

/** The Increase a company is paid through: its settings, and whether it is the simulator. */
export interface IncreaseAccount {
  readonly settings: IncreaseSettings;
  readonly simulated: boolean;
}

/** The company's Increase in this database's environment, or null when it has none. */
export async function increaseAccount(
  deps: { readonly database: Database; readonly secretBox: SecretBox },
  companyId: string,
  reader: SqlReader = deps.database.readClient,
): Promise<IncreaseAccount | null> {
  const settings = await increaseSettingsStore.read(reader, deps.secretBox, companyId);
  if (settings) return { settings, simulated: false };
  return deps.database.environment === "test"
    ? { settings: SIMULATOR_SETTINGS, simulated: true }
    : null;
}

/** Whether the company's instant deposits have an Increase to go through. */
export async function increaseServes(
  database: Database,
  reader: SqlReader,
  companyId: string,
): Promise<boolean> {
  return database.environment === "test" || await increaseSettingsStore.has(reader, companyId);
}

/**
 * A client of the company's Increase; `at` is the company's domain time of the calls (the
 * simulator dates what it makes with it), `timeoutMs` how long one call may take.
 */
export function increaseClientOf(
  database: Database,
  companyId: string,
  account: IncreaseAccount,
  options: { readonly at: number; readonly timeoutMs?: number },
): IncreaseClient {
  return new IncreaseClient(
    account.settings,
    options.timeoutMs,
    account.simulated ? increaseSimulator(database, companyId, options.at) : undefined,
  );
}
