/**
 * The virtual card use cases Lithic's webhooks and the payee portal reach: recording a verified
 * webhook notice (and queueing the check that reads its card from Lithic), and the embed URL that
 * shows a payee their card in Lithic's hosted iframe (its number and CVV go from Lithic to the
 * payee's browser, never through this service).
 */
import type { Database } from "../../db/client.ts";
import { scheduleJob } from "../../db/scheduler_store.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import { domainNow } from "../sandbox/clock_store.ts";
import type { ProviderReach } from "../rails/provider_reach.ts";
import {
  LithicClient,
  type LithicReach,
  lithicSigned,
  type LithicWebhookHeaders,
} from "./client.ts";
import { CARD_JOBS, cardOfPayout, findVirtualCard, insertLithicNotice } from "./store.ts";

/** An embed URL is good for this long: the portal page is fresh each time it is shown. */
export const CARD_EMBED_TTL_MS = 5 * 60_000;

export type LithicWebhookRefusal =
  | "lithic_not_configured"
  | "webhook_not_verified"
  | "invalid_input";

/**
 * A webhook Lithic posted for a company in one environment: its Standard Webhooks signature is
 * checked with that configuration's secret before anything is written (forged: refused, nothing
 * written); a verified event naming one of our cards records its notice once per webhook id (a
 * replay records nothing) and queues the check that asks Lithic for the card. `lithic` is what
 * the webhook came through: over the network a company's own settings, in process the sandbox's
 * Lithic too (its webhooks are signed with the sandbox's secret).
 */
export async function receiveLithicWebhook(
  deps: { readonly database: Database; readonly lithic: ProviderReach<LithicReach> },
  request: {
    readonly companyId: string;
    readonly headers: LithicWebhookHeaders;
    readonly body: string;
  },
  realNow: number,
): Promise<Result<{ recorded: boolean; eventId: string }, LithicWebhookRefusal>> {
  const reach = await deps.lithic.read(deps.database.readClient, request.companyId);
  if (!reach) {
    return refuse(
      "lithic_not_configured",
      `no Lithic configuration for company ${request.companyId} in ${deps.database.environment}`,
    );
  }
  if (!lithicSigned(reach.settings.webhookSecret, request.headers, request.body)) {
    return refuse(
      "webhook_not_verified",
      "the webhook's signature does not verify with this configuration's secret (or its timestamp is too old); nothing was recorded",
    );
  }
  let event: Record<string, unknown>;
  try {
    event = JSON.parse(request.body);
  } catch {
    return refuse("invalid_input", "the body is not JSON", { field: "body" });
  }
  const eventId = request.headers.id!;
  const cardToken = typeof event.card_token === "string" ? event.card_token : null;
  const eventType = typeof event.event_type === "string" ? event.event_type : "";
  if (cardToken === null) return ok({ recorded: false, eventId });
  const card = await findVirtualCard(deps.database.readClient, cardToken);
  // A card this company did not issue through us (another program's) is none of our business.
  if (card?.companyId !== request.companyId) return ok({ recorded: false, eventId });
  const now = await domainNow(deps.database, request.companyId, realNow);
  const recorded = await deps.database.writer.write(async (tx) => {
    const fresh = await insertLithicNotice(tx, {
      id: eventId,
      companyId: request.companyId,
      eventType,
      cardToken,
    }, now);
    if (fresh) {
      await scheduleJob(tx, {
        companyId: request.companyId,
        kind: CARD_JOBS.check,
        subjectId: cardToken,
        dueAt: now,
      }, now);
    }
    return fresh;
  });
  return ok({ recorded, eventId });
}

/** What the portal shows of a payout's card: Lithic's iframe URL and its origin, and the last four. */
export interface CardEmbed {
  readonly embedUrl: string;
  readonly origin: string;
  readonly lastFour: string;
}

/**
 * The embed of the payout's card while the payee can spend it (issued, not closed), or null:
 * no card, a closed one, or a company that no longer reaches Lithic. A test company without
 * settings is shown its card by the sandbox's Lithic, from this service's origin.
 */
export async function cardEmbedOf(
  deps: { readonly database: Database; readonly lithic: ProviderReach<LithicReach> },
  payoutId: string,
  realNow: number,
): Promise<CardEmbed | null> {
  const reader = deps.database.readClient;
  const card = await cardOfPayout(reader, payoutId);
  if (!card || card.state === "CLOSED" || card.reclaimedCents !== null) return null;
  const reach = await deps.lithic.read(reader, card.companyId);
  if (!reach) return null;
  return {
    embedUrl: (await LithicClient.open(reach)).embedUrl(
      card.cardToken,
      realNow + CARD_EMBED_TTL_MS,
    ),
    origin: new URL(reach.settings.baseUrl).origin,
    lastFour: card.lastFour,
  };
}
