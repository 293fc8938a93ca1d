/**
 * Which Increase a company's instant deposits go through: its own Increase settings when it stored
 * some (in either environment); else, where the composition root binds it (the sandbox), the
 * Increase simulator, so a test company is paid through the same adapter as live; else none (the
 * rail then refuses `rail_not_configured`).
 */
import type { Database } from "../../db/client.ts";
import type { SecretBox } from "../platform/crypto.ts";
import { type ProviderReach, providerReach } from "../rails/provider_reach.ts";
import { IncreaseClient } from "./client.ts";
import type { IncreaseSettings } from "./settings.ts";
import { increaseSimulator, SIMULATOR_SETTINGS } from "./simulator.ts";
import { increaseSettingsStore } from "./store.ts";

/** The Increase a company is paid through: its settings, and whether it is the simulator. */
export interface IncreaseAccount {
  readonly settings: IncreaseSettings;
  readonly simulated: boolean;
}

/**
 * How each company reaches Increase: its own settings, else (`simulated`, the sandbox) the
 * simulator's settings; without either it does not, and is not paid by instant deposit.
 */
export function increaseReachOf(
  secretBox: SecretBox,
  simulated: boolean,
): ProviderReach<IncreaseAccount> {
  return providerReach<IncreaseSettings, IncreaseAccount>(
    {
      read: (reader, companyId) => increaseSettingsStore.read(reader, secretBox, companyId),
      has: (reader, companyId) => increaseSettingsStore.has(reader, companyId),
    },
    (settings) => ({ settings, simulated: false }),
    simulated ? () => ({ settings: SIMULATOR_SETTINGS, simulated: true }) : null,
  );
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
