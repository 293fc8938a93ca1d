/**
 * The sandbox's PayPal: PayPal's Payouts API (lib/paypal/payouts_api.ts) answered in process, so a
 * test company without PayPal settings is paid through the same PayPal rail as live (batches at
 * the five-minute cutoff, created under sender_batch_id, items read by polling) with no server
 * and no network. Each company is its own PayPal account. It keeps what it took in the test
 * database (lib/paypal/simulator_store.ts), so it survives a restart and answers a repeated
 * sender_batch_id with the first batch, and it decides each item when it takes it, from the
 * receiver alone:
 * - a PayPal e-mail whose local part is `fail+paypal` or `fail+venmo`, or the Venmo phone
 *   `venmoUnregisteredPhone`: FAILED, RECEIVER_UNREGISTERED (no account);
 * - a PayPal e-mail whose local part is `unclaimed`, or the Venmo phone `venmoUnclaimedPhone`:
 *   UNCLAIMED, then RETURNED 30 days after it was taken on the company's sandbox clock, unless
 *   cancelled (RETURNED at once);
 * - a PayPal e-mail whose local part is `refunded`, or the Venmo phone `venmoRefundedPhone`:
 *   SUCCESS, then REFUNDED 3 days after it was taken (money back after completion);
 * - a PayPal e-mail whose local part is `held`, or the Venmo phone `venmoHeldPhone`: ONHOLD
 *   (PayPal reviews it), then SUCCESS a day after it was taken;
 * - a PayPal e-mail whose local part is `blocked`, or the Venmo phone `venmoBlockedPhone`:
 *   BLOCKED, for good;
 * - a PayPal e-mail whose local part is `denied`, or the Venmo phone `venmoDeniedPhone`: PayPal
 *   denies its whole batch (batch_status DENIED), every item of which reads FAILED with no error
 *   of its own, as PayPal reports them;
 * - any other: SUCCESS.
 * It sends PayPal's webhooks as PayPal does, to the same receiver and through the same
 * verify-webhook-signature call as live (lib/paypal/sandbox_paypal.ts), on the company's sandbox
 * clock: a minute after it takes a batch, `PAYMENT.PAYOUTS-ITEM.SUCCEEDED`, `.FAILED`,
 * `.UNCLAIMED`, `.HELD` or `.BLOCKED` for each item and `PAYMENT.PAYOUTSBATCH.PROCESSING` while
 * one is open, `PAYMENT.PAYOUTSBATCH.SUCCESS` once none is (a denied batch: only
 * `PAYMENT.PAYOUTSBATCH.DENIED`, which, as PayPal's batch webhooks do, names no item); a day on,
 * `.SUCCEEDED` for a held item PayPal released; 3 days on, `.REFUNDED` for a refunded receiver's
 * item; 30 days on, `.RETURNED` for an item still unclaimed; at a cancel, `.CANCELED`. It
 * verifies only what it signed. (States and events: developer.paypal.com, Payouts API
 * transaction_status and batch_status, and "Payouts webhook event names".)
 */
import type { Database } from "../../db/client.ts";
import { scheduleJob } from "../../db/scheduler_store.ts";
import type { WriteTx } from "../../db/writer.ts";
import { domainNow } from "../sandbox/clock_store.ts";
import { hmacSha256Hex, sha256Hex } from "../platform/keys.ts";
import { sandboxTestDetails } from "../rails/sandbox.ts";
import type { PaypalConnection, WebhookHeaders } from "./client.ts";
import {
  type ItemToTake,
  OPEN_STATES,
  payoutsApi,
  type PayoutsBook,
  type PayoutsItem,
  type WebhookSignature,
} from "./payouts_api.ts";
import { PAYPAL_JOBS } from "./store.ts";
import {
  companyExists,
  type ItemToKeep,
  keepBatchOnce,
  loadSimulatedBatch,
  loadSimulatedItem,
  setSimulatedItemState,
  type SimulatedItem,
} from "./simulator_store.ts";

/** The simulator's API host in its settings; never resolved, its fetch answers in process. */
export const PAYPAL_SIMULATOR_BASE_URL = "https://api-m.paypal-simulator.invalid";

/** The client secret of every simulated account (the client id is the company's id). */
const SIMULATOR_CLIENT_SECRET = "sandbox";

/** A token names its account: the sandbox's PayPal keeps no sessions. */
const TOKEN_PREFIX = "A21AA-SANDBOX-";

/** An unclaimed item goes back to the insurer this long after PayPal took it (PayPal: 30 days). */
export const UNCLAIMED_RETURN_AFTER_MS = 30 * 86_400_000;

/** A refunded receiver's item is refunded this long after PayPal took it. */
export const REFUNDED_AFTER_MS = 3 * 86_400_000;

