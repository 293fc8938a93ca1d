/**
 * A company's Increase settings for instant deposit (pure rules): the API key, the API host
 * (Increase's of the environment or a loopback contract server), the webhook secret of its event
 * subscription, the account and account number money is pushed from, the hosted card page of its
 * tokenization provider (where the payee types the card; it sends the number to Increase's vault
 * and the payee back to us with a card token), and the merchant the payee's statement names.
 */
import * as v from "valibot";
import { ok, refuse, type Result } from "../platform/result.ts";
import { checkProviderBaseUrl, type ProviderHosts } from "../rails/provider_base_url.ts";
import { settingsInputRefusal } from "../platform/settings_input.ts";

/** Increase's hosts (increase.com/documentation, "Sandbox"). */
export const INCREASE_HOSTS: ProviderHosts = {
  name: "Increase",
  live: "https://api.increase.com",
  sandbox: "https://sandbox.increase.com",
};

const TEXT_LENGTH_MAX = 256;
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** The merchant (the insurer) a push and a validation carry to the card network. */
export interface InstantMerchant {
  readonly name: string;
  /** Up to four characters the statement descriptor starts with. */
  readonly namePrefix: string;
  readonly categoryCode: string;
  readonly addressLine1: string;
  readonly city: string;
  readonly state: string;
  readonly postalCode: string;
}

export interface IncreaseSettings {
  readonly apiKey: string;
  readonly baseUrl: string;
  readonly webhookSecret: string;
  readonly accountId: string;
  readonly sourceAccountNumberId: string;
  /** The tokenization provider's hosted card page (https, or a loopback contract server). */
  readonly cardPageUrl: string;
  readonly merchant: InstantMerchant;
}

const text = (name: string, pattern = /^[\x20-\x7e]+$/) =>
  v.pipe(
    v.string(`${name} must be a string`),
    v.regex(pattern, `${name}: printable characters`),
    v.maxLength(TEXT_LENGTH_MAX, `${name}: at most ${TEXT_LENGTH_MAX} characters`),
  );

const settingsInput = v.strictObject({
  api_key: text("api_key", /^[A-Za-z0-9_\-]+$/),
  base_url: v.pipe(v.string("base_url must be a string"), v.url("base_url must be a URL")),
  webhook_secret: text("webhook_secret", /^[A-Za-z0-9_\-+/=]+$/),
  account_id: text("account_id", /^[A-Za-z0-9_]+$/),
  source_account_number_id: text("source_account_number_id", /^[A-Za-z0-9_]+$/),
  card_page_url: v.pipe(
    v.string("card_page_url must be a string"),
    v.url("card_page_url must be a URL"),
  ),
  merchant: v.strictObject({
    name: text("merchant.name"),
    name_prefix: v.pipe(
      text("merchant.name_prefix"),
      v.maxLength(4, "merchant.name_prefix: at most 4 characters"),
    ),
    category_code: text("merchant.category_code", /^\d{4}$/),
    address_line1: text("merchant.address_line1"),
    city: text("merchant.city"),
    state: text("merchant.state", /^[A-Z]{2}$/),
    postal_code: text("merchant.postal_code", /^\d{5}$/),
  }),
});

/** Checks settings given as JSON (`increase:set --file`), naming the first wrong field. */
export function checkIncreaseSettings(
  input: unknown,
  environment: "test" | "live",
): Result<IncreaseSettings, "invalid_input"> {
  const parsed = v.safeParse(settingsInput, input);
  if (!parsed.success) return settingsInputRefusal(parsed.issues);
  const s = parsed.output;
  const baseUrl = checkProviderBaseUrl(s.base_url, environment, INCREASE_HOSTS);
  if (!baseUrl.ok) return baseUrl;
  const page = new URL(s.card_page_url);
  if (page.protocol !== "https:" && !LOOPBACK_HOSTS.has(page.hostname)) {
    return refuse(
      "invalid_input",
      `card_page_url ${s.card_page_url}: a hosted card page is https`,
      {
        field: "card_page_url",
      },
    );
  }
  const m = s.merchant;
  return ok({
    apiKey: s.api_key,
    baseUrl: baseUrl.value,
    webhookSecret: s.webhook_secret,
    accountId: s.account_id,
    sourceAccountNumberId: s.source_account_number_id,
    cardPageUrl: page.href,
    merchant: {
      name: m.name,
      namePrefix: m.name_prefix,
      categoryCode: m.category_code,
      addressLine1: m.address_line1,
      city: m.city,
      state: m.state,
      postalCode: m.postal_code,
    },
  });
}

/** The settings as the JSON `increase:set` takes. */
export function increaseSettingsJson(settings: IncreaseSettings): Record<string, unknown> {
  const m = settings.merchant;
  return {
    api_key: settings.apiKey,
    base_url: settings.baseUrl,
    webhook_secret: settings.webhookSecret,
    account_id: settings.accountId,
    source_account_number_id: settings.sourceAccountNumberId,
    card_page_url: settings.cardPageUrl,
    merchant: {
      name: m.name,
      name_prefix: m.namePrefix,
      category_code: m.categoryCode,
      address_line1: m.addressLine1,
      city: m.city,
      state: m.state,
      postal_code: m.postalCode,
    },
  };
}

/** What `increase:show` prints: the key's last four, never the key or the webhook secret. */
export function maskedIncreaseSettings(settings: IncreaseSettings): Record<string, unknown> {
  return {
    ...increaseSettingsJson(settings),
    api_key: `…${settings.apiKey.slice(-4)}`,
    webhook_secret: "(sealed)",
  };
}
