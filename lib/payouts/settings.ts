/**
 * What payout moves and the surfaces need of an environment's settings (offer lifetime, portal
 * links, the bank file approval limit), apart from the rails: the API's routes use these without
 * loading any rail (lib/payouts/runtime.ts composes the rails on the same settings).
 */
import type { Clock } from "../platform/clock.ts";
import { type Config, configDefaults, type Environment } from "../platform/config.ts";
import type { PayoutRuntime } from "./jobs.ts";
import type { RailOptions } from "./runtime.ts";

export interface RuntimeSettings {
  readonly offerTtlDays: number;
  readonly baseUrl: string;
  /** contract §9: portal links expire after this many days (default 30). */
  readonly portalLinkTtlDays?: number;
  /** contract §11: resends a payee may get in any hour (default 5). */
  readonly resendsPerHourMax?: number;
  /** A live bank file over this total waits for a second admin (default $100,000.00). */
  readonly bankFileApprovalLimitCents?: number;
  /** The MICR font CHECK_MICR_FONT named, read at start (default none). */
  readonly micrFont?: Uint8Array | null;
  /** What replaces an environment's bank or a provider's limits in its rails (tests, the simulation). */
  readonly rails?: RailOptions;
  /**
   * Real time, as the service keeps it (the system clock unless a test gives its fake one): the
   * sandbox's Lithic dates what it does on each company's sandbox clock from it.
   */
  readonly clock?: Clock;
  /**
   * Whether API requests are being answered now (the service's metrics): background work that
   * holds the thread rests meanwhile. None: never (tests, commands).
   */
  readonly apiBusy?: () => boolean;
}

/** The runtime settings a configuration gives. */
export function runtimeSettingsOf(config: Config): RuntimeSettings {
  return {
    offerTtlDays: config.limits.OFFER_TTL_DAYS,
    portalLinkTtlDays: config.limits.PORTAL_LINK_TTL_DAYS,
    resendsPerHourMax: config.limits.RESEND_PER_HOUR_MAX,
    bankFileApprovalLimitCents: config.limits.BANK_FILE_APPROVAL_LIMIT_CENTS,
    baseUrl: config.baseUrl,
    micrFont: config.checkMicrFont,
  };
}

/** What payout moves need to know of their environment: its offer lifetime and links. */
export function payoutRuntime(
  environment: Environment,
  settings: RuntimeSettings,
): PayoutRuntime {
  const offerTtlMs = settings.offerTtlDays * 86_400_000;
  return {
    environment,
    offerTtlMs,
    bankFileApprovalLimitCents: settings.bankFileApprovalLimitCents ??
      configDefaults.BANK_FILE_APPROVAL_LIMIT_CENTS,
    micrFont: settings.micrFont ?? null,
    apiBusy: settings.apiBusy ?? (() => false),
    notifications: {
      environment,
      baseUrl: settings.baseUrl,
      linkTtlMs: (settings.portalLinkTtlDays ?? configDefaults.PORTAL_LINK_TTL_DAYS) * 86_400_000,
      resendsPerHourMax: settings.resendsPerHourMax ?? configDefaults.RESEND_PER_HOUR_MAX,
    },
  };
}
