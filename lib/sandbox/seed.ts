/**
 * The sandbox bootstrap of contract §13: on an empty database, two companies (Acme Mutual with
 * lines auto and home, Beacon Casualty with line default), one user each and one user of both,
 * every test line funded with $1,000,000.00 as a received wire, and four operators (two admins, a
 * clerk and a viewer; no TOTP in dev mode). The credentials are written to
 * DATA_DIR/sandbox-credentials.json (mode 0600) because keys and passwords are stored hashed and
 * cannot be shown again.
 */
import type { Clock } from "../platform/clock.ts";
import type { Config } from "../platform/config.ts";
import type { SecretBox } from "../platform/crypto.ts";
import { addFunds } from "../funding/store.ts";
import {
  addMembership,
  createCompany,
  createLine,
  createUser,
  type Databases,
} from "../identity/admin.ts";
import { type SandboxOperator, seedSandboxOperators } from "../operators/service.ts";
import {
  readSandboxSeed,
  recordSandboxSeed,
  releaseSandboxSeedLock,
  takeSandboxSeedLock,
} from "./seed_store.ts";

export interface SandboxCredentials {
  base_url: string;
  companies: {
    name: string;
    tin: string;
    company_api_key: string;
    users: { email: string; api_key_test: string; api_key_live: string }[];
    lines: { line: string; key_test: string; key_live: string }[];
  }[];
  multi_company_user: { email: string; api_key_test: string; api_key_live: string; tins: string[] };
  /** The sandbox's first admin operator, for `deno task admin login` (absent if operators existed). */
  operator?: { email: string; password: string };
  /** Every sandbox operator: two admins, a clerk and a viewer, to try dual control and roles. */
  operators?: SandboxOperator[];
}

const SANDBOX_OPERATORS = [
  { email: "admin@sandbox.test", role: "admin" },
  { email: "admin2@sandbox.test", role: "admin" },
  { email: "clerk@sandbox.test", role: "clerk" },
  { email: "viewer@sandbox.test", role: "viewer" },
] as const;

const SANDBOX_FUNDS_CENTS = 100_000_000;

const seedCompanies = [
  { name: "Acme Mutual", tin: "123456789", user: "ops@acme-mutual.test", lines: ["auto", "home"] },
  {
    name: "Beacon Casualty",
    tin: "987654321",
    user: "ops@beacon-casualty.test",
    lines: ["default"],
  },
] as const;
const multiCompanyUser = "adjuster@shared-services.test";

function unwrap<T>(result: { ok: true; value: T } | { ok: false; message: string }): T {
  if (!result.ok) throw new Error(`sandbox seed failed: ${result.message}`);
  return result.value;
}

async function seed(
  databases: Databases,
  baseUrl: string,
  now: number,
): Promise<SandboxCredentials> {
  const credentials: SandboxCredentials = {
    base_url: baseUrl,
    companies: [],
    multi_company_user: { email: multiCompanyUser, api_key_test: "", api_key_live: "", tins: [] },
  };
  const multi = unwrap(await createUser(databases, { email: multiCompanyUser }, now));
  credentials.multi_company_user.api_key_test = multi.apiKeyTest;
  credentials.multi_company_user.api_key_live = multi.apiKeyLive;
  for (const spec of seedCompanies) {
    // The seeded companies keep the documented sandbox behaviour: an unchosen offer cancels.
    const { company, companyApiKey } = unwrap(
      await createCompany(databases, spec, now, { offerExpiryAction: "cancel", payByDays: null }),
    );
    const user = unwrap(await createUser(databases, { email: spec.user }, now));
    unwrap(await addMembership(databases, { email: spec.user, tin: spec.tin }, now));
    unwrap(await addMembership(databases, { email: multiCompanyUser, tin: spec.tin }, now));
    credentials.multi_company_user.tins.push(spec.tin);
    const lines = [];
    for (const code of spec.lines) {
      const line = unwrap(await createLine(databases, { tin: spec.tin, code }, now));
      const funded = await databases.test.writer.write((tx) =>
        addFunds(
          tx,
          {
            companyId: company.id,
            lineId: line.line.id,
            paymentMethod: "WireTransfer",
            amountCents: SANDBOX_FUNDS_CENTS,
            description: "Sandbox starting funds",
            largeDisbursement: false,
            requestFingerprint: "sandbox-seed",
          },
          "test",
          now,
        )
      );
      unwrap(funded);
      lines.push({ line: code, key_test: line.keyTest, key_live: line.keyLive });
    }
    credentials.companies.push({
      name: company.name,
      tin: company.tin,
      company_api_key: companyApiKey,
      users: [{
        email: user.user.email,
        api_key_test: user.apiKeyTest,
        api_key_live: user.apiKeyLive,
      }],
      lines,
    });
  }
  return credentials;
}

