/**
 * A company's bank settings (pure rules): what they hold, how they are checked, and the sandbox
 * bank's settings every test company gets. CONTRACT STUB: owned by the bank-settings helper.
 */
import type { Result } from "../platform/result.ts";

/** A same-day entry is at most this much; a larger one waits for the next next-day cutoff. */
export const SAME_DAY_ENTRY_MAX_CENTS = 100_000_000;

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
}

/** Checks bank settings given as JSON (`bank:set --file`), naming the first wrong field. */
export function checkBankSettings(
  _input: unknown,
  _environment: "test" | "live",
): Result<BankSettings, "invalid_input"> {
  throw new Error("not built yet");
}

/** The sandbox bank's settings: what every test-environment company has unless it sets its own. */
export function sandboxBankSettings(_companyName: string): BankSettings {
  throw new Error("not built yet");
}

/** The settings as a viewer may see them: account numbers masked, SFTP secrets left out. */
export function maskedBankSettings(_settings: BankSettings): Record<string, unknown> {
  throw new Error("not built yet");
}
