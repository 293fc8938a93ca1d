/**
 * The operator commands of checks mailed by Lob: lob:set and lob:show (Lob settings per company
 * and environment; a live change waits for a second admin, as bank and PayPal settings do). Each
 * takes --environment, live by default, and names the environment it acted on.
 */
import { maskedLobSettings } from "../lob/settings.ts";
import { lobSealedSettings } from "../lob/settings_approval.ts";
import { lobSettingsStore } from "../lob/store.ts";
import type { Command } from "./command_kit.ts";
import { sealedSettingsCommands } from "./sealed_settings.ts";

/** A settings file is a few lines of JSON; anything larger is not one. */
const SETTINGS_FILE_BYTES_MAX = 64 * 1024;

const lobSettingsCommands = sealedSettingsCommands({
  rail: lobSealedSettings,
  setSummary:
    "set a company's Lob settings from a JSON file: Lob mails its postal checks, or (mailing self) it prints them (test: at once; live: once a second admin approves)",
  showSummary: "show a company's Lob settings, the API key masked and the webhook secret left out",
  fileHelp: "the settings as JSON (see docs/lob.md)",
  fileBytesMax: SETTINGS_FILE_BYTES_MAX,
  approvalSummary: (company, settings) =>
    `lob:set ${company.name} (TIN ${company.tin}): ${
      settings.mailing === "provider" ? "Lob mails its checks" : "it prints its checks"
    }, ${settings.baseUrl}, key …${
      settings.apiKey.slice(-4)
    }, bank account ${settings.bankAccount}, from ${settings.fromAddress}`,
  masked: maskedLobSettings,
  read: async (reader, secretBox, _environment, companyId) => {
    const settings = await lobSettingsStore.read(reader, secretBox, companyId);
    return settings === null ? null : { settings, fields: {} };
  },
  notFoundMessage: (company, environment) =>
    `no Lob settings for ${company.name} (TIN ${company.tin}) in ${environment}: it prints its own checks; set them with lob:set`,
});

export const lobCommands: Readonly<Record<string, Command>> = {
  "lob:set": lobSettingsCommands.set,
  "lob:show": lobSettingsCommands.show,
};
