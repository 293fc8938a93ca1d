/**
 * Which provider a company is paid through (Lithic, PayPal, Increase), as one value per provider
 * that the composition root decides once from the environment and hands to the rails, jobs and
 * services: the company's own settings when it stored them (in either environment), else the
 * environment's simulator (the sandbox's, in test), else none (live: that provider's payouts are
 * refused `rail_not_configured`). Nothing below the composition root asks which environment it
 * runs in to pick a provider.
 */
import type { SqlReader } from "../../db/writer.ts";
import type { RailAnswer, RailSubmission } from "./seam.ts";

/** How each company of one environment's database reaches one provider. */
export interface ProviderReach<R> {
  /** The company's reach: its own settings, else the simulator's account; null when neither. */
  read(reader: SqlReader, companyId: string): Promise<R | null>;
  /** Whether the company reaches the provider, without opening sealed settings. */
  serves(reader: SqlReader, companyId: string): Promise<boolean>;
}

/** A company's own settings of one provider, as stored (their secret box bound). */
export interface OwnSettings<S> {
  read(reader: SqlReader, companyId: string): Promise<S | null>;
  has(reader: SqlReader, companyId: string): Promise<boolean>;
}

/**
 * The reach of a provider: `own` settings made a reach by `reachOf`, else `simulator`'s account of
 * the company (null: the environment has no simulator of this provider).
 */
export function providerReach<S, R>(
  own: OwnSettings<S>,
  reachOf: (settings: S) => R,
  simulator: ((companyId: string) => R) | null,
): ProviderReach<R> {
  return {
    async read(reader, companyId) {
      const settings = await own.read(reader, companyId);
      if (settings !== null) return reachOf(settings);
      return simulator?.(companyId) ?? null;
    },
    serves: async (reader, companyId) => simulator !== null || await own.has(reader, companyId),
  };
}

/**
 * A provider rail's submission: the company's reach is read (outside every unit) and `pay` is
 * called with it; without one the submission is refused `rail_not_configured`, never sent.
 */
export async function submitThroughReach<R>(
  reach: ProviderReach<R>,
  provider: { readonly name: string; readonly reader: SqlReader },
  submission: RailSubmission,
  pay: (reach: R) => Promise<RailAnswer>,
): Promise<RailAnswer> {
  const reached = await reach.read(provider.reader, submission.companyId);
  if (reached === null) {
    return {
      kind: "refused",
      reason: "rail_not_configured",
      message:
        `no ${provider.name} settings for company ${submission.companyId}; payout ${submission.payoutId} was not sent`,
    };
  }
  return await pay(reached);
}
