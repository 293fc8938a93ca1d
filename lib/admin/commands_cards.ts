/**
 * The operator commands of live virtual cards: lithic:set and lithic:show (Lithic settings per
 * company and environment; a live change waits for a second admin, as bank and PayPal settings
 * do). Each takes --environment, live by default, and names the environment it acted on.
 */
import { maskedLithicSettings } from "../cards/settings.ts";
import { lithicSealedSettings } from "../cards/settings_approval.ts";
import { lithicSettingsStore } from "../cards/store.ts";
import type { Command } from "./command_kit.ts";
import { sealedSettingsCommands } from "./sealed_settings.ts";

/** A settings file is a few lines of JSON; anything larger is not one. */
const SETTINGS_FILE_BYTES_MAX = 64 * 1024;

const lithicSettingsCommands = sealedSettingsCommands({
  rail: lithicSealedSettings,
  setSummary:
    "set a company's Lithic virtual card settings from a JSON file (test: at once; live: once a second admin approves)",
  showSummary:
    "show a company's Lithic settings, the API key masked and the webhook secret left out",
  fileHelp: "the settings as JSON (see docs/lithic.md)",
  fileBytesMax: SETTINGS_FILE_BYTES_MAX,
  approvalSummary: (company, settings) =>
    `lithic:set ${company.name} (TIN ${company.tin}): ${settings.baseUrl}, key …${
      settings.apiKey.slice(-4)
    }, cards valid ${settings.cardValidDays} days, ${
      settings.allowedMccs.length === 0
        ? "any merchant"
        : `merchant categories ${settings.allowedMccs.join(", ")}`
    }`,
  masked: maskedLithicSettings,
  read: async (reader, secretBox, _environment, companyId) => {
    const settings = await lithicSettingsStore.read(reader, secretBox, companyId);
    return settings === null ? null : { settings, fields: {} };
  },
  notFoundMessage: (company, environment) =>
    `no Lithic settings for ${company.name} (TIN ${company.tin}) in ${environment}: ${
      environment === "test"
        ? "the sandbox rail pays its virtual card payouts"
        : "virtual cards are not offered to its payees"
    }; set them with lithic:set`,
});

export const cardCommands: Readonly<Record<string, Command>> = {
  "lithic:set": lithicSettingsCommands.set,
  "lithic:show": lithicSettingsCommands.show,
};
