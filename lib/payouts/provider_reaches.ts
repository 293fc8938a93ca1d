/**
 * How the companies of an environment reach each provider (Lithic, PayPal, Increase), decided in
 * one place for the rails and their jobs (lib/payouts/runtime.ts), the API's payee portal and the
 * rails' webhooks. Apart from the rails' composition, so that the API's routes reach it without
 * loading the rails' jobs at start.
 */
import { PaypalSimulator } from "../paypal/simulator.ts";
import { paypalReachOf } from "../paypal/settings_store.ts";
import type { PaypalConnection } from "../paypal/client.ts";
import { type SandboxLithic, sandboxLithic } from "../cards/sandbox_lithic.ts";
import { lithicReachOf } from "../cards/store.ts";
import type { LithicReach } from "../cards/client.ts";
import { type IncreaseAccount, increaseReachOf } from "../instant/account.ts";
import type { ProviderReach } from "../rails/provider_reach.ts";
import { systemClock } from "../platform/clock.ts";
import type { RuntimeSettings } from "./settings.ts";
import type { Database } from "../../db/client.ts";
import type { Environment } from "../platform/config.ts";
import type { SecretBox } from "../platform/crypto.ts";

/** How the companies of one environment's database reach each provider. */
export interface ProviderReaches {
  readonly lithic: ProviderReach<LithicReach>;
  readonly paypal: ProviderReach<PaypalConnection>;
  readonly increase: ProviderReach<IncreaseAccount>;
}

/** The environment's simulators the reaches bind, whose own jobs deliver what they send. */
interface Simulators {
  readonly sandboxLithic: SandboxLithic | null;
  readonly paypal: PaypalSimulator | null;
}

/** An environment's provider reaches, with the simulators they bind. */
export interface BoundReaches extends ProviderReaches {
  readonly simulators: Simulators;
}

function reachesOf(
  simulators: Simulators & { readonly increase: boolean },
  settings: RuntimeSettings,
  secretBox: SecretBox,
): BoundReaches {
  return {
    lithic: lithicReachOf(secretBox, simulators.sandboxLithic),
    paypal: paypalReachOf(secretBox, simulators.paypal, settings.rails?.paypalFetch),
    increase: increaseReachOf(secretBox, simulators.increase),
    simulators,
  };
}

/**
 * Which provider each company of an environment is paid through, decided here once for every
 * provider: its own settings when it stored them, in either environment; else, in test, the
 * sandbox's simulator of that provider (Lithic, PayPal, Increase); else, in live, none, and the
 * provider's payouts are refused `rail_not_configured`. The rails, their jobs and the services
 * (the portal's card and bank lookups, operators' PayPal cancels) all run on what this returns.
 */
export function providerReachesOf(
  environment: Environment,
  settings: RuntimeSettings,
  database: Database,
  secretBox: SecretBox,
): BoundReaches {
  const test = environment === "test";
  // Real time as the service keeps it: each simulator dates what it does on the sandbox clock.
  const clock = settings.clock ?? systemClock;
  return reachesOf(
    {
      sandboxLithic: test ? sandboxLithic(database, settings.baseUrl, clock) : null,
      paypal: test ? new PaypalSimulator(database, () => clock.now()) : null,
      increase: test,
    },
    settings,
    secretBox,
  );
}

/**
 * What a provider's webhook posted over the network is verified with: a company's own settings
 * only, in either environment. The simulators deliver their webhooks in process, never over HTTP.
 */
export function networkReachesOf(settings: RuntimeSettings, secretBox: SecretBox): ProviderReaches {
  return reachesOf({ sandboxLithic: null, paypal: null, increase: false }, settings, secretBox);
}
