/**
 * Operators for tests: made through the operator use cases (an admin inserted directly, since a
 * new admin otherwise waits for approval), signed in with a real TOTP code, and commands sent
 * through the admin endpoint with their session.
 */
import type { createApp } from "../routes/app.ts";
import type { AppDeps } from "../routes/context.ts";
import {
  insertOperatorAudited,
  type OperatorDeps,
  prepareOperator,
  signIn,
} from "../lib/operators/service.ts";
import { checkNewOperator } from "../lib/operators/service.ts";
import { totpCodeAt } from "../lib/operators/totp.ts";
import type { Role } from "../lib/operators/rules.ts";

export const ADMIN_TOKEN = "t".repeat(43);

export interface TestOperator {
  readonly id: string;
  readonly email: string;
  readonly password: string;
  readonly totpSecret: string;
  /** A session token signed in with TOTP at creation (null when `signIn: false`). */
  readonly token: string | null;
}

export function operatorDepsOf(deps: AppDeps): OperatorDeps {
  return { databases: deps.databases, secretBox: deps.secretBox, dev: deps.config.dev };
}

/** The base32 secret inside an otpauth:// URI. */
export function totpSecretOf(uri: string): string {
  const secret = new URL(uri).searchParams.get("secret");
  if (!secret) throw new Error(`no secret in ${uri}`);
  return secret;
}

/** Creates an operator of any role (no approval) and signs them in at `now` with TOTP. */
export async function makeOperator(
  deps: AppDeps,
  input: { email: string; role: Role; companies?: string; password?: string; signIn?: boolean },
  now: number,
): Promise<TestOperator> {
  const operatorDeps = operatorDepsOf(deps);
  const password = input.password ?? `pw-${input.email}-long-enough`;
  const checked = await checkNewOperator(operatorDeps, {
    email: input.email,
    role: input.role,
    companies: input.companies,
  });
  if (!checked.ok) throw new Error(checked.message);
  const prepared = await prepareOperator(operatorDeps, {
    ...checked.value,
    password,
    createdBy: null,
  });
  if (!prepared.ok) throw new Error(prepared.message);
  const created = await deps.databases.live.writer.write((tx) =>
    insertOperatorAudited(tx, { operator: null, origin: "test" }, prepared.value.row, now)
  );
  if (!created.ok) throw new Error(created.message);
  const totpSecret = totpSecretOf(prepared.value.shown.totp_uri);
  let token: string | null = null;
  if (input.signIn !== false) {
    const session = await signIn(operatorDeps, "test", {
      email: input.email,
      password,
      code: totpCodeAt(totpSecret, now),
    }, now);
    if (!session.ok) throw new Error(session.message);
    token = session.value.token;
  }
  return { id: created.value.id, email: checked.value.email, password, totpSecret, token };
}

/** Sends a command to the admin endpoint of `app` from loopback, with a session when given. */
export function adminCall(app: ReturnType<typeof createApp>, token: string | null) {
  return async (
    name: string,
    flags: Record<string, string>,
    input: Record<string, string> = {},
  ) => {
    const response = await app.request(`/admin/commands/${name}`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${ADMIN_TOKEN}`,
        "Content-Type": "application/json",
        ...(token === null ? {} : { "X-Operator-Session": token }),
      },
      body: JSON.stringify({ flags, input }),
    }, { remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 50000 } });
    return { status: response.status, body: await response.json() };
  };
}

/** The enrollment code last e-mailed to `email` (read from the live notification outbox). */
export async function enrollmentCodeOf(deps: Pick<AppDeps, "databases">, email: string) {
  const { rows } = await deps.databases.live.readClient.execute({
    sql: `SELECT body FROM notifications WHERE recipient = ? AND subject = ?
            ORDER BY created_at DESC, rowid DESC LIMIT 1`,
    args: [email, "Your operator enrollment code"],
  });
  const code = rows[0] ? /\benr_[0-9A-Za-z]{32}\b/.exec(String(rows[0].body))?.[0] : undefined;
  if (!code) throw new Error(`no enrollment code was sent to ${email}`);
  return code;
}
