/** What every route may use: the dependencies wired in main.ts and the request's principal. */
import type { Config, Environment } from "../lib/platform/config.ts";
import type { Clock } from "../lib/platform/clock.ts";
import type { Database } from "../db/client.ts";
import type { JobHandlers } from "../db/scheduler.ts";
import type { SecretBox } from "../lib/platform/crypto.ts";
import type { Metrics } from "../lib/platform/metrics.ts";
import type { RateLimiter } from "../lib/platform/rate_limit.ts";
import type { HostResolver } from "../lib/webhooks/endpoint_url.ts";
import type { CredentialCache } from "../lib/identity/credential_cache.ts";
import type { LineIdentity, LineRef, StoredKey } from "../lib/identity/service.ts";

/** The job handlers of each environment. */
export type RailJobs = Readonly<Record<Environment, JobHandlers>>;

export interface AppDeps {
  readonly config: Config;
  readonly databases: Readonly<Record<Environment, Database>>;
  /** Real time: token expiry and key grace run on it (contract §10). */
  readonly clock: Clock;
  /** HS256 key for Surface A access tokens, at least 32 bytes. */
  readonly jwtSecret: Uint8Array;
  /**
   * What runs each kind of due job, per environment (sandbox rails in test): given, or loaded at
   * first use (the service's API answers before the rails' jobs have loaded). Read through
   * railJobsOf.
   */
  readonly jobHandlers: RailJobs | (() => Promise<RailJobs>);
  /** Seals secrets that must stay usable (webhook secrets, responses that show one). */
  readonly secretBox: SecretBox;
  /** Recent line-key lookups; cleared by every rotation and revocation this process makes. */
  readonly lineKeyCache: CredentialCache<{ key: StoredKey; line: LineIdentity }>;
  /** Set when the loopback-only admin endpoint is served. */
  readonly adminToken?: string;
  /** Request counters; shared with the webhook dispatcher, which yields to requests in flight. */
  readonly metrics?: Metrics;
  /**
   * The per-credential limit of /api and /v1 (RATE_LIMIT_RPS), when the API's core shares it
   * (routes/api_core.ts); made from the configuration when not given.
   */
  readonly rateLimiter?: RateLimiter;
  /** Resolves webhook host names at registration; DNS by default. */
  readonly resolveHost?: HostResolver;
  /** Access log sink; one JSON object per request. */
  readonly log?: (entry: Record<string, unknown>) => void;
}

/** The job handlers of each environment, once they have loaded. */
export async function railJobsOf(deps: Pick<AppDeps, "jobHandlers">): Promise<RailJobs> {
  return typeof deps.jobHandlers === "function" ? await deps.jobHandlers() : deps.jobHandlers;
}

/** A Surface A caller: a user acting for one company in one environment. */
export interface ApiPrincipal {
  readonly environment: Environment;
  readonly database: Database;
  readonly userId: string;
  readonly companyId: string;
  /** The company's first business line (the one used when a request names none), or null. */
  readonly firstLine: LineRef | null;
}

/** A Surface B caller: a business-line key of one environment. */
export interface LinePrincipal {
  readonly environment: Environment;
  readonly database: Database;
  readonly keyId: string;
  readonly companyId: string;
  readonly lineId: string;
  readonly lineCode: string;
}

export interface AppEnv {
  Variables: {
    requestId: string;
    apiPrincipal: ApiPrincipal;
    linePrincipal: LinePrincipal;
    /** The request's body as text, decoded once when it was checked to be UTF-8. */
    bodyText: string;
  };
}