/** How long a node seeding a shared primary holds the seed lock at most. */
export const SANDBOX_SEED_LEASE_MS = 60_000;
/** How often a node waiting for another node's seed looks again. */
const SANDBOX_SEED_POLL_MS = 200;

/** A sandbox on a shared primary that this node cannot use: the start stops with the message. */
export class SandboxSeedError extends Error {}

/** What the sandbox bootstrap needs beside the databases. */
export interface SandboxSeedOptions {
  readonly clock: Clock;
  /** Seals the credentials for the other nodes of a shared primary, and opens theirs. */
  readonly secretBox: SecretBox;
  /** Who takes the seed lock of a shared primary; unique per start. */
  readonly holder?: string;
  /** How long a node waits for another node's seed; default the lease and five polls. */
  readonly waitMs?: number;
}

/**
 * Seeds an empty sandbox and writes the credentials file, or reads the credentials of an earlier
 * seed. Returns null when the data exists but its credentials cannot be found. On a shared
 * primary exactly one node seeds, under the database's seed lock; the others wait for its sealed
 * credentials (bounded), and write them to their own DATA_DIR with their own base URL.
 */
export async function loadOrSeedSandbox(
  databases: Databases,
  config: Pick<Config, "dataDir" | "baseUrl">,
  options: SandboxSeedOptions,
): Promise<SandboxCredentials | null> {
  if (databases.test.shared) return await loadOrSeedShared(databases, config, options);
  const now = options.clock.now();
  if (await countCompanies(databases) > 0) return await loadEarlierSeed(databases, config, now);
  return await writeCredentials(config, await seedWithOperator(databases, config.baseUrl, now));
}

async function loadOrSeedShared(
  databases: Databases,
  config: Pick<Config, "dataDir" | "baseUrl">,
  options: SandboxSeedOptions,
): Promise<SandboxCredentials | null> {
  const { writer, readClient } = databases.test;
  const holder = options.holder ?? `${Deno.hostname()}:${Deno.pid}:${crypto.randomUUID()}`;
  const pollsMax = Math.ceil(
    (options.waitMs ?? SANDBOX_SEED_LEASE_MS + SANDBOX_SEED_POLL_MS * 5) / SANDBOX_SEED_POLL_MS,
  );
  for (let poll = 0;; poll++) {
    const lock = { holder, now: options.clock.now(), leaseMs: SANDBOX_SEED_LEASE_MS };
    if (await takeSandboxSeedLock(writer, lock)) break;
    const row = await readSandboxSeed(readClient);
    if (row?.credentialsSealed) {
      const seeded = await openSealedCredentials(options.secretBox, row.credentialsSealed);
      return await writeCredentials(config, { ...seeded, base_url: config.baseUrl });
    }
    if (poll >= pollsMax) {
      throw new SandboxSeedError(
        `the sandbox seed lock of DATABASE_URL_TEST is held by ${row?.holder} until ${
          new Date(row?.leaseUntil ?? 0).toISOString()
        } and no seed was recorded after ${poll} polls of ${SANDBOX_SEED_POLL_MS} ms: another ` +
          "node seeds; start this node again after it",
      );
    }
    await new Promise((resolve) => setTimeout(resolve, SANDBOX_SEED_POLL_MS));
  }
  let recorded = false;
  try {
    // Data seeded before the seed row existed (or by a node that died part-way) is not seeded again.
    if (await countCompanies(databases) > 0) {
      return await loadEarlierSeed(databases, config, options.clock.now());
    }
    const credentials = await seedWithOperator(databases, config.baseUrl, options.clock.now());
    await recordSandboxSeed(writer, {
      holder,
      credentialsSealed: await options.secretBox.sealText(JSON.stringify(credentials)),
    });
    recorded = true;
    return await writeCredentials(config, credentials);
  } finally {
    if (!recorded) await releaseSandboxSeedLock(writer, holder);
  }
}

