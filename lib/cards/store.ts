/**
 * The virtual card rail's tables: the sealed Lithic settings of each company, the card issued for
 * each submission (virtual_cards) and the verified webhook notices (lithic_notices).
 */
import type { SqlReader, WriteTx } from "../../db/writer.ts";
import type { SecretBox } from "../platform/crypto.ts";
import { sealedSettingsStore } from "../rails/sealed_settings_store.ts";
import { type ProviderReach, providerReach } from "../rails/provider_reach.ts";
import type { LithicReach } from "./client.ts";
import type { LithicSettings } from "./settings.ts";
import type { SandboxLithic } from "./sandbox_lithic.ts";

/** Lithic settings at rest, sealed per company in each environment's database. */
export const lithicSettingsStore = sealedSettingsStore<LithicSettings>("lithic_settings", "Lithic");

/**
 * How each company reaches Lithic: with its own settings when it has them, else through `sandbox`
 * (the sandbox's Lithic, which the composition root binds in test); without either it does not,
 * and is not paid by card.
 */
export function lithicReachOf(
  secretBox: SecretBox,
  sandbox: SandboxLithic | null,
): ProviderReach<LithicReach> {
  return providerReach(
    {
      read: (reader, companyId) => lithicSettingsStore.read(reader, secretBox, companyId),
      has: (reader, companyId) => lithicSettingsStore.has(reader, companyId),
    },
    (settings) => ({ settings }),
    sandbox && ((companyId) => sandbox.reach(companyId)),
  );
}

/** The kinds of the rail's jobs. */
export const CARD_JOBS = {
  /** Reads a card from Lithic and acts on it (completion, its close at expiry, its balance back). */
  check: "card.check",
  /** The sandbox's Lithic: its payee spends a card, and Lithic's webhook tells the service. */
  sandboxPurchase: "card.sandbox_purchase",
  /** The sandbox's Lithic: a card's state changed, and Lithic's `card.updated` tells the service. */
  sandboxUpdate: "card.sandbox_update",
} as const;

/** A card as we keep it. */
export interface VirtualCardRow {
  readonly reference: string;
  readonly payoutId: string;
  readonly companyId: string;
  readonly cardToken: string;
  readonly lastFour: string;
  readonly spendLimitCents: number;
  readonly expiresAt: number;
  readonly state: string;
  readonly spentCents: number | null;
  readonly reclaimedCents: number | null;
}

const COLUMNS = `reference, payout_id, company_id, card_token, last_four, spend_limit_cents,
  expires_at, state, spent_cents, reclaimed_cents`;

function cardOf(row: Record<string, unknown>): VirtualCardRow {
  return {
    reference: String(row.reference),
    payoutId: String(row.payout_id),
    companyId: String(row.company_id),
    cardToken: String(row.card_token),
    lastFour: String(row.last_four),
    spendLimitCents: Number(row.spend_limit_cents),
    expiresAt: Number(row.expires_at),
    state: String(row.state),
    spentCents: row.spent_cents == null ? null : Number(row.spent_cents),
    reclaimedCents: row.reclaimed_cents == null ? null : Number(row.reclaimed_cents),
  };
}

/** Keeps the card issued for a submission (once: a second answer of the same card is the same row). */
export async function insertVirtualCard(
  tx: WriteTx,
  card: Omit<VirtualCardRow, "spentCents" | "reclaimedCents">,
  now: number,
): Promise<void> {
  await tx.execute({
    sql: `INSERT INTO virtual_cards (reference, payout_id, company_id, card_token, last_four,
            spend_limit_cents, expires_at, state, checked_at, created_at)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (reference) DO NOTHING`,
    args: [
      card.reference,
      card.payoutId,
      card.companyId,
      card.cardToken,
      card.lastFour,
      card.spendLimitCents,
      card.expiresAt,
      card.state,
      now,
      now,
    ],
  });
}

export async function findVirtualCard(
  reader: SqlReader,
  cardToken: string,
): Promise<VirtualCardRow | null> {
  const { rows } = await reader.execute({
    sql: `SELECT ${COLUMNS} FROM virtual_cards WHERE card_token = ?`,
    args: [cardToken],
  });
  return rows[0] ? cardOf(rows[0]) : null;
}

/** The card of the payout's latest submission, or null. */
export async function cardOfPayout(
  reader: SqlReader,
  payoutId: string,
): Promise<VirtualCardRow | null> {
  const { rows } = await reader.execute({
    sql: `SELECT ${COLUMNS} FROM virtual_cards WHERE payout_id = ?
          ORDER BY created_at DESC, reference DESC LIMIT 1`,
    args: [payoutId],
  });
  return rows[0] ? cardOf(rows[0]) : null;
}

/** Keeps the card's state as Lithic last reported it. */
export async function recordCardState(
  tx: WriteTx,
  cardToken: string,
  state: string,
  now: number,
): Promise<void> {
  await tx.execute({
    sql: "UPDATE virtual_cards SET state = ?, checked_at = ? WHERE card_token = ?",
    args: [state, now, cardToken],
  });
}

/** Keeps what a closed card spent and what came back of it (once). */
export async function recordCardReclaim(
  tx: WriteTx,
  cardToken: string,
  reclaim: { readonly spentCents: number; readonly reclaimedCents: number },
  now: number,
): Promise<boolean> {
  const result = await tx.execute({
    sql: `UPDATE virtual_cards SET spent_cents = ?, reclaimed_cents = ?, closed_at = ?
          WHERE card_token = ? AND reclaimed_cents IS NULL`,
    args: [reclaim.spentCents, reclaim.reclaimedCents, now, cardToken],
  });
  return result.rowsAffected > 0;
}

/** Records a verified notice once per webhook id; false: seen before (a replay). */
export async function insertLithicNotice(
  tx: WriteTx,
  notice: { id: string; companyId: string; eventType: string; cardToken: string },
  now: number,
): Promise<boolean> {
  const result = await tx.execute({
    sql: `INSERT INTO lithic_notices (id, company_id, event_type, card_token, received_at)
          VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
    args: [notice.id, notice.companyId, notice.eventType, notice.cardToken, now],
  });
  return result.rowsAffected > 0;
}