/**
 * A held item is released this long after PayPal took it: PayPal gives no time for its review,
 * so the sandbox picks one day.
 */
export const HELD_RELEASED_AFTER_MS = 86_400_000;

/** A receiver's e-mail local part, or null for a phone. */
function localPart(receiver: string): string | null {
  const lower = receiver.toLowerCase();
  return lower.includes("@") ? lower.split("@")[0] : null;
}

/** Whether a receiver is the PayPal e-mail with local part `marker` or the Venmo phone `phone`. */
function marked(receiver: string, marker: string, phone: string): boolean {
  return localPart(receiver) === marker || receiver === phone;
}

/** Whether PayPal denies the batch a receiver's item rides in. */
const deniesBatch = (receiver: string) =>
  marked(receiver.toLowerCase(), "denied", sandboxTestDetails.venmoDeniedPhone);

/** Whether the simulator refunds a receiver's payment after it completed. */
function refundedLater(receiver: string): boolean {
  const lower = receiver.toLowerCase();
  return (lower.includes("@") && lower.split("@")[0] === "refunded") ||
    lower === sandboxTestDetails.venmoRefundedPhone;
}

/** How long after it takes a batch the sandbox's PayPal has decided it and sends its webhooks. */
export const SANDBOX_WEBHOOKS_AFTER_MS = 60_000;

/** Not a secret: the sandbox's PayPal verifies only the webhooks it signed, in process. */
const SANDBOX_SIGNING_KEY = "sandbox paypal, not a secret";

/** The item webhook PayPal sends of each state an item reaches (ONHOLD's is HELD). */
const ITEM_EVENTS: Readonly<Record<string, string>> = {
  SUCCESS: "SUCCEEDED",
  FAILED: "FAILED",
  UNCLAIMED: "UNCLAIMED",
  RETURNED: "RETURNED",
  REFUNDED: "REFUNDED",
  ONHOLD: "HELD",
  BLOCKED: "BLOCKED",
};

/** A webhook as PayPal posts it: its event's body and the transmission headers that sign it. */
export interface SandboxWebhook {
  readonly body: string;
  readonly headers: WebhookHeaders;
}

/** PayPal's error of a receiver without an account. */
export const RECEIVER_UNREGISTERED = "RECEIVER_UNREGISTERED";

/** What the simulator makes of an item it takes, by its receiver. */
export function simulatedState(
  item: Pick<ItemToTake, "receiver">,
): { readonly status: string; readonly errorName: string | null } {
  const receiver = item.receiver.toLowerCase();
  const local = receiver.split("@")[0];
  const t = sandboxTestDetails;
  if (local === "fail+paypal" || local === "fail+venmo" || receiver === t.venmoUnregisteredPhone) {
    return { status: "FAILED", errorName: RECEIVER_UNREGISTERED };
  }
  if ((receiver.includes("@") && local === "unclaimed") || receiver === t.venmoUnclaimedPhone) {
    return { status: "UNCLAIMED", errorName: null };
  }
  if (marked(receiver, "held", t.venmoHeldPhone)) return { status: "ONHOLD", errorName: null };
  if (marked(receiver, "blocked", t.venmoBlockedPhone)) {
    return { status: "BLOCKED", errorName: null };
  }
  return { status: "SUCCESS", errorName: null };
}

/** The sandbox's PayPal of one test database. */
export class PaypalSimulator implements PayoutsBook {
  readonly #api = payoutsApi(this);
  #errors = 0;

  constructor(
    private readonly database: Database,
    /** Real time, which the company's sandbox clock runs ahead of. */
    readonly realNow: () => number = Date.now,
  ) {}

  /** How a company's PayPal calls reach the simulator: its account's settings and an in-process fetch. */
  connectionFor(companyId: string): PaypalConnection {
    return {
      settings: {
        clientId: companyId,
        clientSecret: SIMULATOR_CLIENT_SECRET,
        baseUrl: PAYPAL_SIMULATOR_BASE_URL,
        webhookId: `WH-SANDBOX-${companyId}`,
      },
      fetch: (input, init) => this.#api(new Request(input, init)),
    };
  }

  async authenticate(clientId: string, clientSecret: string): Promise<string | null> {
    if (clientSecret !== SIMULATOR_CLIENT_SECRET) return null;
    return await companyExists(this.database.readClient, clientId) ? clientId : null;
  }

  issueToken(account: string): Promise<string> {
    return Promise.resolve(`${TOKEN_PREFIX}${account}`);
  }

  async accountOf(token: string): Promise<string | null> {
    if (!token.startsWith(TOKEN_PREFIX)) return null;
    const account = token.slice(TOKEN_PREFIX.length);
    return await companyExists(this.database.readClient, account) ? account : null;
  }

