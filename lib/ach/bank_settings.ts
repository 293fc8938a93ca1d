/**
 * A company's bank settings (pure rules): what they hold, how they are checked, and the sandbox
 * bank's settings every test company gets.
 */
import * as v from "valibot";
import { ok, refuse, type Result } from "../platform/result.ts";
import { isValidRoutingNumber } from "../portal/method_details.ts";
import { FED_LAST_SAME_DAY_WINDOW, latestNewYorkTime } from "./cutoffs.ts";
import {
  type CheckAccount,
  checkAccountInput,
  checkAccountJson,
  checkAccountOf,
  maskedCheckAccount,
  sandboxCheckAccount,
} from "../checks/account.ts";

/** A same-day entry is at most this much; a larger one waits for the next next-day cutoff. */
export const SAME_DAY_ENTRY_MAX_CENTS = 100_000_000;

/** Cutoffs a schedule may hold at most. */
export const CUTOFFS_MAX = 8;
export const TRANSMIT_WINDOW_MINUTES_MIN = 5;
export const TRANSMIT_WINDOW_MINUTES_MAX = 240;
export const TRANSMIT_WINDOW_MINUTES_DEFAULT = 30;
export const TIME_ZONE_DEFAULT = "America/New_York";
/** NACHA field widths: the file header's names, the batch's company name, an entry's name. */
export const HEADER_NAME_LENGTH_MAX = 23;
export const COMPANY_NAME_LENGTH_MAX = 16;
export const ACCOUNT_NAME_LENGTH_MAX = 22;

/** The sandbox bank's routing number (check digit valid): destination, ODFI and its accounts. */
export const SANDBOX_BANK_ROUTING = "021000021";

/**
 * The sandbox bank's cutoffs, New York time: same-day at 10:30 and 14:45, next-day at 17:00.
 * The ACH pipeline builds test-environment files at these times of the company's sandbox clock,
 * and the README publishes them with the sandbox timeline.
 */
export const SANDBOX_CUTOFFS: readonly Cutoff[] = [
  { time: "10:30", kind: "same_day" },
  { time: "14:45", kind: "same_day" },
  { time: "17:00", kind: "next_day" },
];

export interface Cutoff {
  /** Bank-local time, HH:MM (24 h). */
  readonly time: string;
  readonly kind: "same_day" | "next_day";
}

export interface BankAccount {
  readonly routingNumber: string;
  readonly accountNumber: string;
  readonly accountType: "checking" | "savings";
  /** The account holder's name as the file writes it (the company's, for its own accounts). */
  readonly name: string;
}

export interface SftpTarget {
  readonly host: string;
  readonly port: number;
  readonly username: string;
  /** An OpenSSH private key, or a password; one of the two. */
  readonly privateKey: string | null;
  readonly password: string | null;
  /** The server's host key as `SHA256:…` (ssh-keygen -lf); null accepts any (refused in live). */
  readonly hostKeyFingerprint: string | null;
  readonly outboundDir: string;
  readonly inboundDir: string;
}

export interface BankSettings {
  /** The bank's 9-digit routing number and name (file header). */
  readonly immediateDestination: string;
  readonly immediateDestinationName: string;
  /** 10 characters, and the originator's name (file header). */
  readonly immediateOrigin: string;
  readonly immediateOriginName: string;
  /** The ODFI's 9-digit routing number, check digit verified. */
  readonly odfiRouting: string;
  /** 10 characters. */
  readonly companyIdentification: string;
  /** At most 16 characters, uppercase ASCII. */
  readonly companyName: string;
  /** The company's own account, debited for ACH funding. */
  readonly fundingAccount: BankAccount;
  /** The account at the ODFI the credits settle against; a balanced file offsets to it. */
  readonly settlementAccount: BankAccount;
  readonly balancedFile: boolean;
  /** IANA time zone of the cutoffs (default America/New_York). */
  readonly timeZone: string;
  readonly cutoffs: readonly Cutoff[];
  /** How long after its cutoff a file may still be transmitted (default 30). */
  readonly transmitWindowMinutes: number;
  /** Live only: where files go and returns come from; null: files wait for download. */
  readonly sftp: SftpTarget | null;
  /**
   * The account checks are drawn on (issue 19), null when the company pays no checks. Settings
   * stored before checks existed have none (undefined reads as null).
   */
  readonly checkAccount?: CheckAccount | null;
  /**
   * The account numbers the bank's statements cover (BAI2 or camt.053, lib/reconciliation).
   * Absent: the settlement account and the check account.
   */
  readonly statementAccounts?: readonly string[];
  /**
   * The statement account each payment provider settles from (draws the payments it makes on, and
   * pays back what comes back), when it touches one: reconciliation then expects its moves there.
   * A provider not named keeps its own funded balance (PayPal's batches are still matched on the
   * settlement account when the bank reports them).
   */
  readonly providerAccounts?: ProviderAccounts;
}

