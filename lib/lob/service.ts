/**
 * What happens to a check Lob mails, from its verified webhooks or the polling fallback, in one
 * write unit per event: each event is kept once (a replay records nothing), shown on the payout's
 * timeline; returned to sender voids the check (its payout fails `returned_undeliverable` and is
 * offered again once the void reached the bank, as the sandbox's undeliverable check does);
 * canceled at Lob before mailing voids it in the register. A check Lob refused to make for its
 * payee's address is voided too (`voidRefusedCheck`).
 */
import type { Database } from "../../db/client.ts";
import type { WriteTx } from "../../db/writer.ts";
import type { SecretBox } from "../platform/crypto.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import { loadCheck, VOID_REASON_LENGTH_MAX, voidCheck } from "../checks/register.ts";
import {
  CANCELED_BEFORE_MAILING,
  REFUSED_BY_MAIL_PROVIDER,
  RETURNED_UNDELIVERABLE,
} from "../checks/voids.ts";
import { LOB_CHECK_EVENTS, lobSigned, type LobWebhookHeaders } from "./rules.ts";
import { lobSettingsStore, recordMailEvent } from "./store.ts";
import { domainNow } from "../sandbox/clock_store.ts";

/** A webhook body larger than this is not one of Lob's events. */
export const LOB_WEBHOOK_BYTES_MAX = 256 * 1024;

/** One event of a mailed check, from a webhook or from polling. */
export interface MailEventInput {
  /** Lob's event id, or (polling) the check's id and its tracking event's. */
  readonly id: string;
  readonly type: string;
  readonly lobCheckId: string;
  /** Our check, as named in the metadata we gave Lob. */
  readonly checkId: string;
  readonly at: number;
}

export type MailEventOutcome = "recorded" | "replayed" | "not_ours";

/** Applies one event in the caller's unit. */
export async function applyMailEvent(
  tx: WriteTx,
  companyId: string,
  event: MailEventInput,
  now: number,
): Promise<MailEventOutcome> {
  const effect = LOB_CHECK_EVENTS[event.type] ?? "track";
  if (effect === "ignore") return "recorded";
  const check = await loadCheck(tx, event.checkId);
  if (!check || check.companyId !== companyId) return "not_ours";
  const kept = await recordMailEvent(tx, {
    id: event.id,
    companyId,
    checkId: check.id,
    payoutId: check.payoutId,
    lobCheckId: event.lobCheckId,
    type: event.type,
    at: event.at,
  }, now);
  if (!kept) return "replayed";
  if ((effect === "returned" || effect === "canceled") && check.status === "issued") {
    const voided = await voidCheck(tx, {
      companyId,
      checkNumber: check.checkNumber,
      reason: effect === "returned" ? RETURNED_UNDELIVERABLE : CANCELED_BEFORE_MAILING,
      operator: "system",
    }, now);
    if (!voided.ok) throw new Error(`check ${check.checkNumber}: ${voided.message}`);
  }
  return "recorded";
}

/**
 * Lob refused to make a check for its payee's address: the check is voided in the register with
 * Lob's words (a void the bank could never pay: nothing was printed), in the caller's unit. Once
 * the void reached the bank its payout fails `address_not_mailable` and is offered again, so the
 * payee can give an address Lob mails to. A check voided before is left as it is.
 */
export async function voidRefusedCheck(
  tx: WriteTx,
  companyId: string,
  refused: { readonly checkId: string; readonly message: string },
  now: number,
): Promise<void> {
  const check = await loadCheck(tx, refused.checkId);
  if (!check || check.companyId !== companyId || check.status !== "issued") return;
  const voided = await voidCheck(tx, {
    companyId,
    checkNumber: check.checkNumber,
    reason: `${REFUSED_BY_MAIL_PROVIDER}: ${refused.message}`.slice(0, VOID_REASON_LENGTH_MAX),
    operator: "system",
  }, now);
  if (!voided.ok) throw new Error(`check ${check.checkNumber}: ${voided.message}`);
}

export type LobWebhookRefusal = "lob_not_configured" | "webhook_not_verified" | "invalid_input";

/**
 * A webhook from Lob: its signature is checked with the company's webhook secret before anything
 * is written (forged: refused, nothing written); a check event naming one of our checks is
 * applied once.
 */
export async function receiveLobWebhook(
  deps: { readonly database: Database; readonly secretBox: SecretBox },
  input: { readonly companyId: string; readonly headers: LobWebhookHeaders; readonly body: string },
  now: number,
): Promise<Result<{ eventId: string | null }, LobWebhookRefusal>> {
  const settings = /^co_[0-9A-Za-z]{1,40}$/.test(input.companyId)
    ? await lobSettingsStore.read(deps.database.readClient, deps.secretBox, input.companyId)
    : null;
  if (settings === null) {
    return refuse("lob_not_configured", `no Lob settings for company ${input.companyId}`);
  }
  if (
    input.body.length > LOB_WEBHOOK_BYTES_MAX ||
    !(await lobSigned(settings.webhookSecret, input.headers, input.body, now))
  ) {
    return refuse(
      "webhook_not_verified",
      "the Lob-Signature of this body does not verify with the webhook secret (or its timestamp is more than 5 minutes away)",
    );
  }
  let event: {
    id?: unknown;
    event_type?: { id?: unknown };
    body?: { id?: unknown; metadata?: { check_id?: unknown } };
    date_created?: unknown;
  };
  try {
    event = JSON.parse(input.body);
  } catch {
    return refuse("invalid_input", "the body is not JSON", { field: "body" });
  }
  const eventId = typeof event.id === "string" ? event.id : null;
  const type = typeof event.event_type?.id === "string" ? event.event_type.id : null;
  const lobCheckId = typeof event.body?.id === "string" ? event.body.id : null;
  const checkId = typeof event.body?.metadata?.check_id === "string"
    ? event.body.metadata.check_id
    : null;
  // Lob's other events (letters, postcards), or a check not made by us: acknowledged, not kept.
  if (eventId === null || type === null || !type.startsWith("check.") || lobCheckId === null) {
    return ok({ eventId });
  }
  if (checkId === null) return ok({ eventId });
  const at = typeof event.date_created === "string" && !Number.isNaN(Date.parse(event.date_created))
    ? Date.parse(event.date_created)
    : now;
  // The signature is judged on real time; what the event changes is dated on the company's
  // domain time (its sandbox clock in test).
  await deps.database.writer.write(async (tx) => {
    const domain = await domainNow(deps.database, input.companyId, now, tx);
    await applyMailEvent(
      tx,
      input.companyId,
      { id: eventId, type, lobCheckId, checkId, at },
      domain,
    );
  });
  return ok({ eventId });
}