  async takeBatch(
    account: string,
    senderBatchId: string,
    items: readonly ItemToTake[],
  ): Promise<{ payoutBatchId: string; taken: boolean }> {
    const denied = items.some((item) => deniesBatch(item.receiver));
    const kept: ItemToKeep[] = items.map((item) => {
      const state = denied ? { status: "FAILED", errorName: null } : simulatedState(item);
      return {
        senderItemId: item.sender_item_id,
        recipientType: item.recipient_type,
        recipientWallet: item.recipient_wallet,
        receiver: item.receiver,
        amountValue: item.amount.value,
        transactionStatus: state.status,
        errorName: state.errorName,
      };
    });
    const at = await this.#now(account);
    // PayPal's id is its own; the simulator's is the sender_batch_id, so a batch an operator
    // resolves as transmitted without PayPal's id (rails:resolve) is still found by it.
    const payoutBatchId = senderBatchId;
    return await keepBatchOnce(
      this.database,
      { companyId: account, senderBatchId, payoutBatchId, at },
      kept,
      async (tx) => {
        await scheduleWebhooks(tx, account, payoutBatchId, at + SANDBOX_WEBHOOKS_AFTER_MS, at);
        if (kept.some((item) => item.transactionStatus === "ONHOLD")) {
          await scheduleWebhooks(tx, account, payoutBatchId, at + HELD_RELEASED_AFTER_MS, at);
        }
        if (kept.some((item) => refundedLater(item.receiver))) {
          await scheduleWebhooks(tx, account, payoutBatchId, at + REFUNDED_AFTER_MS, at);
        }
        if (kept.some((item) => item.transactionStatus === "UNCLAIMED")) {
          await scheduleWebhooks(tx, account, payoutBatchId, at + UNCLAIMED_RETURN_AFTER_MS, at);
        }
      },
    );
  }

  async batch(account: string, payoutBatchId: string) {
    const batch = await loadSimulatedBatch(this.database.readClient, account, payoutBatchId);
    if (!batch) return null;
    const now = await this.#now(account);
    return {
      senderBatchId: batch.senderBatchId,
      items: batch.items.map((item) => itemAt(item, now)),
      ...(batch.items.some((item) => deniesBatch(item.receiver)) ? { batchStatus: "DENIED" } : {}),
    };
  }

  async item(account: string, payoutItemId: string): Promise<PayoutsItem | null> {
    const item = await loadSimulatedItem(this.database.readClient, account, payoutItemId);
    return item ? itemAt(item, await this.#now(account)) : null;
  }

  async returnItem(account: string, payoutItemId: string): Promise<PayoutsItem> {
    const at = await this.#now(account);
    const item = await setSimulatedItemState(
      this.database,
      account,
      payoutItemId,
      "RETURNED",
      async (tx) => {
        const found = await loadSimulatedItem(tx, account, payoutItemId);
        await scheduleWebhooks(tx, account, found!.payoutBatchId, at, at, {
          payoutItemId,
          event: "CANCELED",
        });
      },
    );
    return itemAt(item, at);
  }

  async verify(account: string, signature: WebhookSignature): Promise<boolean> {
    if (signature.webhook_id !== this.connectionFor(account).settings.webhookId) return false;
    const expected = await transmissionSignature(
      signature.transmission_id,
      signature.transmission_time,
      signature.webhook_id,
      JSON.stringify(signature.webhook_event),
    );
    return expected === signature.transmission_sig;
  }

  /**
   * The webhooks PayPal sends of a batch at `at` (its domain time): one per item by the state it
   * is in then (or `only` one item's event), and the batch's: PROCESSING while an item is open,
   * SUCCESS once none is; of a denied batch only its DENIED. Event ids name the item or batch and
   * its event, so a delivery sent again is the same event.
   */
  async webhooks(
    account: string,
    payoutBatchId: string,
    at: number,
    only?: { readonly payoutItemId: string; readonly event: string },
  ): Promise<SandboxWebhook[]> {
    const batch = await loadSimulatedBatch(this.database.readClient, account, payoutBatchId);
    if (!batch) return [];
    const items = batch.items.map((item) => itemAt(item, at));
    const denied = batch.items.some((item) => deniesBatch(item.receiver));
    const events: { id: string; type: string; resourceType: string; resource: unknown }[] = [];
    for (const [index, item] of items.entries()) {
      if (denied) break;
      if (only && item.payout_item_id !== only.payoutItemId) continue;
      // Kept RETURNED only by a cancel, whose webhook is CANCELED (and it is never RETURNED later).
      const canceled = batch.items[index].transactionStatus === "RETURNED";
      const event = only?.event ?? (canceled ? "CANCELED" : ITEM_EVENTS[item.transaction_status]);
      if (!event) continue;
      events.push({
        id: `WH-SANDBOX-${item.payout_item_id}-${event}`,
        type: `PAYMENT.PAYOUTS-ITEM.${event}`,
        resourceType: "payouts_item",
        resource: item,
      });
    }
    if (!only) {
      const status = denied
        ? "DENIED"
        : items.some((item) => OPEN_STATES.has(item.transaction_status))
        ? "PROCESSING"
        : "SUCCESS";
      events.push({
        id: `WH-SANDBOX-${payoutBatchId}-${status}`,
        type: `PAYMENT.PAYOUTSBATCH.${status}`,
        resourceType: "payouts",
        resource: {
          batch_header: {
            payout_batch_id: payoutBatchId,
            batch_status: status,
            sender_batch_header: { sender_batch_id: batch.senderBatchId },
          },
        },
      });
    }
    const webhookId = this.connectionFor(account).settings.webhookId;
    return await Promise.all(events.map(async (event) => {
      const body = JSON.stringify({
        id: event.id,
        event_version: "1.0",
        create_time: new Date(at).toISOString(),
        resource_type: event.resourceType,
        event_type: event.type,
        summary: `${event.type} (sandbox)`,
        resource: event.resource,
      });
      const transmissionId = crypto.randomUUID();
      const transmissionTime = new Date(this.realNow()).toISOString();
      return {
        body,
        headers: {
          authAlgo: "SHA256withRSA",
          certUrl: `${PAYPAL_SIMULATOR_BASE_URL}/v1/notifications/certs/CERT-SANDBOX`,
          transmissionId,
          transmissionSig: await transmissionSignature(
            transmissionId,
            transmissionTime,
            webhookId,
            body,
          ),
          transmissionTime,
        },
      };
    }));
  }

  debugId(): string {
    this.#errors++;
    return `sandbox${this.#errors}`;
  }

  #now(companyId: string): Promise<number> {
    return domainNow(this.database, companyId, this.realNow());
  }
}