/** The payment providers whose settlements a statement account may show. */
export const settlementProviders = ["paypal", "lithic", "increase"] as const;
export type SettlementProvider = (typeof settlementProviders)[number];
export type ProviderAccounts = Readonly<Partial<Record<SettlementProvider, string>>>;

/** A company's statement accounts may be at most this many. */
export const STATEMENT_ACCOUNTS_MAX = 10;

/** Printable ASCII, what every alphanumeric NACHA field may hold. */
const PRINTABLE_ASCII = /^[\x20-\x7E]*$/;
const COMPANY_NAME_CHARACTERS = /^[A-Z0-9 \-.,&/']+$/;
const CUTOFF_TIME = /^([01]\d|2[0-3]):[0-5]\d$/;
const HOST_KEY_FINGERPRINT = /^SHA256:[A-Za-z0-9+/]{43}=?$/;

function routingNumber(name: string) {
  return v.pipe(
    v.string(`${name} must be a string of 9 digits`),
    v.regex(/^\d{9}$/, (issue) => `${name} ${JSON.stringify(issue.input)}: 9 digits`),
    v.check(
      isValidRoutingNumber,
      (issue) =>
        `${name} ${
          JSON.stringify(issue.input)
        }: the check digit does not match (not an ABA routing number)`,
    ),
  );
}

function asciiName(name: string, lengthMax: number) {
  return v.pipe(
    v.string(`${name} must be a string`),
    v.minLength(1, `${name} must not be empty`),
    v.maxLength(
      lengthMax,
      (issue) =>
        `${name} ${JSON.stringify(issue.input)}: at most ${lengthMax} characters, got ${
          (issue.input as string).length
        }`,
    ),
    v.regex(
      PRINTABLE_ASCII,
      (issue) => `${name} ${JSON.stringify(issue.input)}: printable ASCII only`,
    ),
  );
}

function tenCharacters(name: string) {
  return v.pipe(
    v.string(`${name} must be a string`),
    v.check(
      (text) => text.length === 10 && PRINTABLE_ASCII.test(text),
      (issue) =>
        `${name} ${JSON.stringify(issue.input)}: exactly 10 characters of printable ASCII, got ${
          String(issue.input).length
        }`,
    ),
  );
}

function bankAccount(name: string) {
  return v.strictObject({
    routing_number: routingNumber(`${name}.routing_number`),
    account_number: v.pipe(
      v.string(`${name}.account_number must be a string of 4 to 17 digits`),
      v.regex(/^\d{4,17}$/, `${name}.account_number: 4 to 17 digits`),
    ),
    account_type: v.picklist(
      ["checking", "savings"],
      `${name}.account_type: checking or savings`,
    ),
    name: asciiName(`${name}.name`, ACCOUNT_NAME_LENGTH_MAX),
  }, (issue) => `${name}: ${issueWords(issue)}`);
}

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

const directory = (name: string) =>
  v.pipe(
    v.string(`${name} must be a string`),
    v.minLength(1, `${name} must not be empty`),
    v.maxLength(1000, `${name} is at most 1000 characters`),
    v.regex(PRINTABLE_ASCII, `${name}: printable ASCII only`),
  );

/** The account number a provider settles from (one of the statement accounts). */
const providerAccount = (provider: SettlementProvider) =>
  v.optional(v.pipe(
    v.string(`provider_accounts.${provider}: an account number as a string`),
    v.regex(/^\d{4,17}$/, `provider_accounts.${provider}: an account number of 4 to 17 digits`),
  ));

const sftpTarget = v.strictObject({
  host: v.pipe(
    v.string("sftp.host must be a string"),
    v.regex(/^[A-Za-z0-9.\-:\[\]]{1,253}$/, "sftp.host: a host name or IP address"),
  ),
  port: v.optional(
    v.pipe(
      v.number("sftp.port must be a number"),
      v.integer("sftp.port must be a whole number"),
      v.minValue(1, "sftp.port: 1 to 65535"),
      v.maxValue(65535, "sftp.port: 1 to 65535"),
    ),
    22,
  ),
  username: asciiName("sftp.username", 255),
  private_key: v.optional(
    v.nullable(v.pipe(
      v.string("sftp.private_key must be a string"),
      v.regex(/-----BEGIN [A-Z ]*PRIVATE KEY-----/, "sftp.private_key: an OpenSSH private key"),
    )),
    null,
  ),
  password: v.optional(
    v.nullable(v.pipe(
      v.string("sftp.password must be a string"),
      v.minLength(1, "sftp.password must not be empty"),
      v.maxLength(1000, "sftp.password is at most 1000 characters"),
    )),
    null,
  ),
  host_key_fingerprint: v.optional(
    v.nullable(v.pipe(
      v.string("sftp.host_key_fingerprint must be a string"),
      v.regex(
        HOST_KEY_FINGERPRINT,
        (issue) =>
          `sftp.host_key_fingerprint ${
            JSON.stringify(issue.input)
          }: SHA256:<43 base64 characters>, as ssh-keygen -lf prints it`,
      ),
    )),
    null,
  ),
  outbound_dir: directory("sftp.outbound_dir"),
  inbound_dir: directory("sftp.inbound_dir"),
}, (issue) => `sftp: ${issueWords(issue)}`);

const cutoff = v.strictObject({
  time: v.pipe(
    v.string("time must be a string HH:MM"),
    v.regex(CUTOFF_TIME, (issue) => `${JSON.stringify(issue.input)}: a time HH:MM, 00:00 to 23:59`),
  ),
  kind: v.picklist(["same_day", "next_day"], "kind: same_day or next_day"),
}, (issue) => `a cutoff: ${issueWords(issue)}`);

const bankSettingsInput = v.strictObject({
  immediate_destination: routingNumber("immediate_destination"),
  immediate_destination_name: asciiName("immediate_destination_name", HEADER_NAME_LENGTH_MAX),
  immediate_origin: tenCharacters("immediate_origin"),
  immediate_origin_name: asciiName("immediate_origin_name", HEADER_NAME_LENGTH_MAX),
  odfi_routing: routingNumber("odfi_routing"),
  company_identification: tenCharacters("company_identification"),
  company_name: v.pipe(
    v.string("company_name must be a string"),
    v.check(
      (name) => name.length >= 1 && name.length <= COMPANY_NAME_LENGTH_MAX,
      (issue) =>
        `company_name ${
          JSON.stringify(issue.input)
        }: 1 to ${COMPANY_NAME_LENGTH_MAX} characters, got ${String(issue.input).length}`,
    ),
    v.regex(
      COMPANY_NAME_CHARACTERS,
      (issue) =>
        `company_name ${
          JSON.stringify(issue.input)
        }: uppercase ASCII letters, digits, spaces and - . , & / ' only (it is written as given)`,
    ),
  ),
  funding_account: bankAccount("funding_account"),
  settlement_account: bankAccount("settlement_account"),
  balanced_file: v.boolean("balanced_file must be true or false"),
  time_zone: v.optional(
    v.pipe(
      v.string("time_zone must be a string"),
      v.check(
        isTimeZone,
        (issue) =>
          `time_zone ${JSON.stringify(issue.input)}: an IANA time zone, e.g. America/New_York`,
      ),
    ),
    TIME_ZONE_DEFAULT,
  ),
  cutoffs: v.pipe(
    v.array(cutoff, "cutoffs must be a list of {time, kind}"),
    v.minLength(1, "cutoffs: at least one cutoff"),
    v.maxLength(CUTOFFS_MAX, `cutoffs: at most ${CUTOFFS_MAX}`),
  ),
  transmit_window_minutes: v.optional(
    v.pipe(
      v.number("transmit_window_minutes must be a number"),
      v.integer("transmit_window_minutes must be a whole number"),
      v.minValue(
        TRANSMIT_WINDOW_MINUTES_MIN,
        `transmit_window_minutes: ${TRANSMIT_WINDOW_MINUTES_MIN} to ${TRANSMIT_WINDOW_MINUTES_MAX}`,
      ),
      v.maxValue(
        TRANSMIT_WINDOW_MINUTES_MAX,
        `transmit_window_minutes: ${TRANSMIT_WINDOW_MINUTES_MIN} to ${TRANSMIT_WINDOW_MINUTES_MAX}`,
      ),
    ),
    TRANSMIT_WINDOW_MINUTES_DEFAULT,
  ),
  sftp: v.optional(v.nullable(sftpTarget), null),
  check_account: v.optional(v.nullable(checkAccountInput), null),
  statement_accounts: v.optional(
    v.nullable(v.pipe(
      v.array(
        v.pipe(
          v.string("statement_accounts: account numbers as strings of 4 to 17 digits"),
          v.regex(/^\d{4,17}$/, "statement_accounts: account numbers of 4 to 17 digits"),
        ),
        "statement_accounts must be a list of account numbers",
      ),
      v.minLength(1, "statement_accounts: at least one account (or null)"),
      v.maxLength(STATEMENT_ACCOUNTS_MAX, `statement_accounts: at most ${STATEMENT_ACCOUNTS_MAX}`),
    )),
    null,
  ),
  provider_accounts: v.optional(
    v.nullable(v.strictObject(
      {
        paypal: providerAccount("paypal"),
        lithic: providerAccount("lithic"),
        increase: providerAccount("increase"),
      } satisfies Record<SettlementProvider, unknown>,
      (issue) => `provider_accounts: ${issueWords(issue)} (${settlementProviders.join(", ")})`,
    )),
    null,
  ),
}, (issue) => `bank settings: ${issueWords(issue)}`);

/** What an unknown or missing key issue says. */
function issueWords(issue: v.BaseIssue<unknown>): string {
  if (issue.expected === "never") return "this field is not a bank setting";
  if (issue.received === "undefined") return "this field is required";
  return `expected ${issue.expected}, got ${issue.received}`;
}

/** The field path of an issue as a refusal names it: `cutoffs[1].time`, `funding_account.name`. */
function fieldPath(path: readonly { key: unknown }[] | undefined): string {
  let out = "";
  for (const item of path ?? []) {
    out += typeof item.key === "number" ? `[${item.key}]` : `${out ? "." : ""}${item.key}`;
  }
  return out;
}

function invalid(field: string, message: string) {
  return refuse("invalid_input", message.startsWith(field) ? message : `${field}: ${message}`, {
    field,
  });
}

/** Checks bank settings given as JSON (`bank:set --file`), naming the first wrong field. */
export function checkBankSettings(
  input: unknown,
  environment: "test" | "live",
): Result<BankSettings, "invalid_input"> {
  const parsed = v.safeParse(bankSettingsInput, input);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const field = fieldPath(issue.path) || "settings";
    return invalid(field, issue.message);
  }
  const s = parsed.output;
  const seen = new Map<string, number>();
  for (const [index, { time }] of s.cutoffs.entries()) {
    const first = seen.get(time);
    if (first !== undefined) {
      return invalid(
        `cutoffs[${index}].time`,
        `cutoffs[${index}].time ${JSON.stringify(time)}: the same time as cutoffs[${first}]`,
      );
    }
    seen.set(time, index);
  }
  for (const [index, { time, kind }] of s.cutoffs.entries()) {
    if (kind !== "same_day") continue;
    const window = FED_LAST_SAME_DAY_WINDOW;
    const newYork = latestNewYorkTime(time, s.time_zone);
    if (newYork >= window.time) {
      const there = s.time_zone === window.timeZone ? "" : ` (${newYork} in New York)`;
      return invalid(
        `cutoffs[${index}].time`,
        `cutoffs[${index}].time ${JSON.stringify(time)}${there}: a same_day cutoff must fall ` +
          `before the Federal Reserve's last same-day window, ${window.time} New York time; ` +
          "the bank may set an earlier one",
      );
    }
  }
  if (!s.cutoffs.some((c) => c.kind === "next_day")) {
    return invalid(
      "cutoffs",
      `cutoffs: at least one next_day cutoff (entries over the same-day limit of $1,000,000.00 wait for one)`,
    );
  }
  if (s.sftp !== null) {
    if (!ENVIRONMENT_BANKS[environment].filesLeaveMachine) {
      return invalid(
        "sftp",
        "sftp: test files never leave the machine, so the test environment takes no SFTP target (give null)",
      );
    }
    if ((s.sftp.private_key === null) === (s.sftp.password === null)) {
      return invalid("sftp", "sftp: give exactly one of private_key and password");
    }
    if (s.sftp.host_key_fingerprint === null) {
      return invalid(
        "sftp.host_key_fingerprint",
        "sftp.host_key_fingerprint: required in live (SHA256:…, from ssh-keygen -lf of the bank's host key)",
      );
    }
  }
  const providerAccounts = s.provider_accounts === null ? null : Object.fromEntries(
    Object.entries(s.provider_accounts).filter(([, number]) => number !== undefined),
  ) as ProviderAccounts;
  if (providerAccounts !== null) {
    const covered = statementNumbersOf(
      s.settlement_account.account_number,
      s.check_account?.account_number ?? null,
      s.statement_accounts,
    );
    for (const [provider, number] of Object.entries(providerAccounts)) {
      if (!covered.includes(number!)) {
        return invalid(
          `provider_accounts.${provider}`,
          `provider_accounts.${provider}: ${
            maskedAccountNumber(number!)
          } is not one of the statement accounts (the settlement and check accounts unless statement_accounts names others)`,
        );
      }
    }
  }
  const account = (a: typeof s.funding_account): BankAccount => ({
    routingNumber: a.routing_number,
    accountNumber: a.account_number,
    accountType: a.account_type,
    name: a.name,
  });
  return ok({
    immediateDestination: s.immediate_destination,
    immediateDestinationName: s.immediate_destination_name,
    immediateOrigin: s.immediate_origin,
    immediateOriginName: s.immediate_origin_name,
    odfiRouting: s.odfi_routing,
    companyIdentification: s.company_identification,
    companyName: s.company_name,
    fundingAccount: account(s.funding_account),
    settlementAccount: account(s.settlement_account),
    balancedFile: s.balanced_file,
    timeZone: s.time_zone,
    cutoffs: [...s.cutoffs].sort((a, b) => a.time.localeCompare(b.time)),
    transmitWindowMinutes: s.transmit_window_minutes,
    sftp: s.sftp === null ? null : {
      host: s.sftp.host,
      port: s.sftp.port,
      username: s.sftp.username,
      privateKey: s.sftp.private_key,
      password: s.sftp.password,
      hostKeyFingerprint: s.sftp.host_key_fingerprint,
      outboundDir: s.sftp.outbound_dir,
      inboundDir: s.sftp.inbound_dir,
    },
    checkAccount: s.check_account === null ? null : checkAccountOf(s.check_account),
    ...(s.statement_accounts === null ? {} : { statementAccounts: s.statement_accounts }),
    ...(providerAccounts === null ? {} : { providerAccounts }),
  });
}

