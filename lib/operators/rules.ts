/**
 * The rules for operators, pure: roles and what each may do, the password policy, the sign-in
 * lockout, session lifetimes, the TOTP window and its replay rule, company scope, and dual control
 * (which actions wait for a second admin, and who may decide them).
 */
import { ok, refuse, type Result } from "../platform/result.ts";

/** Least to most: a viewer reads; a clerk also cancels, resends and replays; an admin does all. */
export const ROLES = ["viewer", "clerk", "admin"] as const;
export type Role = typeof ROLES[number];

/** Whether `role` includes everything `needed` may do. */
export function roleAllows(role: Role, needed: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(needed);
}

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

/** A password shorter than this is refused (NIST SP 800-63B asks for 8; we ask for 12). */
export const PASSWORD_LENGTH_MIN_CHARACTERS = 12;
/** Longer input is refused before hashing, so a huge body cannot occupy the hasher. */
export const PASSWORD_LENGTH_MAX_CHARACTERS = 256;

/** Checks a new password against the policy; the message never repeats the password. */
export function checkPassword(
  password: string,
  email: string,
): Result<string, "weak_password"> {
  const length = [...password].length;
  if (length < PASSWORD_LENGTH_MIN_CHARACTERS) {
    return refuse(
      "weak_password",
      `the password has ${length} characters; at least ${PASSWORD_LENGTH_MIN_CHARACTERS} are required`,
      { field: "password" },
    );
  }
  if (length > PASSWORD_LENGTH_MAX_CHARACTERS) {
    return refuse(
      "weak_password",
      `the password has ${length} characters; at most ${PASSWORD_LENGTH_MAX_CHARACTERS} are allowed`,
      { field: "password" },
    );
  }
  if (password.trim().toLowerCase() === email.trim().toLowerCase()) {
    return refuse("weak_password", "the password must not be the e-mail address", {
      field: "password",
    });
  }
  return ok(password);
}

/** Failed sign-ins (a wrong password or TOTP code both count) that lock the account. */
export const SIGN_IN_FAILURES_MAX = 5;
/** How long a locked account refuses every sign-in. */
export const LOCKOUT_MS = 15 * 60_000;

/** An operator's sign-in counters after one more failure at `now`. */
export function afterFailedSignIn(
  failedAttempts: number,
  now: number,
): { failedAttempts: number; lockedUntil: number | null } {
  const failures = failedAttempts + 1;
  return failures >= SIGN_IN_FAILURES_MAX
    ? { failedAttempts: 0, lockedUntil: now + LOCKOUT_MS }
    : { failedAttempts: failures, lockedUntil: null };
}

export function isLocked(lockedUntil: number | null, now: number): boolean {
  return lockedUntil !== null && now < lockedUntil;
}

/** A session ends after this long unused ... */
export const SESSION_IDLE_MS = 60 * 60_000;
/** ... and after this long in any case, however often it is used. */
export const SESSION_ABSOLUTE_MS = 8 * 60 * 60_000;

export interface SessionTimes {
  readonly expiresAt: number;
  readonly absoluteExpiresAt: number;
  readonly endedAt: number | null;
}

export type SessionState = "active" | "expired" | "ended";

export function sessionState(session: SessionTimes, now: number): SessionState {
  if (session.endedAt !== null) return "ended";
  return now < session.expiresAt && now < session.absoluteExpiresAt ? "active" : "expired";
}

/** A new session's times. */
export function newSessionTimes(now: number): { expiresAt: number; absoluteExpiresAt: number } {
  return { expiresAt: now + SESSION_IDLE_MS, absoluteExpiresAt: now + SESSION_ABSOLUTE_MS };
}

/** The idle expiry after a use at `now`: another idle period, within the absolute limit. */
export function extendedExpiry(session: SessionTimes, now: number): number {
  return Math.min(now + SESSION_IDLE_MS, session.absoluteExpiresAt);
}

/** RFC 6238 defaults, which every authenticator app reads. */
export const TOTP_PERIOD_SECONDS = 30;
export const TOTP_DIGITS = 6;
/** Codes of the step before and after now are accepted too (clock drift of a phone). */
export const TOTP_WINDOW_STEPS = 1;

/** The TOTP time step of a moment. */
export function totpStepAt(now: number): number {
  return Math.floor(now / 1000 / TOTP_PERIOD_SECONDS);
}

/**
 * A code is accepted once: one whose step is not after the last accepted step is a replay (it
 * may be seen by a shoulder or a proxy while still inside the window).
 */
export function totpReplayed(step: number, lastAcceptedStep: number | null): boolean {
  return lastAcceptedStep !== null && step <= lastAcceptedStep;
}

/** Whether a company is within an operator's scope (null: every company). */
export function inScope(scope: readonly string[] | null, companyId: string): boolean {
  return scope === null || scope.includes(companyId);
}

/** An enrollment code works for this long, once. */
export const ENROLLMENT_TTL_MS = 72 * 60 * 60_000;

/**
 * The password hash of an operator who has not set a password yet (invited, or reset and waiting
 * to enrol): no password matches it.
 */
export const NOT_ENROLLED = "";

/** A pending approval lapses after this long. */
export const APPROVAL_TTL_MS = 24 * 60 * 60_000;

