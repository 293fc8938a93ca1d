/**
 * The operator commands of the providers' sealed settings: lithic:set and lithic:show (virtual
 * cards), increase:set and increase:show (instant deposit), per company and environment; a live
 * change waits for a second admin, as bank and PayPal settings do. Each takes --environment, live
 * by default, and names the environment it acted on.
 */
import { maskedLithicSettings } from "../cards/settings.ts";
import { lithicSealedSettings } from "../cards/settings_approval.ts";
import { lithicSettingsStore } from "../cards/store.ts";
import { maskedIncreaseSettings } from "../instant/settings.ts";
import { increaseSealedSettings } from "../instant/settings_approval.ts";
import { increaseSettingsStore } from "../instant/store.ts";
import type { SealedSettingsRail } from "../operators/sealed_settings_approval.ts";
import type { SealedSettingsStore } from "../rails/sealed_settings_store.ts";
import type { Command } from "./command_kit.ts";
import { sealedSettingsCommands } from "./sealed_settings.ts";

/** A settings file is a few lines of JSON; anything larger is not one. */
const SETTINGS_FILE_BYTES_MAX = 64 * 1024;

/** The set and show commands of one provider's settings. */
function providerCommands<S extends { readonly apiKey: string; readonly baseUrl: string }>(
  provider: {
    readonly name: string;
    readonly methods: string;
    readonly doc: string;
    readonly rail: SealedSettingsRail<S>;
    readonly store: SealedSettingsStore<S>;
    readonly masked: (settings: S) => Record<string, unknown>;
    readonly summary: (settings: S) => string;
  },
): { set: Command; show: Command } {
  const command = provider.rail.action.split(":")[0];
  return sealedSettingsCommands({
    rail: provider.rail,
    setSummary:
      `set a company's ${provider.name} settings (${provider.methods}) from a JSON file (test: at once; live: once a second admin approves)`,
    showSummary:
      `show a company's ${provider.name} settings, the API key masked and the webhook secret left out`,
    fileHelp: `the settings as JSON (see ${provider.doc})`,
    fileBytesMax: SETTINGS_FILE_BYTES_MAX,
    approvalSummary: (company, settings) =>
      `${provider.rail.action} ${company.name} (TIN ${company.tin}): ${settings.baseUrl}, key …${
        settings.apiKey.slice(-4)
      }, ${provider.summary(settings)}`,
    masked: provider.masked,
    read: async (reader, secretBox, _environment, companyId) => {
      const settings = await provider.store.read(reader, secretBox, companyId);
      return settings === null ? null : { settings, fields: {} };
    },
    notFoundMessage: (company, environment) =>
      `no ${provider.name} settings for ${company.name} (TIN ${company.tin}) in ${environment}: ${
        environment === "test"
          ? `the sandbox's ${provider.name} simulator pays its ${provider.methods}`
          : `${provider.methods} are not offered to its payees`
      }; set them with ${command}:set`,
  });
}

const lithic = providerCommands({
  name: "Lithic",
  methods: "virtual card payouts",
  doc: "docs/lithic.md",
  rail: lithicSealedSettings,
  store: lithicSettingsStore,
  masked: maskedLithicSettings,
  summary: (settings) =>
    `cards valid ${settings.cardValidDays} days, ${
      settings.allowedMccs.length === 0
        ? "any merchant"
        : `merchant categories ${settings.allowedMccs.join(", ")}`
    }`,
});

const increase = providerCommands({
  name: "Increase",
  methods: "instant deposit payouts",
  doc: "docs/instant.md",
  rail: increaseSealedSettings,
  store: increaseSettingsStore,
  masked: maskedIncreaseSettings,
  summary: (settings) =>
    `account ${settings.accountId}, cards typed at ${new URL(settings.cardPageUrl).origin}`,
});

export const providerSettingsCommands: Readonly<Record<string, Command>> = {
  "lithic:set": lithic.set,
  "lithic:show": lithic.show,
  "increase:set": increase.set,
  "increase:show": increase.show,
};