/**
 * Plans the sending of a batch's webhooks at `dueAt` on the company's sandbox clock (`only`: one
 * item's event).
 */
function scheduleWebhooks(
  tx: WriteTx,
  companyId: string,
  payoutBatchId: string,
  dueAt: number,
  now: number,
  only?: { readonly payoutItemId: string; readonly event: string },
): Promise<unknown> {
  return scheduleJob(tx, {
    companyId,
    kind: PAYPAL_JOBS.sandboxWebhooks,
    subjectId: payoutBatchId,
    dueAt,
    payload: only ? { payout_item_id: only.payoutItemId, event: only.event } : {},
  }, now);
}

/**
 * The sandbox's transmission signature: an HMAC of what PayPal's signs (the transmission's id and
 * time, the webhook id, the body's digest) with a key that is no secret.
 */
async function transmissionSignature(
  transmissionId: string,
  transmissionTime: string,
  webhookId: string,
  body: string,
): Promise<string> {
  const signed = `${transmissionId}|${transmissionTime}|${webhookId}|${await sha256Hex(body)}`;
  return await hmacSha256Hex(SANDBOX_SIGNING_KEY, signed);
}

/**
 * An item as PayPal reports it at `now`: an unclaimed one is returned after 30 days, a held one
 * released (SUCCESS) after a day, a refunded receiver's paid one refunded after 3.
 */
function itemAt(item: SimulatedItem, now: number): PayoutsItem {
  const returned = item.transactionStatus === "UNCLAIMED" &&
    now >= item.createdAt + UNCLAIMED_RETURN_AFTER_MS;
  const released = item.transactionStatus === "ONHOLD" &&
    now >= item.createdAt + HELD_RELEASED_AFTER_MS;
  const refunded = item.transactionStatus === "SUCCESS" && refundedLater(item.receiver) &&
    now >= item.createdAt + REFUNDED_AFTER_MS;
  const status = returned
    ? "RETURNED"
    : released
    ? "SUCCESS"
    : refunded
    ? "REFUNDED"
    : item.transactionStatus;
  return {
    payout_item_id: item.payoutItemId,
    payout_batch_id: item.payoutBatchId,
    transaction_status: status,
    payout_item: {
      recipient_type: item.recipientType,
      recipient_wallet: item.recipientWallet,
      receiver: item.receiver,
      amount: { currency: "USD", value: item.amountValue },
      sender_item_id: item.senderItemId,
    },
    ...(item.errorName
      ? { errors: { name: item.errorName, message: "Receiver is unregistered." } }
      : {}),
  };
}
