/**
 * The simulated PayPal: the contract test server (tests/paypal_contract_server.ts, PayPal's
 * Payouts API as documented) plays the provider, and this drives its items through PayPal's item
 * states at times its own PRNG draws: paid within minutes, unclaimed then claimed, failed, or paid
 * then refunded. The service learns of them only by reading PayPal (its polling), as it would.
 * One server serves every seed of a process; a seed's items are the ones taken while it runs.
 */
import type { ContractItem, PaypalContractServer } from "../paypal_contract_server.ts";
import { Prng } from "./prng.ts";

interface ItemEvent {
  readonly at: number;
  readonly itemId: string;
  readonly status: string;
  readonly errorName?: string;
}

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

export class SimPaypal {
  readonly #prng: Prng;
  readonly #seen = new Set<string>();
  /** The items this seed's batches made, in the order PayPal took them. */
  readonly itemIds: string[] = [];
  readonly pending: ItemEvent[] = [];
  /** The domain time the service is at (a batch is taken while its job runs). */
  now: () => number = () => 0;

  constructor(seed: number, readonly server: PaypalContractServer) {
    this.#prng = new Prng(seed ^ 0x9a7_9a1);
    for (const id of server.items.keys()) this.#seen.add(id);
    server.afterTake = () => this.#taken();
  }

  #taken(): void {
    const at = this.now();
    for (const id of this.server.items.keys()) {
      if (this.#seen.has(id)) continue;
      this.#seen.add(id);
      this.itemIds.push(id);
      const fate = this.#prng.weighted({ paid: 70, unclaimed: 10, failed: 10, refunded: 10 });
      const soon = at + this.#prng.int(1, 30) * MINUTE_MS;
      switch (fate) {
        case "paid":
          this.#schedule({ at: soon, itemId: id, status: "SUCCESS" });
          break;
        case "unclaimed":
          this.#schedule({ at: soon, itemId: id, status: "UNCLAIMED" });
          this.#schedule({ at: soon + 2 * DAY_MS, itemId: id, status: "SUCCESS" });
          break;
        case "failed":
          this.#schedule({
            at: soon,
            itemId: id,
            status: "FAILED",
            errorName: "RECEIVER_ACCOUNT_LOCKED",
          });
          break;
        case "refunded":
          this.#schedule({ at: soon, itemId: id, status: "SUCCESS" });
          this.#schedule({ at: soon + 3 * DAY_MS, itemId: id, status: "REFUNDED" });
          break;
      }
    }
  }

  #schedule(event: ItemEvent): void {
    this.pending.push(event);
    this.pending.sort((a, b) => a.at - b.at);
  }

  /** Moves every item whose next state falls due by `until`; returns the items moved. */
  apply(until: number): ContractItem[] {
    const moved: ContractItem[] = [];
    while (this.pending.length > 0 && this.pending[0].at <= until) {
      const event = this.pending.shift()!;
      const item = this.server.items.get(event.itemId)!;
      item.transaction_status = event.status;
      item.errors = event.errorName
        ? { name: event.errorName, message: `simulated: ${event.errorName}` }
        : undefined;
      moved.push(item);
    }
    return moved;
  }

  /** The item's state again at `at`: its webhook is posted again. */
  redeliver(item: ContractItem, at: number): void {
    this.#schedule({
      at,
      itemId: item.payout_item_id,
      status: item.transaction_status,
      errorName: item.errors?.name,
    });
  }

  /** Whether PayPal's webhook of this move reaches the service (a refund's always does). */
  webhookArrives(item: ContractItem): boolean {
    return item.transaction_status === "REFUNDED" || this.#prng.chance(0.6);
  }

  /** Money PayPal paid out for this seed, by payout id (the sender_item_id without its number). */
  paidByPayout(): Map<string, { count: number; cents: number }> {
    const paid = new Map<string, { count: number; cents: number }>();
    for (const id of this.itemIds) {
      const item = this.server.items.get(id)!;
      if (item.transaction_status !== "SUCCESS") continue;
      const payoutId = item.payout_item.sender_item_id.replace(/-\d+$/, "");
      const cents = Number(item.payout_item.amount.value.replace(".", ""));
      const before = paid.get(payoutId) ?? { count: 0, cents: 0 };
      paid.set(payoutId, { count: before.count + 1, cents: before.cents + cents });
    }
    return paid;
  }

  /** The seed is over: the server no longer tells this provider of new batches. */
  detach(): void {
    this.server.afterTake = null;
  }
}
