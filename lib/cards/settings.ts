/**
 * A company's Lithic settings (pure rules): the API key (it also signs the embed requests that
 * show a card to its payee), the API host (Lithic's of the environment or a loopback contract
 * server), the webhook secret Lithic signs its events with, how many days a card stays valid, and
 * the merchant category codes a card may be spent at (none: any).
 */
import * as v from "valibot";
import { ok, type Result } from "../platform/result.ts";
import { settingsInputRefusal } from "../platform/settings_input.ts";
import { checkProviderBaseUrl, type ProviderHosts } from "../rails/provider_base_url.ts";

/** Lithic's hosts (docs.lithic.com, "Environments"). */
export const LITHIC_HOSTS: ProviderHosts = {
  name: "Lithic",
  live: "https://api.lithic.com",
  sandbox: "https://sandbox.lithic.com",
};

/** A card is valid this many days unless the settings say otherwise. */
export const CARD_VALID_DAYS_DEFAULT = 30;
/** The longest validity taken: a payee's card should not outlive a year. */
export const CARD_VALID_DAYS_MAX = 365;
/** Merchant category codes a card may be limited to, at most. */
export const ALLOWED_MCCS_MAX = 100;
const CREDENTIAL_LENGTH_MAX = 256;

export interface LithicSettings {
  readonly apiKey: string;
  /** The API host, no trailing slash. */
  readonly baseUrl: string;
  /** The `whsec_…` secret of the webhook subscription (Standard Webhooks signatures). */
  readonly webhookSecret: string;
  readonly cardValidDays: number;
  /** Four-digit merchant category codes; empty: the card may be spent anywhere. */
  readonly allowedMccs: readonly string[];
}

const settingsInput = v.strictObject({
  api_key: v.pipe(
    v.string("api_key must be a string"),
    v.regex(/^[A-Za-z0-9_\-]+$/, "api_key: letters, digits, '-' or '_'"),
    v.maxLength(CREDENTIAL_LENGTH_MAX, `api_key: at most ${CREDENTIAL_LENGTH_MAX} characters`),
  ),
  base_url: v.pipe(v.string("base_url must be a string"), v.url("base_url must be a URL")),
  webhook_secret: v.pipe(
    v.string("webhook_secret must be a string"),
    v.regex(/^whsec_[A-Za-z0-9+/=]+$/, "webhook_secret: whsec_ followed by base64"),
    v.maxLength(
      CREDENTIAL_LENGTH_MAX,
      `webhook_secret: at most ${CREDENTIAL_LENGTH_MAX} characters`,
    ),
  ),
  card_valid_days: v.optional(
    v.pipe(
      v.number("card_valid_days must be a number"),
      v.integer("card_valid_days must be whole days"),
      v.minValue(1, "card_valid_days: at least 1"),
      v.maxValue(CARD_VALID_DAYS_MAX, `card_valid_days: at most ${CARD_VALID_DAYS_MAX}`),
    ),
    CARD_VALID_DAYS_DEFAULT,
  ),
  allowed_mccs: v.optional(
    v.pipe(
      v.array(
        v.pipe(v.string(), v.regex(/^\d{4}$/, "each merchant category code is four digits")),
        "allowed_mccs must be a list",
      ),
      v.maxLength(ALLOWED_MCCS_MAX, `allowed_mccs: at most ${ALLOWED_MCCS_MAX} codes`),
    ),
    [],
  ),
});

/** Checks settings given as JSON (`lithic:set --file`), naming the first wrong field. */
export function checkLithicSettings(
  input: unknown,
  environment: "test" | "live",
): Result<LithicSettings, "invalid_input"> {
  const parsed = v.safeParse(settingsInput, input);
  if (!parsed.success) return settingsInputRefusal(parsed.issues);
  const s = parsed.output;
  const baseUrl = checkProviderBaseUrl(s.base_url, environment, LITHIC_HOSTS);
  if (!baseUrl.ok) return baseUrl;
  return ok({
    apiKey: s.api_key,
    baseUrl: baseUrl.value,
    webhookSecret: s.webhook_secret,
    cardValidDays: s.card_valid_days,
    allowedMccs: [...new Set(s.allowed_mccs)],
  });
}

/** The settings as the JSON `lithic:set` takes. */
export function lithicSettingsJson(settings: LithicSettings): Record<string, unknown> {
  return {
    api_key: settings.apiKey,
    base_url: settings.baseUrl,
    webhook_secret: settings.webhookSecret,
    card_valid_days: settings.cardValidDays,
    allowed_mccs: settings.allowedMccs,
  };
}

/** What `lithic:show` prints: the key's last four, never the key or the webhook secret. */
export function maskedLithicSettings(settings: LithicSettings): Record<string, unknown> {
  return {
    api_key: `…${settings.apiKey.slice(-4)}`,
    base_url: settings.baseUrl,
    webhook_secret: "(sealed)",
    card_valid_days: settings.cardValidDays,
    allowed_mccs: settings.allowedMccs,
  };
}