async function openSealedCredentials(
  secretBox: SecretBox,
  sealed: string,
): Promise<SandboxCredentials> {
  try {
    return JSON.parse(await secretBox.openText(sealed)) as SandboxCredentials;
  } catch (error) {
    throw new SandboxSeedError(
      "the sandbox credentials another node sealed in DATABASE_URL_TEST do not open with this " +
        `node's ENCRYPTION_KEY (${(error as Error).message}): give every node the same ` +
        "ENCRYPTION_KEY and JWT_SECRET",
    );
  }
}

async function countCompanies(databases: Databases): Promise<number> {
  const { rows } = await databases.test.readClient.execute("SELECT count(*) AS n FROM companies");
  return Number(rows[0].n);
}

async function seedWithOperator(
  databases: Databases,
  baseUrl: string,
  now: number,
): Promise<SandboxCredentials> {
  const credentials = await seed(databases, baseUrl, now);
  return await withOperators(databases, credentials, now);
}

/** The sandbox operators not yet there, added to the credentials (the first admin as `operator`). */
async function withOperators(
  databases: Databases,
  credentials: SandboxCredentials,
  now: number,
): Promise<SandboxCredentials> {
  const created = await seedSandboxOperators(databases, SANDBOX_OPERATORS, now);
  const known = credentials.operator ? [{ ...credentials.operator, role: "admin" as const }] : [];
  const operators = [...(credentials.operators ?? known), ...created];
  const first = operators.find((operator) => operator.email === SANDBOX_OPERATORS[0].email);
  return {
    ...credentials,
    ...(first ? { operator: { email: first.email, password: first.password } } : {}),
    ...(operators.length > 0 ? { operators } : {}),
  };
}

/** The credentials file of an earlier seed, brought up to date; null when it was removed. */
async function loadEarlierSeed(
  databases: Databases,
  config: Pick<Config, "dataDir" | "baseUrl">,
  now: number,
): Promise<SandboxCredentials | null> {
  let credentials: SandboxCredentials;
  try {
    credentials = JSON.parse(
      await Deno.readTextFile(credentialsFile(config)),
    ) as SandboxCredentials;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
  if (credentials.base_url === config.baseUrl && credentials.operators) return credentials;
  credentials.base_url = config.baseUrl;
  // A sandbox seeded before its four operators existed gets the missing ones on the next start.
  return await writeCredentials(config, await withOperators(databases, credentials, now));
}

function credentialsFile(config: Pick<Config, "dataDir">): string {
  return `${config.dataDir}/sandbox-credentials.json`;
}

async function writeCredentials(
  config: Pick<Config, "dataDir">,
  credentials: SandboxCredentials,
): Promise<SandboxCredentials> {
  const file = credentialsFile(config);
  await Deno.writeTextFile(file, JSON.stringify(credentials, null, 2) + "\n", { mode: 0o600 });
  await Deno.chmod(file, 0o600);
  return credentials;
}