/** The actions that take effect only when a second admin approves them. */
export const APPROVAL_KINDS = {
  "wire.receive": "record by hand that a live wire arrived",
  "funding.return": "record by hand that the bank returned a live ACH funding",
  "payout.late_return": "record by hand that a completed live payout's money came back",
  "operator.create_admin": "create an operator with the admin role",
  "operator.reset_admin": "clear an admin's password and TOTP and send them a new enrollment",
  "operator.promote_admin": "raise an operator to the admin role",
  "payment_rule.change": "set or remove a company's live payment approval rule",
  "ach_import.apply": "apply a return or notice-of-change file imported by hand in live",
  "check_paid_import.apply": "apply a paid-items file imported by hand in live",
  "bank_settings.change": "change a company's bank settings",
  "bank_file.release": "release a bank file whose total is over the approval limit",
  "bank_file.resolve": "mark an in-doubt bank file transmitted or voided after asking the bank",
  "paypal_settings.change": "change a company's PayPal Payouts settings",
  "lithic_settings.change": "change a company's Lithic virtual card settings",
  "lob_settings.change": "change a company's Lob settings (who mails its checks)",
  "increase_settings.change": "change a company's Increase instant deposit settings",
  "rail_exception.resolve": "let a rail's payment of an entry its payout no longer held stand",
  "statement_import.apply": "import a bank statement file imported by hand in live",
  "recon_exception.adjust": "resolve a reconciliation exception with an adjusting ledger entry",
  "unclaimed_report.remit":
    "remit a filed unclaimed-property report: its payouts leave the ledger for the state",
} as const;
export type ApprovalKind = keyof typeof APPROVAL_KINDS;

export function isApprovalKind(value: string): value is ApprovalKind {
  return value in APPROVAL_KINDS;
}

/**
 * A bank file whose total is over the limit (BANK_FILE_APPROVAL_LIMIT_CENTS) needs a second admin;
 * one at the limit does not.
 */
export function bankFileReleaseNeedsApproval(totalCents: number, limitCents: number): boolean {
  return totalCents > limitCents;
}

export type ApprovalStatus = "pending_approval" | "approved" | "rejected" | "expired";

export interface ApprovalFacts {
  readonly id: string;
  readonly status: ApprovalStatus;
  readonly requestedBy: string;
  readonly expiresAt: number;
}

export type DecisionRefusal = "approval_not_pending" | "approval_expired" | "approval_own_request";

/**
 * Whether `operatorId` may approve or reject the approval at `now`, checked in this order: it
 * is still pending, it has not lapsed, and the decider is not the requester.
 */
export function checkDecision(
  approval: ApprovalFacts,
  operatorId: string,
  now: number,
): Result<ApprovalFacts, DecisionRefusal> {
  if (approval.status !== "pending_approval") {
    return refuse(
      "approval_not_pending",
      `approval ${approval.id} is ${approval.status.replace("_", " ")}, not pending`,
      { field: "id" },
    );
  }
  if (now >= approval.expiresAt) {
    return refuse(
      "approval_expired",
      `approval ${approval.id} expired at ${new Date(approval.expiresAt).toISOString()}`,
      { field: "id" },
    );
  }
  if (approval.requestedBy === operatorId) {
    return refuse(
      "approval_own_request",
      `approval ${approval.id} was requested by you: another admin must decide it`,
      { field: "id" },
    );
  }
  return ok(approval);
}

/** What a command does, as far as the checks on its operator go. */
export interface CommandReach {
  readonly name: string;
  /** The least role that may run it. */
  readonly role: Role;
  /** Whether it changes live data. */
  readonly writesLive: boolean;
  /** The companies it acts on, or "installation" when it acts across every company. */
  readonly companies: readonly string[] | "installation";
  /** What an operator outside the scope is told: the refusal a missing object gets. */
  readonly hidden?: { readonly ok: false; readonly code: string; readonly message: string };
}

export interface OperatorFacts {
  readonly email: string;
  readonly role: Role;
  readonly companyScope: readonly string[] | null;
  readonly totpVerified: boolean;
}

/**
 * Whether a signed-in operator may run a command, checked in this order: the role, TOTP for a
 * live change (outside dev mode), then the company scope. An operator outside the scope is told
 * what they would be told if the company did not exist.
 */
export function authorizeCommand(
  operator: OperatorFacts,
  command: CommandReach,
  dev: boolean,
): Result<true, string> {
  if (!roleAllows(operator.role, command.role)) {
    return refuse(
      "role_insufficient",
      `${operator.email} is ${
        operator.role === "admin" ? "an" : "a"
      } ${operator.role}: ${command.name} needs the ${command.role} role`,
    );
  }
  if (command.writesLive && !dev && !operator.totpVerified) {
    return refuse(
      "totp_required",
      `${command.name} changes live data: sign in again with a TOTP code (\`login\`)`,
    );
  }
  if (operator.companyScope === null) return ok(true);
  if (command.companies === "installation") {
    return refuse(
      "operator_scoped",
      `${operator.email} is limited to some companies: ${command.name} acts on every company`,
    );
  }
  const outside = command.companies.some((id) => !inScope(operator.companyScope, id));
  if (outside) {
    return command.hidden ?? refuse("company_not_found", "no such company");
  }
  return ok(true);
}
