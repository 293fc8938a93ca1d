/**
 * Payee notifications (DESIGN 9): each notice issues a fresh portal link (unguessable, stored only
 * as a hash, expiring) that replaces the payee's earlier links, and queues one message per channel
 * of the payee's delivery options. The test environment "sends" at once into the sandbox inbox;
 * live messages wait in the outbox for a mail/SMS provider.
 */
import type { Environment } from "../lib/config.ts";
import { newId, randomBase62, sha256Hex } from "../lib/keys.ts";
import { centsToDollars } from "../lib/money.ts";
import type { SqlExecutor } from "./ledger_store.ts";
import type { WriteTx } from "./writer.ts";

/** 43 base62 characters carry 256 bits, above DESIGN 9's 32 random bytes. */
const PORTAL_TOKEN_LENGTH = 43;
/** DESIGN 11: at most this many resends per payee in any hour. */
export const RESENDS_PER_HOUR = 5;
const HOUR_MS = 3_600_000;

export interface NotificationSettings {
  readonly environment: Environment;
  readonly baseUrl: string;
  /** Links live as long as an offer: the payee can act until the offer would expire. */
  readonly linkTtlMs: number;
}

export type NotificationReason = "offer" | "endorsement" | "reoffer" | "resend";

export interface PayeeNotice {
  readonly portalUrl: string;
  readonly channels: ("email" | "sms")[];
}

const subjects: Record<NotificationReason, (company: string) => string> = {
  offer: (company) => `${company} has a payment for you`,
  reoffer: (company) => `${company}: please choose another way to be paid`,
  endorsement: (company) => `${company} has a payment for you that needs approval`,
  resend: (company) => `Reminder: ${company} has a payment for you`,
};

/** Issues a new portal link for the payout's payee and queues its messages, in the caller's unit. */
export async function notifyPayee(
  tx: WriteTx,
  settings: NotificationSettings,
  payoutId: string,
  reason: NotificationReason,
  now: number,
): Promise<PayeeNotice> {
  const { rows } = await tx.execute({
    sql: `SELECT p.company_id, p.email, p.phone, p.first_name, p.amount_cents, p.delivery_options,
                 c.name AS company_name
            FROM payouts p JOIN companies c ON c.id = p.company_id WHERE p.id = ?`,
    args: [payoutId],
  });
  const payout = rows[0];
  if (!payout) throw new Error(`notifyPayee: no payout ${payoutId}`);
  const token = randomBase62(PORTAL_TOKEN_LENGTH);
  const linkId = newId("pl");
  await tx.execute({
    sql: `UPDATE portal_links SET replaced_at = ?
            WHERE payout_id = ? AND party_uuid IS NULL AND replaced_at IS NULL`,
    args: [now, payoutId],
  });
  await tx.execute({
    sql: `INSERT INTO portal_links (id, payout_id, token_hash, expires_at, created_at)
            VALUES (?, ?, ?, ?, ?)`,
    args: [linkId, payoutId, await sha256Hex(token), now + settings.linkTtlMs, now],
  });
  const portalUrl = `${settings.baseUrl}/portal/${token}`;
  const options = JSON.parse(String(payout.delivery_options)) as { email?: boolean; sms?: boolean };
  const company = String(payout.company_name);
  const amount = centsToDollars(Number(payout.amount_cents)).toFixed(2);
  const greeting = payout.first_name ? `Hello ${payout.first_name},` : "Hello,";
  const recipients: ["email" | "sms", unknown][] = [
    ["email", options.email ? payout.email : null],
    ["sms", options.sms ? payout.phone : null],
  ];
  const channels: ("email" | "sms")[] = [];
  for (const [channel, recipient] of recipients) {
    if (!recipient) continue;
    channels.push(channel);
    const body = channel === "email"
      ? `${greeting}\n\n${company} is paying you $${amount}. Choose how you want to be paid:\n${portalUrl}\n\nThis link is personal; do not share it.`
      : `${company} is paying you $${amount}. Choose how to be paid: ${portalUrl}`;
    const sandbox = settings.environment === "test";
    await tx.execute({
      sql:
        `INSERT INTO notifications (id, company_id, payout_id, channel, recipient, subject, body, links, status,
              created_at, sent_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      args: [
        newId("ntf"),
        String(payout.company_id),
        payoutId,
        channel,
        String(recipient),
        channel === "email" ? subjects[reason](company) : null,
        body,
        JSON.stringify([portalUrl]),
        sandbox ? "sent" : "pending",
        now,
        sandbox ? now : null,
      ],
    });
  }
  return { portalUrl, channels };
}

/**
 * Counts a resend against the payee's hourly allowance (real time, like every rate limit) and
 * records it; refused with the seconds until the oldest resend in the window leaves it.
 */
export async function claimResend(
  tx: WriteTx,
  payoutId: string,
  realNow: number,
): Promise<{ ok: true } | { ok: false; retryAfterSeconds: number }> {
  const { rows } = await tx.execute({
    sql: `SELECT requested_at FROM notification_resends
            WHERE payout_id = ? AND requested_at > ? ORDER BY requested_at`,
    args: [payoutId, realNow - HOUR_MS],
  });
  if (rows.length >= RESENDS_PER_HOUR) {
    const oldest = Number(rows[0].requested_at);
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

/** The payout whose live (not replaced, not expired) portal link has this token, or null. */
export async function findPortalLink(
  executor: SqlExecutor,
  token: string,
  now: number,
): Promise<{ linkId: string; payoutId: string } | null> {
  const { rows } = await executor.execute({
    sql: `SELECT id, payout_id FROM portal_links
            WHERE token_hash = ? AND replaced_at IS NULL AND expires_at > ?`,
    args: [await sha256Hex(token), now],
  });
  return rows[0] ? { linkId: String(rows[0].id), payoutId: String(rows[0].payout_id) } : null;
}
