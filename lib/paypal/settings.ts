/**
 * A company's PayPal Payouts settings (pure rules): the REST app's client id and secret, the API
 * host (PayPal's of the environment, lib/rails/provider_base_url.ts), and the id of the webhook
 * PayPal signs its notices for.
 */
import * as v from "valibot";
import { ok, refuse, type Result } from "../platform/result.ts";
import { checkProviderBaseUrl, type ProviderHosts } from "../rails/provider_base_url.ts";

/** PayPal's hosts (developer.paypal.com, "REST API"): live and sandbox. */
export const PAYPAL_LIVE_BASE_URL = "https://api-m.paypal.com";
export const PAYPAL_SANDBOX_BASE_URL = "https://api-m.sandbox.paypal.com";

/** Longest client id, secret or webhook id taken (PayPal's are 80 characters or fewer). */
export const CREDENTIAL_LENGTH_MAX = 256;

export interface PaypalSettings {
  readonly clientId: string;
  readonly clientSecret: string;
  /** The API host, no trailing slash: PayPal's, or a loopback contract server in tests. */
  readonly baseUrl: string;
  /** The webhook id of the app, given to verify-webhook-signature. */
  readonly webhookId: string;
}

const credential = (name: string) =>
  v.pipe(
    v.string(`${name} must be a string`),
    v.check(
      (value) => /^[A-Za-z0-9_.\-]+$/.test(value) && value.length <= CREDENTIAL_LENGTH_MAX,
      `${name}: 1 to ${CREDENTIAL_LENGTH_MAX} letters, digits, '-', '_' or '.'`,
    ),
  );

const settingsInput = v.strictObject({
  client_id: credential("client_id"),
  client_secret: credential("client_secret"),
  base_url: v.pipe(v.string("base_url must be a string"), v.url("base_url must be a URL")),
  webhook_id: credential("webhook_id"),
});

function invalid(field: string, message: string) {
  return refuse("invalid_input", message.startsWith(field) ? message : `${field}: ${message}`, {
    field,
  });
}

const PAYPAL_HOSTS: ProviderHosts = {
  name: "PayPal",
  live: PAYPAL_LIVE_BASE_URL,
  sandbox: PAYPAL_SANDBOX_BASE_URL,
};

/** Checks settings given as JSON (`paypal:set --file`), naming the first wrong field. */
export function checkPaypalSettings(
  input: unknown,
  environment: "test" | "live",
): Result<PaypalSettings, "invalid_input"> {
  const parsed = v.safeParse(settingsInput, input);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const field = issue.path?.map((item) => String(item.key)).join(".") || "settings";
    return invalid(field, issue.message);
  }
  const s = parsed.output;
  const baseUrl = checkProviderBaseUrl(s.base_url, environment, PAYPAL_HOSTS);
  if (!baseUrl.ok) return baseUrl;
  return ok({
    clientId: s.client_id,
    clientSecret: s.client_secret,
    baseUrl: baseUrl.value,
    webhookId: s.webhook_id,
  });
}

/** The settings as the JSON `paypal:set` takes. */
export function paypalSettingsJson(settings: PaypalSettings): Record<string, string> {
  return {
    client_id: settings.clientId,
    client_secret: settings.clientSecret,
    base_url: settings.baseUrl,
    webhook_id: settings.webhookId,
  };
}

/** What `paypal:show` prints: the client id's last four, never the secret. */
export function maskedPaypalSettings(settings: PaypalSettings): Record<string, string> {
  return {
    client_id: `…${settings.clientId.slice(-4)}`,
    client_secret: "(sealed)",
    base_url: settings.baseUrl,
    webhook_id: settings.webhookId,
  };
}
