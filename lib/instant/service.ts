/**
 * The instant deposit use cases Increase's webhooks and the payee portal reach: recording a
 * verified event (and queueing the check that reads its push from Increase), and where the portal
 * sends a payee to type their card (the tokenization provider's hosted page, which hands the card
 * to Increase's vault; the number never reaches this service). A test company without Increase
 * settings reaches the Increase simulator instead (its `increase` reach): its events are signed
 * with the simulator's secret, its routing lookup and its hosted card field are the simulator's.
 */
import type { Database } from "../../db/client.ts";
import { scheduleJob } from "../../db/scheduler_store.ts";
import type { ProviderReach } from "../rails/provider_reach.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import { domainNow } from "../sandbox/clock_store.ts";
import { increaseSigned, IncreaseUnanswered } from "./client.ts";
import { type IncreaseAccount, increaseClientOf } from "./account.ts";
import { findInstantTransfer, insertIncreaseNotice, INSTANT_JOBS } from "./store.ts";
import type { Language } from "../notify/messages.ts";

export type IncreaseWebhookRefusal =
  | "increase_not_configured"
  | "webhook_not_verified"
  | "invalid_input";

/** What the instant deposit use cases run on: the database and how its companies reach Increase. */
export interface IncreaseDeps {
  readonly database: Database;
  readonly increase: ProviderReach<IncreaseAccount>;
}

/**
 * An event Increase posted for a company in one environment: its `Increase-Webhook-Signature` is
 * checked with that configuration's secret before anything is written (forged: refused, nothing
 * written); a verified event naming one of our pushes records its notice once per event id (a
 * replay records nothing) and queues the check that asks Increase for the push. `increase` is what
 * the event came through: over the network a company's own settings, in process the simulator too.
 */
export async function receiveIncreaseWebhook(
  deps: IncreaseDeps,
  request: {
    readonly companyId: string;
    readonly signature: string | null;
    readonly body: string;
    /** When the event arrives in the company's domain time (the simulator's, on the sandbox clock). */
    readonly arrivedAt?: number;
  },
  realNow: number,
): Promise<Result<{ recorded: boolean; eventId: string | null }, IncreaseWebhookRefusal>> {
  const account = await deps.increase.read(deps.database.readClient, request.companyId);
  if (!account) {
    return refuse(
      "increase_not_configured",
      `no Increase configuration for company ${request.companyId} in ${deps.database.environment}`,
    );
  }
  if (
    !await increaseSigned(account.settings.webhookSecret, request.signature, request.body, realNow)
  ) {
    return refuse(
      "webhook_not_verified",
      "the webhook's Increase-Webhook-Signature does not verify with this configuration's secret (or it is too old); nothing was recorded",
    );
  }
  let event: Record<string, unknown>;
  try {
    event = JSON.parse(request.body);
  } catch {
    return refuse("invalid_input", "the body is not JSON", { field: "body" });
  }
  const eventId = typeof event.id === "string" ? event.id : null;
  const objectId = typeof event.associated_object_id === "string"
    ? event.associated_object_id
    : null;
  const category = typeof event.category === "string" ? event.category : "";
  const ours = category.startsWith("card_push_transfer.") ||
    category.startsWith("real_time_payments_transfer.");
  if (eventId === null || objectId === null || !ours) {
    return ok({ recorded: false, eventId });
  }
  const transfer = await findInstantTransfer(deps.database.readClient, objectId);
  if (transfer?.companyId !== request.companyId) return ok({ recorded: false, eventId });
  const now = request.arrivedAt ?? await domainNow(deps.database, request.companyId, realNow);
  const recorded = await deps.database.writer.write(async (tx) => {
    const fresh = await insertIncreaseNotice(tx, {
      id: eventId,
      companyId: request.companyId,
      category,
      objectId,
    }, now);
    if (fresh) {
      await scheduleJob(tx, {
        companyId: request.companyId,
        kind: INSTANT_JOBS.check,
        subjectId: objectId,
        dueAt: now,
      }, now);
    }
    return fresh;
  });
  return ok({ recorded, eventId });
}

/** How long the portal waits for Increase's routing lookup while the payee waits. */
const ROUTING_LOOKUP_TIMEOUT_MS = 5_000;

/**
 * Whether the bank of `routingNumber` takes instant bank payments for this company's payees:
 * the routing lookup of the company's Increase (the simulator's for a test company without
 * settings: every bank but routing number 091000019); false when it has no Increase, null when
 * Increase did not answer now.
 */
export async function instantBankReachable(
  deps: IncreaseDeps,
  companyId: string,
  routingNumber: string,
  now: number,
): Promise<boolean | null> {
  const account = await deps.increase.read(deps.database.readClient, companyId);
  if (!account) return false;
  try {
    return await increaseClientOf(deps.database, companyId, account, {
      at: now,
      timeoutMs: ROUTING_LOOKUP_TIMEOUT_MS,
    }).rtpReachable(routingNumber);
  } catch (error) {
    if (error instanceof IncreaseUnanswered) return null;
    throw error;
  }
}

/** How long the portal waits for Increase's card token while the payee waits. */
const CARD_TOKEN_TIMEOUT_MS = 5_000;

/**
 * The card a payee came back from the hosted card page with, as Increase's vault reports its token
 * (`GET /card_tokens/{id}`): its id and last four digits. The return's own parameters are the
 * browser's, so only the token id is taken from them; null when the company has no Increase, the
 * token is not Increase's (404) or Increase did not answer now (the payee enters the card again).
 */
export async function returnedCardToken(
  deps: IncreaseDeps,
  companyId: string,
  cardTokenId: string,
  now: number,
): Promise<{ readonly cardTokenId: string; readonly lastFour: string } | null> {
  const account = await deps.increase.read(deps.database.readClient, companyId);
  if (!account || cardTokenId === "") return null;
  try {
    const token = await increaseClientOf(deps.database, companyId, account, {
      at: now,
      timeoutMs: CARD_TOKEN_TIMEOUT_MS,
    }).cardToken(cardTokenId);
    return token.kind === "ok"
      ? { cardTokenId: token.value.id, lastFour: token.value.last4 }
      : null;
  } catch (error) {
    if (error instanceof IncreaseUnanswered) return null;
    throw error;
  }
}

/**
 * The hosted card page a payee of this company types their card at, with where it sends them back
 * (`returnUrl`), the state that ties the return to their session and the language the portal
 * speaks to them (`lang`); null when the company has no Increase in this environment. The
 * simulator's page is a path of this service, resolved against `returnUrl`.
 */
export async function hostedCardPage(
  deps: IncreaseDeps,
  companyId: string,
  back: { readonly returnUrl: string; readonly state: string; readonly language: Language },
): Promise<string | null> {
  const account = await deps.increase.read(deps.database.readClient, companyId);
  if (!account) return null;
  const page = new URL(account.settings.cardPageUrl, back.returnUrl);
  page.searchParams.set("return_url", back.returnUrl);
  page.searchParams.set("state", back.state);
  page.searchParams.set("lang", back.language);
  return page.href;
}
