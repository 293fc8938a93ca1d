/**
 * Digital checks (issue 19): the payee prints or deposits their own check. They reach its PDF by a
 * signed, expiring link (on the portal's status page and in the notification sent when the check
 * is ready); the link names the check, its environment and an expiry, authenticated by an HMAC
 * under ENCRYPTION_KEY, so the route that serves it needs no session. The PDF is rendered from
 * the stored register row each time, so asking again gives the same check with the same number
 * (never a second number). It is served only once the check is in a positive-pay file that was
 * transmitted or marked sent: before, the bank could not honour it, and the payee is told it is
 * not ready yet. A voided or stale check is never served again.
 */
import type { Database } from "../../db/client.ts";
import type { SqlReader, WriteTx } from "../../db/writer.ts";
import type { Environment } from "../platform/config.ts";
import type { SecretBox } from "../platform/crypto.ts";
import { constantTimeEqual } from "../platform/keys.ts";
import { formatDollars } from "../platform/money.ts";
import { renderMessage } from "../notify/messages.ts";
import { type NotificationSettings, payoutContact, queueMessages } from "../notify/store.ts";
import { addressLinesOf, buildPrintFile, type PrintableCheck } from "./print.ts";
import { type CheckRecord, latestCheckOfPayout, loadCheck } from "./register.ts";
import { readCheckSettings } from "./settings_store.ts";

/** The HMAC purpose of digital check links: no other link or token shares its key. */
const LINK_PURPOSE = "digital-check-link";

/** What a link is made with: the environment, the service's public URL and how long it works. */
export interface DigitalCheckLinkSettings {
  readonly environment: Environment;
  readonly baseUrl: string;
  /** The portal link lifetime (PORTAL_LINK_TTL): a new one comes with each status page. */
  readonly linkTtlMs: number;
}

const linkMessage = (environment: Environment, checkId: string, expires: number) =>
  `${environment}.${checkId}.${expires}`;

/** The path of a digital check's PDF; the route is mounted at /checks. */
export const digitalCheckPath = (environment: Environment, checkId: string) =>
  `/checks/${environment}/digital/${encodeURIComponent(checkId)}`;

/** A signed link to check `checkId`'s PDF, valid until `now + linkTtlMs`. */
export async function digitalCheckLink(
  secretBox: SecretBox,
  settings: DigitalCheckLinkSettings,
  checkId: string,
  now: number,
): Promise<string> {
  const expires = Math.floor((now + settings.linkTtlMs) / 1000);
  const signature = await secretBox.mac(
    LINK_PURPOSE,
    linkMessage(settings.environment, checkId, expires),
  );
  return `${settings.baseUrl}${
    digitalCheckPath(settings.environment, checkId)
  }?expires=${expires}&signature=${signature}`;
}

/** Whether a link's parts were signed here (`invalid` when not), and whether it still works. */
export async function verifyDigitalCheckLink(
  secretBox: SecretBox,
  link: {
    environment: Environment;
    checkId: string;
    expires: string | undefined;
    signature: string | undefined;
  },
  now: number,
): Promise<"valid" | "expired" | "invalid"> {
  const { expires, signature } = link;
  if (!expires || !signature || !/^\d{1,12}$/.test(expires)) return "invalid";
  const expected = await secretBox.mac(
    LINK_PURPOSE,
    linkMessage(link.environment, link.checkId, Number(expires)),
  );
  if (!constantTimeEqual(expected, signature)) return "invalid";
  return Number(expires) * 1000 <= now ? "expired" : "valid";
}

/** Whether the positive-pay file that told the bank of the check was transmitted or marked sent. */
export async function issueFileSent(reader: SqlReader, check: CheckRecord): Promise<boolean> {
  if (check.issueFileId === null) return false;
  const { rows } = await reader.execute({
    sql: "SELECT status FROM rail_batches WHERE id = ?",
    args: [check.issueFileId],
  });
  return rows[0]?.status === "transmitted";
}

/** What the link's route answers. */
export type DigitalCheckAnswer =
  | { readonly kind: "pdf"; readonly checkNumber: number; readonly bytes: Uint8Array }
  | { readonly kind: "not_ready"; readonly checkNumber: number }
  | { readonly kind: "void"; readonly checkNumber: number; readonly status: "voided" | "stale" }
  | { readonly kind: "paid"; readonly checkNumber: number; readonly paidDate: string | null }
  | { readonly kind: "not_found" };

