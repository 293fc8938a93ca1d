/**
 * A company's Lob settings (pure rules): the API key (`test_…` in the test environment, `live_…`
 * in live), the API host (Lob's, or a loopback contract server), the secret Lob signs its webhooks
 * with, the Lob bank account the checks are drawn on (the company's check account, verified at
 * Lob) and the return address, and who mails the company's postal checks: Lob (`provider`) or the
 * company itself from the print file (`self`).
 */
import * as v from "valibot";
import { ok, refuse, type Result } from "../platform/result.ts";
import { settingsInputRefusal } from "../platform/settings_input.ts";

/** Lob's API host, the same for test and live keys (docs.lob.com, "Authentication"). */
export const LOB_HOST = "https://api.lob.com";

const CREDENTIAL_LENGTH_MAX = 256;
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

export type LobMailing = "provider" | "self";

export interface LobSettings {
  readonly apiKey: string;
  /** The API host, no trailing slash. */
  readonly baseUrl: string;
  readonly webhookSecret: string;
  /** Lob's id of the company's check account (`bank_…`), verified at Lob. */
  readonly bankAccount: string;
  /** Lob's id of the return address printed on the envelope (`adr_…`). */
  readonly fromAddress: string;
  readonly mailing: LobMailing;
}

const credential = (name: string, pattern: RegExp, hint: string) =>
  v.pipe(
    v.string(`${name} must be a string`),
    v.regex(pattern, `${name}: ${hint}`),
    v.maxLength(CREDENTIAL_LENGTH_MAX, `${name}: at most ${CREDENTIAL_LENGTH_MAX} characters`),
  );

const settingsInput = v.strictObject({
  api_key: credential(
    "api_key",
    /^(test|live)_[A-Za-z0-9]+$/,
    "test_ or live_ and letters or digits",
  ),
  base_url: v.optional(
    v.pipe(v.string("base_url must be a string"), v.url("base_url must be a URL")),
    LOB_HOST,
  ),
  webhook_secret: credential(
    "webhook_secret",
    /^[\x21-\x7e]{16,}$/,
    "at least 16 printable characters",
  ),
  bank_account: credential("bank_account", /^bank_[A-Za-z0-9]+$/, "Lob's bank account id, bank_…"),
  from_address: credential("from_address", /^adr_[A-Za-z0-9]+$/, "Lob's address id, adr_…"),
  mailing: v.optional(v.picklist(["provider", "self"], "mailing: provider or self"), "provider"),
});

/** Checks settings given as JSON (`lob:set --file`), naming the first wrong field. */
export function checkLobSettings(
  input: unknown,
  environment: "test" | "live",
): Result<LobSettings, "invalid_input"> {
  const parsed = v.safeParse(settingsInput, input);
  if (!parsed.success) return settingsInputRefusal(parsed.issues);
  const s = parsed.output;
  // One host serves both: the key's prefix is what keeps test mail unprinted and live mail real.
  const prefix = environment === "live" ? "live_" : "test_";
  if (!s.api_key.startsWith(prefix)) {
    return refuse(
      "invalid_input",
      `api_key: ${environment} takes Lob's ${prefix} key, got a ${s.api_key.split("_")[0]}_ key`,
      { field: "api_key" },
    );
  }
  const url = new URL(s.base_url);
  const base = `${url.protocol}//${url.host}`;
  const onlyHost = url.pathname === "/" && url.search === "" && url.hash === "";
  if (!onlyHost || (!LOOPBACK_HOSTS.has(url.hostname) && base !== LOB_HOST)) {
    return refuse(
      "invalid_input",
      `base_url ${JSON.stringify(s.base_url)}: Lob is ${LOB_HOST} (a loopback server in tests)`,
      { field: "base_url" },
    );
  }
  return ok({
    apiKey: s.api_key,
    baseUrl: base,
    webhookSecret: s.webhook_secret,
    bankAccount: s.bank_account,
    fromAddress: s.from_address,
    mailing: s.mailing,
  });
}

/** The settings as the JSON `lob:set` takes. */
export function lobSettingsJson(settings: LobSettings): Record<string, unknown> {
  return {
    api_key: settings.apiKey,
    base_url: settings.baseUrl,
    webhook_secret: settings.webhookSecret,
    bank_account: settings.bankAccount,
    from_address: settings.fromAddress,
    mailing: settings.mailing,
  };
}

/** What `lob:show` prints: the key's last four, never the key or the webhook secret. */
export function maskedLobSettings(settings: LobSettings): Record<string, unknown> {
  return {
    api_key: `…${settings.apiKey.slice(-4)}`,
    base_url: settings.baseUrl,
    webhook_secret: "(sealed)",
    bank_account: settings.bankAccount,
    from_address: settings.fromAddress,
    mailing: settings.mailing,
  };
}
