/**
 * The use cases of what an insurer owes: a company's deadline and unclaimed-property settings
 * (both environments, the sandbox's shortened dormancy in test only).
 */
import type { Databases } from "../identity/admin.ts";
import type { SettingsChange } from "./settings.ts";
import {
  type ObligationSettings,
  readObligationSettings,
  updateObligationSettings,
} from "./store.ts";

/** A company's settings as both environments hold them (the sandbox dormancy: the test one's). */
export async function obligationSettingsOf(
  databases: Databases,
  companyId: string,
): Promise<ObligationSettings> {
  const [live, test] = await Promise.all([
    readObligationSettings(databases.live.readClient, companyId),
    readObligationSettings(databases.test.readClient, companyId),
  ]);
  return { ...live, sandboxDormancyDays: test.sandboxDormancyDays };
}

/**
 * Changes a company's settings in both environments (the sandbox dormancy only in test, where the
 * sandbox clock runs), and answers the settings as they are now.
 */
export async function changeObligationSettings(
  databases: Databases,
  companyId: string,
  change: SettingsChange,
): Promise<ObligationSettings> {
  const { sandboxDormancyDays: _testOnly, ...both } = change;
  await databases.live.writer.write((tx) => updateObligationSettings(tx, companyId, both));
  await databases.test.writer.write((tx) => updateObligationSettings(tx, companyId, change));
  return await obligationSettingsOf(databases, companyId);
}