export interface DigitalCheckDeps {
  readonly database: Database;
  readonly environment: Environment;
  readonly secretBox: SecretBox;
  /** The MICR font read at start (CHECK_MICR_FONT), or null: the PDF says "not negotiable". */
  readonly micrFont: Uint8Array | null;
}

/** The PDF of a digital check, or why it is not served now. */
export async function digitalCheckPdf(
  deps: DigitalCheckDeps,
  checkId: string,
): Promise<DigitalCheckAnswer> {
  const reader = deps.database.readClient;
  const check = await loadCheck(reader, checkId);
  if (!check || check.kind !== "digital") return { kind: "not_found" };
  if (check.status === "voided" || check.status === "stale") {
    return { kind: "void", checkNumber: check.checkNumber, status: check.status };
  }
  // A paid check has done its work: its image must not be printed and deposited again.
  if (check.status === "paid") {
    return { kind: "paid", checkNumber: check.checkNumber, paidDate: check.paidDate };
  }
  if (!await issueFileSent(reader, check)) {
    return { kind: "not_ready", checkNumber: check.checkNumber };
  }
  const settings = await readCheckSettings(
    reader,
    deps.secretBox,
    deps.environment,
    check.companyId,
  );
  if (!settings) {
    throw new Error(`company ${check.companyId} issued a check without a check account`);
  }
  const account = settings.account;
  const bytes = await buildPrintFile({
    payer: {
      name: account.payerName,
      addressLines: account.payerAddress,
      routingNumber: account.routingNumber,
      accountNumber: account.accountNumber,
    },
    checks: [await printableCheckOf(reader, check)],
    micrFontBytes: deps.micrFont,
  });
  return { kind: "pdf", checkNumber: check.checkNumber, bytes };
}

/** A register row as a check to print, with the payee's address as the print file has it. */
export async function printableCheckOf(
  reader: SqlReader,
  check: CheckRecord,
): Promise<PrintableCheck> {
  const { rows } = await reader.execute({
    sql: `SELECT method_details, address_one, address_two, city, state, zip_code
          FROM payouts WHERE id = ?`,
    args: [check.payoutId],
  });
  return {
    checkNumber: check.checkNumber,
    amountCents: check.amountCents,
    payeeName: check.payeeName,
    payeeAddressLines: rows[0] ? addressLinesOf(rows[0]) : [],
    issueDate: check.issueDate,
    memo: check.memo,
    postageCode: check.postageCode,
  };
}

/** A payout's digital check as its status page shows it: number, link, and whether it works yet. */
export interface PayoutDigitalCheck {
  readonly checkNumber: number;
  readonly status: CheckRecord["status"];
  readonly ready: boolean;
  /** Null for a voided or stale check: it is never served again. */
  readonly url: string | null;
}

/** The digital check of the payout's latest submission, with a fresh link; null when none. */
export async function payoutDigitalCheck(
  reader: SqlReader,
  secretBox: SecretBox,
  settings: DigitalCheckLinkSettings,
  payoutId: string,
  now: number,
): Promise<PayoutDigitalCheck | null> {
  const check = await latestCheckOfPayout(reader, payoutId);
  if (!check || check.kind !== "digital") return null;
  const usable = check.status === "issued" || check.status === "paid";
  return {
    checkNumber: check.checkNumber,
    status: check.status,
    ready: usable && await issueFileSent(reader, check),
    url: usable ? await digitalCheckLink(secretBox, settings, check.id, now) : null,
  };
}

/**
 * Tells the payee their digital check is ready, in the caller's unit (the one that records its
 * positive-pay file sent): the message carries the check number and the signed link.
 */
export async function tellPayeeDigitalCheckReady(
  tx: WriteTx,
  deps: { readonly secretBox: SecretBox; readonly notifications: NotificationSettings },
  checkId: string,
  now: number,
): Promise<void> {
  const check = await loadCheck(tx, checkId);
  if (!check || check.kind !== "digital") return;
  const contact = await payoutContact(tx, check.payoutId);
  const link = await digitalCheckLink(deps.secretBox, deps.notifications, check.id, now);
  await queueMessages(tx, deps.notifications.environment, {
    companyId: check.companyId,
    payoutId: check.payoutId,
    recipient: contact.recipient,
    rendered: renderMessage("digital_check", contact.language, {
      ...contact,
      amount: formatDollars(check.amountCents),
      link,
      checkNumber: check.checkNumber,
    }),
    links: [link],
  }, now);
}