/** Settings back in the JSON shape `bank:set --file` takes (what `checkBankSettings` reads). */
export function bankSettingsJson(settings: BankSettings): Record<string, unknown> {
  const account = (a: BankAccount) => ({
    routing_number: a.routingNumber,
    account_number: a.accountNumber,
    account_type: a.accountType,
    name: a.name,
  });
  return {
    immediate_destination: settings.immediateDestination,
    immediate_destination_name: settings.immediateDestinationName,
    immediate_origin: settings.immediateOrigin,
    immediate_origin_name: settings.immediateOriginName,
    odfi_routing: settings.odfiRouting,
    company_identification: settings.companyIdentification,
    company_name: settings.companyName,
    funding_account: account(settings.fundingAccount),
    settlement_account: account(settings.settlementAccount),
    balanced_file: settings.balancedFile,
    time_zone: settings.timeZone,
    cutoffs: settings.cutoffs.map((c) => ({ time: c.time, kind: c.kind })),
    transmit_window_minutes: settings.transmitWindowMinutes,
    sftp: settings.sftp === null ? null : {
      host: settings.sftp.host,
      port: settings.sftp.port,
      username: settings.sftp.username,
      private_key: settings.sftp.privateKey,
      password: settings.sftp.password,
      host_key_fingerprint: settings.sftp.hostKeyFingerprint,
      outbound_dir: settings.sftp.outboundDir,
      inbound_dir: settings.sftp.inboundDir,
    },
    check_account: settings.checkAccount ? checkAccountJson(settings.checkAccount) : null,
    ...(settings.statementAccounts ? { statement_accounts: [...settings.statementAccounts] } : {}),
    ...(settings.providerAccounts ? { provider_accounts: { ...settings.providerAccounts } } : {}),
  };
}

