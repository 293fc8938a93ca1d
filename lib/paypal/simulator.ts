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
 *   SUCCESS, then REFUNDED 3 days after it was taken (money back after completion), which it tells
 *   the rail as PayPal's PAYMENT.PAYOUTS-ITEM.REFUNDED webhook would, recorded in process;
 * - any other: SUCCESS.
 * It signs no webhooks (other outcomes are read by polling), so it verifies none.
 */
import type { Database } from "../../db/client.ts";
import type { UnitJob } from "../../db/scheduler.ts";
import { scheduleJob } from "../../db/scheduler_store.ts";
import { domainNow } from "../sandbox/clock_store.ts";
import { sandboxTestDetails } from "../rails/sandbox.ts";
import type { PaypalConnection } from "./client.ts";
import { recordVerifiedNotice } from "./service.ts";
import { type ItemToTake, payoutsApi, type PayoutsBook, type PayoutsItem } from "./payouts_api.ts";
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

/** The job that tells the rail of a refund, as PayPal's webhook would (subject: the item's id). */
export const PAYPAL_SIMULATOR_JOBS = { refund: "paypal_simulator.refund" } as const;

/** Whether the simulator refunds a receiver's payment after it completed. */
function refundedLater(receiver: string): boolean {
  const lower = receiver.toLowerCase();
  return (lower.includes("@") && lower.split("@")[0] === "refunded") ||
    lower === sandboxTestDetails.venmoRefundedPhone;
}

/**
 * The handler of `paypal_simulator.refund`: the refund's webhook, recorded as a verified notice
 * is, so the rail reads the item (REFUNDED by then) and records the late return.
 */
export const paypalSimulatorRefundJob: UnitJob = async (tx, job) => {
  await recordVerifiedNotice(tx, {
    id: `WH-SANDBOX-REFUND-${job.subjectId}`,
    companyId: job.companyId,
    eventType: "PAYMENT.PAYOUTS-ITEM.REFUNDED",
    resourceId: job.subjectId,
  }, job.dueAt);
};

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
  return { status: "SUCCESS", errorName: null };
}

/** The sandbox's PayPal of one test database. */
export class PaypalSimulator implements PayoutsBook {
  readonly #api = payoutsApi(this);
  #errors = 0;

  constructor(
    private readonly database: Database,
    /** Real time, which the company's sandbox clock runs ahead of. */
    private readonly realNow: () => number = Date.now,
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
    const kept: ItemToKeep[] = items.map((item) => {
      const state = simulatedState(item);
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
    return await keepBatchOnce(
      this.database,
      {
        companyId: account,
        senderBatchId,
        // PayPal's id is its own; the simulator's is the sender_batch_id, so a batch an operator
        // resolves as transmitted without PayPal's id (rails:resolve) is still found by it.
        payoutBatchId: senderBatchId,
        at,
      },
      kept,
      async (tx, payoutItemIds) => {
        for (const [index, item] of items.entries()) {
          if (!refundedLater(item.receiver)) continue;
          await scheduleJob(tx, {
            companyId: account,
            kind: PAYPAL_SIMULATOR_JOBS.refund,
            subjectId: payoutItemIds[index],
            dueAt: at + REFUNDED_AFTER_MS,
          }, at);
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
    };
  }

  async item(account: string, payoutItemId: string): Promise<PayoutsItem | null> {
    const item = await loadSimulatedItem(this.database.readClient, account, payoutItemId);
    return item ? itemAt(item, await this.#now(account)) : null;
  }

  async returnItem(account: string, payoutItemId: string): Promise<PayoutsItem> {
    const item = await setSimulatedItemState(this.database, account, payoutItemId, "RETURNED");
    return itemAt(item, await this.#now(account));
  }

  verify(): Promise<boolean> {
    return Promise.resolve(false);
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
 * An item as PayPal reports it at `now`: an unclaimed one is returned after 30 days, a refunded
 * receiver's paid one refunded after 3.
 */
function itemAt(item: SimulatedItem, now: number): PayoutsItem {
  const returned = item.transactionStatus === "UNCLAIMED" &&
    now >= item.createdAt + UNCLAIMED_RETURN_AFTER_MS;
  const refunded = item.transactionStatus === "SUCCESS" && refundedLater(item.receiver) &&
    now >= item.createdAt + REFUNDED_AFTER_MS;
  const status = returned ? "RETURNED" : refunded ? "REFUNDED" : item.transactionStatus;
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
