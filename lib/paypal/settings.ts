/**
 * A company's PayPal Payouts settings (pure rules): the REST app's client id and secret, the API
 * host, and the id of the webhook PayPal signs its notices for. The test environment never talks
 * to PayPal's live host and live never to its sandbox host, so a settings file cannot move real
 * money from the sandbox nor pretend to pay in live.
 */
import * as v from "valibot";
import { ok, refuse, type Result } from "../platform/result.ts";

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

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

function invalid(field: string, message: string) {
  return refuse("invalid_input", message.startsWith(field) ? message : `${field}: ${message}`, {
    field,
  });
}

/** PayPal's host of each environment, and the other one it must not be given. */
const PAYPAL_HOSTS = {
  test: {
    other: PAYPAL_LIVE_BASE_URL,
    otherName: "PayPal's live host",
    uses: `the test environment uses ${PAYPAL_SANDBOX_BASE_URL}`,
  },
  live: {
    other: PAYPAL_SANDBOX_BASE_URL,
    otherName: "PayPal's sandbox host",
    uses: `live uses ${PAYPAL_LIVE_BASE_URL}`,
  },
} as const;

/** The base URL's rule in an environment: PayPal's host of that environment, or a loopback server. */
function checkBaseUrl(raw: string, environment: "test" | "live"): Result<string, "invalid_input"> {
  const url = new URL(raw);
  const base = `${url.protocol}//${url.host}`;
  if (url.pathname !== "/" || url.search !== "" || url.hash !== "") {
    return invalid("base_url", `base_url ${JSON.stringify(raw)}: the host only, without a path`);
  }
  // A loopback server (the contract test server) speaks plain HTTP; nothing else may.
  if (LOOPBACK_HOSTS.has(url.hostname)) return ok(base);
  if (url.protocol !== "https:") {
    return invalid("base_url", `base_url ${JSON.stringify(raw)}: PayPal is reached over https`);
  }
  const hosts = PAYPAL_HOSTS[environment];
  if (base === hosts.other) {
    return invalid("base_url", `base_url ${base} is ${hosts.otherName}: ${hosts.uses}`);
  }
  return ok(base);
}

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
  const baseUrl = checkBaseUrl(s.base_url, environment);
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