/**
 * Text folded to uppercase ASCII the way a bank file writes names: accents dropped (é → E),
 * ligatures and a few letters spelled out (ß → SS, Æ → AE), anything else left out.
 */
export function uppercaseAscii(text: string): string {
  return text
    .replace(/ß/g, "ss").replace(/[Ææ]/g, "AE").replace(/[Œœ]/g, "OE").replace(/[Øø]/g, "O")
    .replace(/[Łł]/g, "L").replace(/[Đđ]/g, "D").replace(/[Þþ]/g, "TH")
    .normalize("NFKD").replace(/[\u0300-\u036f]/g, "")
    .toUpperCase()
    .replace(/[^\x20-\x7E]/g, "");
}

/** Nine digits derived from a name, for a sandbox identification when no TIN is at hand. */
function digitsOf(text: string): string {
  let hash = 2166136261;
  for (const unit of new TextEncoder().encode(text)) hash = Math.imul(hash ^ unit, 16777619);
  return String(hash >>> 0).padStart(10, "0").slice(-9);
}

/**
 * What an environment's bank is, beyond a company's stored settings. The composition root
 * (lib/payouts/runtime.ts) gives each environment the transports of the same bank; rail code asks
 * its bank what it does, never which environment it runs in.
 */
export interface EnvironmentBank {
  /**
   * The settings of a company that stored none (the sandbox bank gives every company its own);
   * null where a company has a bank only once its settings are stored.
   */
  readonly standInSettings: ((companyName: string, tin?: string) => BankSettings) | null;
  /** Whether its files may leave the machine (an SFTP target, inbound polling). */
  readonly filesLeaveMachine: boolean;
}

