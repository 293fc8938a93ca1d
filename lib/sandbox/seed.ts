/**
 * The sandbox bootstrap of DESIGN 13: on an empty database, two companies (Acme Mutual with lines
 * auto and home, Beacon Casualty with line default), one user each and one user of both, every
 * test line funded with $1,000,000.00 as a received wire, and one admin operator (no TOTP in dev
 * mode). The credentials are written to DATA_DIR/sandbox-credentials.json (mode 0600) because
 * keys and passwords are stored hashed and cannot be shown again.
 */
import type { Config } from "../platform/config.ts";
import { addFunds } from "../funding/store.ts";
import {
  addMembership,
  createCompany,
  createLine,
  createUser,
  type Databases,
} from "../identity/admin.ts";
import { seedSandboxAdmin } from "../operators/service.ts";

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
  /** The sandbox's admin operator, for `deno task admin login` (absent if operators existed). */
  operator?: { email: string; password: string };
}

const SANDBOX_OPERATOR_EMAIL = "admin@sandbox.test";

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
    const { company, companyApiKey } = unwrap(await createCompany(databases, spec, now));
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

/**
 * Seeds an empty sandbox and writes the credentials file, or reads the file of an earlier seed.
 * Returns null when the data exists but its credentials file was removed.
 */
export async function loadOrSeedSandbox(
  databases: Databases,
  config: Config,
  now: number,
): Promise<SandboxCredentials | null> {
  const file = `${config.dataDir}/sandbox-credentials.json`;
  const { rows } = await databases.test.readClient.execute("SELECT count(*) AS n FROM companies");
  let credentials: SandboxCredentials;
  if (Number(rows[0].n) === 0) {
    credentials = await seed(databases, config.baseUrl, now);
  } else {
    try {
      credentials = JSON.parse(await Deno.readTextFile(file)) as SandboxCredentials;
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return null;
      throw error;
    }
    if (credentials.base_url === config.baseUrl && credentials.operator) return credentials;
    credentials.base_url = config.baseUrl;
  }
  // A sandbox seeded before operators existed gets its admin on the next start.
  credentials.operator ??= await seedSandboxAdmin(databases, SANDBOX_OPERATOR_EMAIL, now) ??
    undefined;
  await Deno.writeTextFile(file, JSON.stringify(credentials, null, 2) + "\n", { mode: 0o600 });
  await Deno.chmod(file, 0o600);
  return credentials;
}
