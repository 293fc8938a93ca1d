/**
 * Checks mailed by Lob, the pure rules: which Lob mail type and extra service a postage code is
 * mailed with (or why Lob cannot mail it), what each of Lob's check events means for the check and
 * its payout, and Lob's webhook signature.
 */
import { ok, refuse, type Result } from "../platform/result.ts";

/** How Lob mails a check: its `mail_type` and `extra_service` (null: none). */
export interface LobPostage {
  readonly mailType: "usps_first_class";
  readonly extraService: "certified" | "certified_return_receipt" | "registered" | null;
}

/**
 * The postage codes Lob can mail a check with. Lob mails checks First-Class only (no Priority
 * Mail, courier or Express); a signature at delivery is its certified mail with return receipt.
 */
export const LOB_POSTAGE: Readonly<Record<string, LobPostage>> = {
  FC: { mailType: "usps_first_class", extraService: null },
  PRS: { mailType: "usps_first_class", extraService: "certified_return_receipt" },
};

/** Why each code Lob cannot mail is refused. */
const NOT_MAILED: Readonly<Record<string, string>> = {
  PR: "Lob mails checks First-Class only, not Priority Mail",
  SC: "Lob does not send checks by courier",
  FSO: "Lob does not send checks by courier",
  USPSIDAY: "Lob mails checks First-Class only, not Priority Mail Express",
};

/** The codes a payee may pick when Lob mails the company's checks. */
export const LOB_POSTAGE_CODES: readonly string[] = Object.keys(LOB_POSTAGE);

/** How a postage code is mailed through Lob, or why it cannot be. */
export function lobPostageOf(code: string): Result<LobPostage, "postage_not_mailable"> {
  const postage = LOB_POSTAGE[code];
  if (postage) return ok(postage);
  return refuse(
    "postage_not_mailable",
    `check_postage_type ${code}: ${
      NOT_MAILED[code] ?? "not a postage code"
    }; this company's checks are mailed by Lob, which takes ${LOB_POSTAGE_CODES.join(" or ")}`,
    { field: "check_postage_type" },
  );
}

/** Lob's error code for an address its deliverability check finds undeliverable. */
export const LOB_UNDELIVERABLE_CODE = "failed_deliverability_strictness";

/**
 * Whether Lob refused a check for its payee's address (undeliverable, or a `to` field it does not
 * take): only that check is voided and its payee asked again. Any other refusal (the bank
 * account, the return address, the key) is the company's settings and stops the whole file.
 */
export function refusedForAddress(
  refusal: { readonly status: number; readonly code: string | null; readonly message: string },
): boolean {
  if (refusal.status !== 422) return false;
  return refusal.code === LOB_UNDELIVERABLE_CODE || /^to\.\w+/.test(refusal.message);
}

/** What one of Lob's check events does here. */
export type MailEventEffect =
  /** A step of the mail piece, shown on the payout's timeline. */
  | "track"
  /** The post office returned it: the check is voided and its payout fails and is offered again. */
  | "returned"
  /** Canceled before it was mailed: the check is voided in the register. */
  | "canceled"
  /** Nothing to record (Lob's own rendering steps). */
  | "ignore";

/** Lob's check events (docs.lob.com, "Events") and what each does here. */
export const LOB_CHECK_EVENTS: Readonly<Record<string, MailEventEffect>> = {
  "check.created": "track",
  "check.mailed": "track",
  "check.in_transit": "track",
  "check.in_local_area": "track",
  "check.processed_for_delivery": "track",
  "check.re-routed": "track",
  "check.delivered": "track",
  "check.returned_to_sender": "returned",
  "check.deleted": "canceled",
  /** Ours: Lob refused our cancel (the check was already in production); it will be mailed. */
  "check.cancel_refused": "track",
  "check.rendered_pdf": "ignore",
  "check.rendered_thumbnails": "ignore",
};

/** The event a tracking event of a check object stands for (`In Local Area` → `check.in_local_area`). */
export function eventTypeOfTracking(name: string): string {
  return `check.${
    name.trim().toLowerCase().replaceAll(" ", "_").replace("re_routed", "re-routed")
  }`;
}

/** How the payout's timeline says an event. */
export function mailEventText(type: string): string {
  return `mail: ${type.replace(/^check\./, "").replaceAll("_", " ")}`;
}

/** Lob's webhook headers. */
export interface LobWebhookHeaders {
  readonly signature: string | null;
  readonly timestamp: string | null;
}

/** How far a signature's timestamp may be from now. */
export const LOB_SIGNATURE_TOLERANCE_MS = 5 * 60_000;

/** A timestamp in seconds or milliseconds, as milliseconds. */
const timestampMs = (text: string) => {
  const value = Number(text);
  return value > 1e12 ? value : value * 1000;
};

/**
 * Whether Lob signed this body: `Lob-Signature` is the hex HMAC-SHA256, under the webhook's
 * secret, of `<Lob-Signature-Timestamp>.<raw body>`, and the timestamp is within five minutes.
 * WebCrypto's HMAC (its verify compares in constant time), not Node's: this module is on the
 * service's start path, where `node:crypto` would load Deno's Node compatibility layer.
 */
export async function lobSigned(
  secret: string,
  headers: LobWebhookHeaders,
  body: string,
  now: number,
): Promise<boolean> {
  if (headers.signature === null || headers.timestamp === null) return false;
  if (!/^\d{1,16}$/.test(headers.timestamp)) return false;
  if (Math.abs(now - timestampMs(headers.timestamp)) > LOB_SIGNATURE_TOLERANCE_MS) return false;
  if (!/^[0-9a-fA-F]{64}$/.test(headers.signature)) return false;
  const given = new Uint8Array(32);
  for (let i = 0; i < 32; i++) given[i] = parseInt(headers.signature.slice(2 * i, 2 * i + 2), 16);
  const encoder = new TextEncoder();
  const key = await crypto.subtle.importKey(
    "raw",
    encoder.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["verify"],
  );
  return await crypto.subtle.verify(
    "HMAC",
    key,
    given,
    encoder.encode(`${headers.timestamp}.${body}`),
  );
}
