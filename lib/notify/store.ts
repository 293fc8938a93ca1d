/**
 * Payee notifications (contract §9): each notice issues a fresh portal link (unguessable, stored
 * only as a hash, expiring) that replaces the payee's earlier links, and queues one message per
 * channel of the payee's delivery options. The test environment "sends" at once into the sandbox
 * inbox; live messages wait in the outbox for a mail/SMS provider.
 */
import { columnsOf, json, nullable, renamed, rowMapper } from "../../db/rows.ts";
import { companies, notificationResends, payees, payouts } from "../../db/schema.ts";
import type { Environment } from "../platform/config.ts";
import { newId, randomBase62, sha256Hex } from "../platform/keys.ts";
import { formatDollars } from "../platform/money.ts";
import { resendableStatuses } from "../payouts/states.ts";
import { type Language, languageOf, type RenderedMessage, renderMessage } from "./messages.ts";
import type { SqlExecutor } from "../ledger/store.ts";
import type { WriteTx } from "../../db/writer.ts";

/** 43 base62 characters carry 256 bits, above the 32 random bytes contract §9 asks for. */
const PORTAL_TOKEN_LENGTH = 43;
const HOUR_MS = 3_600_000;

export interface NotificationSettings {
  readonly environment: Environment;
  readonly baseUrl: string;
  /**
   * How long a portal link works (contract §9: default 30 days); an expired one offers a new one.
   */
  readonly linkTtlMs: number;
  /** contract §11: resends a payee may get in any hour (RESEND_PER_HOUR_MAX). */
  readonly resendsPerHourMax: number;
}

export type NotificationReason =
  | "offer"
  | "endorsement"
  | "reoffer"
  | "resend"
  | "endorsed"
  | "deadline"
  | "deadline_fallback"
  | "fallback"
  | "unclaimed_notice";

export interface PayeeNotice {
  readonly portalUrl: string;
  readonly channels: ("email" | "sms")[];
}

export interface Recipient {
  readonly email: string | null;
  readonly phone: string | null;
  readonly channels: { readonly email?: boolean; readonly sms?: boolean };
}

export interface PayoutContact {
  readonly companyId: string;
  readonly company: string;
  readonly amount: string;
  readonly firstName: string | null;
  readonly payeeName: string;
  readonly language: Language;
  readonly recipient: Recipient;
}

const payout = columnsOf(payouts);
const toContactRow = rowMapper({
  companyId: payout.companyId,
  company: renamed(columnsOf(companies).name, "company_name"),
  email: payout.email,
  phone: payout.phone,
  firstName: payout.firstName,
  lastName: payout.lastName,
  amountCents: payout.amountCents,
  channels: json<Recipient["channels"]>(payout.deliveryOptions, "object"),
  // A LEFT JOIN: a Surface A payout has no /v1 payee.
  language: nullable(columnsOf(payees).language),
});

/** Who the payee of a payout is and how to reach them, for messages. */
export async function payoutContact(
  executor: SqlExecutor,
  payoutId: string,
): Promise<PayoutContact> {
  const { rows } = await executor.execute({
    sql: `SELECT p.company_id, p.email, p.phone, p.first_name, p.last_name, p.amount_cents,
                 p.delivery_options, c.name AS company_name, y.language
            FROM payouts p JOIN companies c ON c.id = p.company_id
            LEFT JOIN payees y ON y.id = p.payee_id WHERE p.id = ?`,
    args: [payoutId],
  });
  if (!rows[0]) throw new Error(`payoutContact: no payout ${payoutId}`);
  const contact = toContactRow(rows[0]);
  return {
    companyId: contact.companyId,
    company: contact.company,
    amount: formatDollars(contact.amountCents),
    firstName: contact.firstName,
    payeeName: [contact.firstName, contact.lastName].filter(Boolean).join(" ") || "the payee",
    language: languageOf(contact.language),
    recipient: { email: contact.email, phone: contact.phone, channels: contact.channels },
  };
}

/**
 * Queues one message per channel the recipient has (and wants); the test environment "sends" at
 * once into the sandbox inbox, live messages wait in the outbox for the mail and SMS senders.
 */
