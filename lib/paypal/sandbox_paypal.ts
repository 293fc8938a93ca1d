/**
 * The sandbox's PayPal's job: `paypal.sandbox_webhooks` posts, on the company's sandbox clock, the
 * webhooks PayPal sends of a batch's items (lib/paypal/simulator.ts decides which), in process, to
 * the receiver PayPal's webhooks reach in live (`receiveWebhook`), which verifies each with the
 * company's PayPal (here the simulator's verify-webhook-signature) before recording its notice.
 */
import { externalJob, type JobHandler } from "../../db/scheduler.ts";
import type { Database } from "../../db/client.ts";
import type { ProviderReach } from "../rails/provider_reach.ts";
import type { PaypalConnection } from "./client.ts";
import { receiveWebhook } from "./service.ts";
import type { PaypalSimulator } from "./simulator.ts";
import { PAYPAL_JOBS } from "./store.ts";

/** A claim on one delivery of a batch's webhooks. */
const WEBHOOKS_LEASE_MS = 60_000;

interface Delivery {
  readonly companyId: string;
  readonly payoutBatchId: string;
  /** The domain time the webhooks tell of. */
  readonly at: number;
  /** One item's event (a cancel), else every item's by its state. */
  readonly only?: { readonly payoutItemId: string; readonly event: string };
}

/** The handlers of the sandbox's PayPal's jobs. */
export function sandboxPaypalJobs(deps: {
  readonly database: Database;
  readonly paypal: ProviderReach<PaypalConnection>;
  readonly simulator: PaypalSimulator;
}): Readonly<Record<string, JobHandler>> {
  return {
    [PAYPAL_JOBS.sandboxWebhooks]: externalJob<Delivery, void>({
      leaseMs: WEBHOOKS_LEASE_MS,
      prepare(_tx, job) {
        const { payout_item_id: payoutItemId, event } = job.payload;
        return Promise.resolve({
          companyId: job.companyId,
          payoutBatchId: job.subjectId,
          at: job.dueAt,
          ...(typeof payoutItemId === "string" && typeof event === "string"
            ? { only: { payoutItemId, event } }
            : {}),
        });
      },
      async call({ companyId, payoutBatchId, at, only }) {
        const webhooks = await deps.simulator.webhooks(companyId, payoutBatchId, at, only);
        for (const webhook of webhooks) {
          const received = await receiveWebhook(
            deps,
            { companyId, headers: webhook.headers, body: webhook.body },
            deps.simulator.realNow(),
          );
          if (!received.ok) {
            // The company stored its own PayPal settings since: the simulator's webhook is not theirs.
            console.warn(JSON.stringify({
              level: "warn",
              msg: "the sandbox's PayPal webhook was refused",
              company_id: companyId,
              code: received.code,
            }));
          }
        }
      },
      record: () => Promise.resolve(),
    }),
  };
}