/** The sandbox bank: every company has it, and its files never leave the machine. */
export const SANDBOX_BANK: EnvironmentBank = {
  standInSettings: (companyName, tin) => sandboxBankSettings(companyName, tin),
  filesLeaveMachine: false,
};

/** A company's own bank in live: only once its settings are stored. */
export const COMPANY_BANK: EnvironmentBank = { standInSettings: null, filesLeaveMachine: true };

/** Each environment's bank. */
export const ENVIRONMENT_BANKS: Readonly<Record<"test" | "live", EnvironmentBank>> = {
  test: SANDBOX_BANK,
  live: COMPANY_BANK,
};

/** The sandbox settlement account every test company has unless it sets its own. */
export const SANDBOX_SETTLEMENT_ACCOUNT = "000900000002";

/**
 * The sandbox bank's settings: what every test-environment company has unless it sets its own.
 * The company identification is `1` and its TIN (or, without one, nine digits of its name).
 */
export function sandboxBankSettings(companyName: string, tin?: string): BankSettings {
  const folded = uppercaseAscii(companyName).replace(/[^A-Z0-9 \-.,&/']/g, "").replace(
    /\s+/g,
    " ",
  ).trim();
  const name16 = folded.slice(0, COMPANY_NAME_LENGTH_MAX).trimEnd() || "SANDBOX COMPANY";
  const identification = `1${tin && /^\d{9}$/.test(tin) ? tin : digitsOf(companyName)}`;
  const account = (accountNumber: string): BankAccount => ({
    routingNumber: SANDBOX_BANK_ROUTING,
    accountNumber,
    accountType: "checking",
    name: folded.slice(0, ACCOUNT_NAME_LENGTH_MAX).trimEnd() || name16,
  });
  return {
    immediateDestination: SANDBOX_BANK_ROUTING,
    immediateDestinationName: "SANDBOX BANK",
    immediateOrigin: identification,
    immediateOriginName: folded.slice(0, HEADER_NAME_LENGTH_MAX).trimEnd() || name16,
    odfiRouting: SANDBOX_BANK_ROUTING,
    companyIdentification: identification,
    companyName: name16,
    fundingAccount: account("000900000001"),
    settlementAccount: account(SANDBOX_SETTLEMENT_ACCOUNT),
    balancedFile: false,
    timeZone: TIME_ZONE_DEFAULT,
    cutoffs: SANDBOX_CUTOFFS,
    transmitWindowMinutes: TRANSMIT_WINDOW_MINUTES_DEFAULT,
    sftp: null,
    checkAccount: sandboxCheckAccount(companyName),
    // The sandbox's providers draw on the sandbox settlement account, so its statements show them.
    providerAccounts: Object.fromEntries(
      settlementProviders.map((provider) => [provider, SANDBOX_SETTLEMENT_ACCOUNT]),
    ),
  };
}

/** An account number as a viewer may see it: `••••` and its last four digits. */
export function maskedAccountNumber(accountNumber: string): string {
  return `••••${accountNumber.slice(-4)}`;
}

/** The settings as a viewer may see them: account numbers masked, SFTP secrets left out. */
export function maskedBankSettings(settings: BankSettings): Record<string, unknown> {
  const json = bankSettingsJson(settings);
  const account = (a: BankAccount) => ({
    routing_number: a.routingNumber,
    account_number: maskedAccountNumber(a.accountNumber),
    account_type: a.accountType,
    name: a.name,
  });
  const sftp = settings.sftp;
  return {
    ...json,
    funding_account: account(settings.fundingAccount),
    settlement_account: account(settings.settlementAccount),
    sftp: sftp === null ? null : {
      host: sftp.host,
      port: sftp.port,
      username: sftp.username,
      auth: sftp.privateKey !== null ? "private_key" : "password",
      configured: true,
      host_key_fingerprint: sftp.hostKeyFingerprint,
      outbound_dir: sftp.outboundDir,
      inbound_dir: sftp.inboundDir,
    },
    check_account: settings.checkAccount ? maskedCheckAccount(settings.checkAccount) : null,
    ...(settings.statementAccounts
      ? { statement_accounts: settings.statementAccounts.map(maskedAccountNumber) }
      : {}),
    ...(settings.providerAccounts
      ? {
        provider_accounts: Object.fromEntries(
          Object.entries(settings.providerAccounts).map(([p, n]) => [p, maskedAccountNumber(n!)]),
        ),
      }
      : {}),
  };
}

/** The account numbers the company's bank statements cover, each with what it is to the company. */
export function statementAccountsOf(
  settings: BankSettings,
): { accountNumber: string; role: "settlement" | "check" | "settlement_check" | "other" }[] {
  const settlement = settings.settlementAccount.accountNumber;
  const check = settings.checkAccount?.accountNumber ?? null;
  const numbers = statementNumbersOf(settlement, check, settings.statementAccounts ?? null);
  return numbers.map((accountNumber) => ({
    accountNumber,
    role: accountNumber === settlement
      ? (accountNumber === check ? "settlement_check" : "settlement")
      : accountNumber === check
      ? "check"
      : "other",
  }));
}

/** The statement account numbers: those named, else the settlement account and the check account. */
function statementNumbersOf(
  settlement: string,
  check: string | null,
  named: readonly string[] | null,
): string[] {
  return [...new Set(named ?? [settlement, ...(check !== null ? [check] : [])])];
}

/** The providers that settle from `accountNumber`, by the settings. */
export function providersSettlingFrom(
  settings: BankSettings,
  accountNumber: string,
): SettlementProvider[] {
  return settlementProviders.filter((p) => settings.providerAccounts?.[p] === accountNumber);
}