export async function queueMessages(
  tx: WriteTx,
  environment: Environment,
  message: {
    readonly companyId: string;
    readonly payoutId: string;
    readonly recipient: Recipient;
    readonly rendered: RenderedMessage;
    readonly links: readonly string[];
    readonly code?: string;
  },
  now: number,
): Promise<("email" | "sms")[]> {
  const { recipient, rendered } = message;
  const targets: ["email" | "sms", string | null][] = [
    ["email", recipient.channels.email ? recipient.email : null],
    ["sms", recipient.channels.sms ? recipient.phone : null],
  ];
  const channels: ("email" | "sms")[] = [];
  const sandbox = environment === "test";
  for (const [channel, address] of targets) {
    if (!address) continue;
    channels.push(channel);
    await tx.execute({
      sql:
        `INSERT INTO notifications (id, company_id, payout_id, channel, recipient, subject, body, links, code,
              status, created_at, sent_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      args: [
        newId("ntf"),
        message.companyId,
        message.payoutId,
        channel,
        address,
        channel === "email" ? rendered.subject : null,
        channel === "email" ? rendered.email : rendered.sms,
        JSON.stringify(message.links),
        // Codes are kept in clear only where the sandbox inbox must show them.
        sandbox ? message.code ?? null : null,
        sandbox ? "sent" : "pending",
        now,
        sandbox ? now : null,
      ],
    });
  }
  return channels;
}

/** Issues a portal link (256 random bits, stored as SHA-256) and returns the token and its URL. */
export async function issuePortalLink(
  tx: WriteTx,
  settings: NotificationSettings,
  payoutId: string,
  partyUuid: string | null,
  now: number,
): Promise<string> {
  const token = randomBase62(PORTAL_TOKEN_LENGTH);
  await tx.execute({
    sql: `UPDATE portal_links SET replaced_at = ?
            WHERE payout_id = ? AND party_uuid IS ? AND replaced_at IS NULL`,
    args: [now, payoutId, partyUuid],
  });
  await tx.execute({
    sql: `INSERT INTO portal_links (id, payout_id, party_uuid, token_hash, expires_at, created_at)
            VALUES (?, ?, ?, ?, ?, ?)`,
    args: [newId("pl"), payoutId, partyUuid, await sha256Hex(token), now + settings.linkTtlMs, now],
  });
  return `${settings.baseUrl}/portal/${token}`;
}

/** Issues a new portal link for the payout's payee and queues its messages, in the caller's unit. */
export async function notifyPayee(
  tx: WriteTx,
  settings: NotificationSettings,
  payoutId: string,
  reason: NotificationReason,
  now: number,
  options: {
    /** Every channel the payee has an address for, whatever they asked for (an escalation). */
    readonly everyChannel?: boolean;
    readonly payBy?: string;
  } = {},
): Promise<PayeeNotice> {
  const contact = await payoutContact(tx, payoutId);
  const portalUrl = await issuePortalLink(tx, settings, payoutId, null, now);
  const recipient = options.everyChannel
    ? { ...contact.recipient, channels: { email: true, sms: true } }
    : contact.recipient;
  const channels = await queueMessages(tx, settings.environment, {
    companyId: contact.companyId,
    payoutId,
    recipient,
    rendered: renderMessage(reason, contact.language, {
      ...contact,
      link: portalUrl,
      payBy: options.payBy,
    }),
    links: [portalUrl],
  }, now);
  return { portalUrl, channels };
}

/**
 * Whether the payout's payee was ever sent a notice: every notice issues a payee link (a party's
 * links carry its party_uuid), so this reads one indexed row.
 */
export async function payeeWasNotified(executor: SqlExecutor, payoutId: string): Promise<boolean> {
  const { rows } = await executor.execute({
    sql: "SELECT 1 FROM portal_links WHERE payout_id = ? AND party_uuid IS NULL LIMIT 1",
    args: [payoutId],
  });
  return rows.length > 0;
}

const toResend = rowMapper({ requestedAt: columnsOf(notificationResends).requestedAt });
const toPayoutStatus = rowMapper({ status: payout.status });

/**
 * Counts a resend against the payee's hourly allowance (real time, like every rate limit) and
 * records it; refused with the seconds until the oldest resend in the window leaves it.
 */
export async function claimResend(
  tx: WriteTx,
  payoutId: string,
  allowance: { realNow: number; resendsPerHourMax: number },
): Promise<{ ok: true } | { ok: false; retryAfterSeconds: number }> {
  const { realNow } = allowance;
  const { rows } = await tx.execute({
    sql: `SELECT requested_at FROM notification_resends
            WHERE payout_id = ? AND requested_at > ? ORDER BY requested_at`,
    args: [payoutId, realNow - HOUR_MS],
  });
  if (rows.length >= allowance.resendsPerHourMax) {
    const oldest = toResend(rows[0]).requestedAt;
    return {
      ok: false,
      retryAfterSeconds: Math.max(1, Math.ceil((oldest + HOUR_MS - realNow) / 1000)),
    };
  }
  await tx.execute({
    sql: "INSERT INTO notification_resends (id, payout_id, requested_at) VALUES (?, ?, ?)",
    args: [newId("rsn"), payoutId, realNow],
  });
  return { ok: true };
}

/**
 * A fresh link to the payee at their own request (portal, payee_url), within the hourly resend
 * allowance and only while the payout can still be acted on or followed.
 */
export async function resendPayeeLink(
  tx: WriteTx,
  settings: NotificationSettings,
  payoutId: string,
  times: { realNow: number; domainNow: number },
): Promise<"sent" | "rate_limited" | "closed"> {
  const { rows } = await tx.execute({
    sql: "SELECT status FROM payouts WHERE id = ?",
    args: [payoutId],
  });
  if (!rows[0] || !resendableStatuses.has(toPayoutStatus(rows[0]).status)) return "closed";
  const allowance = await claimResend(tx, payoutId, {
    realNow: times.realNow,
    resendsPerHourMax: settings.resendsPerHourMax,
  });
  if (!allowance.ok) return "rate_limited";
  await notifyPayee(tx, settings, payoutId, "resend", times.domainNow);
  return "sent";
}
