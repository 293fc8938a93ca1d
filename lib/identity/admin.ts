/**
 * Operator actions on identities: companies, users, memberships, business lines, keys and fees.
 * Companies, users, memberships, lines and fees are mirrored into both databases with the same
 * ids (live first, then test); if the test write fails, the live write is undone, so a rerun
 * starts from a clean state. User and line keys live only in their environment's database.
 */
import {
  type DeadlineSettings,
  NEW_COMPANY_OFFER_EXPIRY_ACTION,
  NEW_COMPANY_PAY_BY_DAYS,
} from "../obligations/deadline.ts";
import { and, eq } from "drizzle-orm";
import * as v from "valibot";
import type { Environment } from "../platform/config.ts";
import { keyState } from "./credentials.ts";
import { companyNameSchema, emailSchema, lineCodeSchema, tinSchema } from "./rules.ts";
import { keyHint, newId, newKeySecret, parseKey, sha256Hex } from "../platform/keys.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import type { Database } from "../../db/client.ts";
import { rotateStoredKey } from "./service.ts";
import {
  apiKeys,
  businessLines,
  companies,
  feeSchedules,
  memberships,
  users,
} from "../../db/schema.ts";
import type { WriteTx } from "../../db/writer.ts";

export type Databases = Readonly<Record<Environment, Database>>;

export type AdminRefusalCode =
  | "invalid_input"
  | "duplicate_tin"
  | "duplicate_email"
  | "duplicate_line"
  | "already_member"
  | "company_not_found"
  | "user_not_found"
  | "key_not_found"
  | "key_not_active"
  | "key_already_rotated";

type AdminResult<T> = Result<T, AdminRefusalCode>;

function validate<S extends v.GenericSchema>(
  schema: S,
  value: unknown,
  field: string,
): Result<v.InferOutput<S>, "invalid_input"> {
  const result = v.safeParse(schema, value);
  if (result.success) return ok(result.output);
  return refuse("invalid_input", `${field} ${JSON.stringify(value)}: ${result.issues[0].message}`, {
    field,
  });
}

/** Writes mirrored rows into live, then test; undoes live when test fails. */
async function writeMirrored(
  databases: Databases,
  write: (tx: WriteTx) => Promise<unknown>,
  undo: (tx: WriteTx) => Promise<unknown>,
): Promise<void> {
  await databases.live.writer.write(write);
  try {
    await databases.test.writer.write(write);
  } catch (error) {
    await databases.live.writer.write(undo);
    throw error;
  }
}

async function insertKey(
  tx: WriteTx,
  key: {
    id: string;
    secret: string;
    kind: "company" | "user" | "line";
    companyId?: string;
    userId?: string;
    lineId?: string;
  },
  now: number,
): Promise<void> {
  await tx.db.insert(apiKeys).values({
    id: key.id,
    kind: key.kind,
    secretHash: await sha256Hex(key.secret),
    hint: keyHint(key.secret),
    companyId: key.companyId ?? null,
    userId: key.userId ?? null,
    lineId: key.lineId ?? null,
    createdAt: now,
  });
}

export interface CompanyRecord {
  readonly id: string;
  readonly name: string;
  readonly tin: string;
}

async function companyByTin(database: Database, tin: string): Promise<CompanyRecord | undefined> {
  const [row] = await database.read.select({
    id: companies.id,
    name: companies.name,
    tin: companies.tin,
  })
    .from(companies).where(eq(companies.tin, tin));
  return row;
}

/**
 * Creates a company with its company API key (`cak_…`, shown once). A new company's offers fall
 * back to a mailed check at a pay_by 30 days after create unless `deadlines` says otherwise (the
 * sandbox seed keeps its companies on today's cancel after the offer's time).
 */
export async function createCompany(
  databases: Databases,
  input: { name: unknown; tin: unknown },
  now: number,
  deadlines: DeadlineSettings = {
    offerExpiryAction: NEW_COMPANY_OFFER_EXPIRY_ACTION,
    payByDays: NEW_COMPANY_PAY_BY_DAYS,
  },
): Promise<AdminResult<{ company: CompanyRecord; companyApiKey: string }>> {
  const name = validate(companyNameSchema, input.name, "name");
  if (!name.ok) return name;
  const tin = validate(tinSchema, input.tin, "tin");
  if (!tin.ok) return tin;
  for (const database of Object.values(databases)) {
    if (await companyByTin(database, tin.value)) {
      return refuse("duplicate_tin", `a company with TIN ${tin.value} already exists`, {
        field: "tin",
      });
    }
  }
  const company = { id: newId("co"), name: name.value, tin: tin.value };
  const key = {
    id: newId("key"),
    secret: newKeySecret("company"),
    kind: "company" as const,
    companyId: company.id,
  };
  await writeMirrored(databases, async (tx) => {
    await tx.db.insert(companies).values({ ...company, ...deadlines, createdAt: now });
    await insertKey(tx, key, now);
  }, async (tx) => {
    await tx.db.delete(apiKeys).where(eq(apiKeys.id, key.id));
    await tx.db.delete(companies).where(eq(companies.id, company.id));
  });
  return ok({ company, companyApiKey: key.secret });
}

export interface UserRecord {
  readonly id: string;
  readonly email: string;
}

async function userByEmail(database: Database, email: string): Promise<UserRecord | undefined> {
  const [row] = await database.read.select({ id: users.id, email: users.email }).from(users)
    .where(eq(users.email, email.toLowerCase()));
  return row;
}

/** Creates a user with one key per environment (`uak_test_…`, `uak_live_…`, shown once). */
export async function createUser(
  databases: Databases,
  input: { email: unknown },
  now: number,
): Promise<AdminResult<{ user: UserRecord; apiKeyTest: string; apiKeyLive: string }>> {
  const email = validate(emailSchema, input.email, "email");
  if (!email.ok) return email;
  const normalized = email.value.toLowerCase();
  for (const database of Object.values(databases)) {
    if (await userByEmail(database, normalized)) {
      return refuse("duplicate_email", `a user with e-mail ${normalized} already exists`, {
        field: "email",
      });
    }
  }
  const user = { id: newId("usr"), email: normalized };
  await writeMirrored(
    databases,
    (tx) => tx.db.insert(users).values({ ...user, createdAt: now }),
    (tx) => tx.db.delete(users).where(eq(users.id, user.id)),
  );
  const keys = {
    test: {
      id: newId("key"),
      secret: newKeySecret("user", "test"),
      kind: "user" as const,
      userId: user.id,
    },
    live: {
      id: newId("key"),
      secret: newKeySecret("user", "live"),
      kind: "user" as const,
      userId: user.id,
    },
  };
  await databases.live.writer.write((tx) => insertKey(tx, keys.live, now));
  await databases.test.writer.write((tx) => insertKey(tx, keys.test, now));
  return ok({ user, apiKeyTest: keys.test.secret, apiKeyLive: keys.live.secret });
}

/** Adds a user to a company (both named by their natural keys). */
export async function addMembership(
  databases: Databases,
  input: { email: unknown; tin: unknown },
  now: number,
): Promise<AdminResult<{ user: UserRecord; company: CompanyRecord }>> {
  const email = validate(emailSchema, input.email, "email");
  if (!email.ok) return email;
  const tin = validate(tinSchema, input.tin, "tin");
  if (!tin.ok) return tin;
  const user = await userByEmail(databases.live, email.value);
  if (!user) {
    return refuse("user_not_found", `no user with e-mail ${email.value}`, { field: "email" });
  }
  const company = await companyByTin(databases.live, tin.value);
  if (!company) {
    return refuse("company_not_found", `no company with TIN ${tin.value}`, { field: "tin" });
  }
  const [existing] = await databases.live.read.select().from(memberships)
    .where(and(eq(memberships.userId, user.id), eq(memberships.companyId, company.id)));
  if (existing) {
    return refuse(
      "already_member",
      `${user.email} already belongs to ${company.name} (TIN ${company.tin})`,
    );
  }
  await writeMirrored(
    databases,
    (tx) =>
      tx.db.insert(memberships).values({ userId: user.id, companyId: company.id, createdAt: now }),
    (tx) =>
      tx.execute({
        sql: "DELETE FROM memberships WHERE user_id = ? AND company_id = ?",
        args: [user.id, company.id],
      }),
  );
  return ok({ user, company });
}

export interface LineRecord {
  readonly id: string;
  readonly companyId: string;
  readonly code: string;
}

/** Creates a business line with one key per environment (`sk_test_…`, `sk_live_…`, shown once). */
export async function createLine(
  databases: Databases,
  input: { tin: unknown; code: unknown },
  now: number,
): Promise<
  AdminResult<{ line: LineRecord; company: CompanyRecord; keyTest: string; keyLive: string }>
> {
  const tin = validate(tinSchema, input.tin, "tin");
  if (!tin.ok) return tin;
  const code = validate(lineCodeSchema, input.code, "code");
  if (!code.ok) return code;
  const company = await companyByTin(databases.live, tin.value);
  if (!company) {
    return refuse("company_not_found", `no company with TIN ${tin.value}`, { field: "tin" });
  }
  const existing = await databases.live.read.select({ code: businessLines.code }).from(
    businessLines,
  )
    .where(eq(businessLines.companyId, company.id));
  if (existing.some((line) => line.code === code.value)) {
    return refuse("duplicate_line", `${company.name} already has a line ${code.value}`, {
      field: "code",
    });
  }
  const line = { id: newId("line"), companyId: company.id, code: code.value };
  await writeMirrored(
    databases,
    (tx) => tx.db.insert(businessLines).values({ ...line, createdAt: now }),
    (tx) => tx.db.delete(businessLines).where(eq(businessLines.id, line.id)),
  );
  const keyOf = (environment: Environment) => ({
    id: newId("key"),
    secret: newKeySecret("line", environment),
    kind: "line" as const,
    companyId: company.id,
    lineId: line.id,
  });
  const keys = { test: keyOf("test"), live: keyOf("live") };
  await databases.live.writer.write((tx) => insertKey(tx, keys.live, now));
  await databases.test.writer.write((tx) => insertKey(tx, keys.test, now));
  return ok({ line, company, keyTest: keys.test.secret, keyLive: keys.live.secret });
}

/** A key's row in one database; a mirrored company key may have a different id in each. */
export interface KeyRow {
  readonly environment: Environment;
  readonly keyId: string;
}

/** The rows of a key given by its secret or its id, live first (company keys are in both). */
async function locateKey(
  databases: Databases,
  key: string,
): Promise<{ rows: KeyRow[]; kind: string } | null> {
  const parsed = parseKey(key);
  const hash = parsed ? await sha256Hex(key) : null;
  const rows: KeyRow[] = [];
  let kind = "";
  for (const environment of ["live", "test"] as const) {
    const [row] = await databases[environment].read.select({ id: apiKeys.id, kind: apiKeys.kind })
      .from(apiKeys)
      .where(hash ? eq(apiKeys.secretHash, hash) : eq(apiKeys.id, key));
    if (row) {
      rows.push({ environment, keyId: row.id });
      kind = row.kind;
    }
  }
  return rows.length > 0 ? { rows, kind } : null;
}

/** Replaces a key; the old one keeps working for `graceSeconds` (contract §3: 24 hours). */
export async function rotateKey(
  databases: Databases,
  input: { key: string },
  options: { now: number; graceSeconds: number },
): Promise<
  AdminResult<{ keyId: string; secret: string; previousKeyId: string; previousExpiresAt: number }>
> {
  const located = await locateKey(databases, input.key);
  if (!located) {
    return refuse("key_not_found", "no key matches the given secret or id", { field: "key" });
  }
  const parsed = parseKey(input.key);
  let environment: Environment | null = parsed?.environment ?? null;
  if (located.kind !== "company" && environment === null) environment = located.rows[0].environment;
  const replacement = {
    id: newId("key"),
    secret: newKeySecret(located.kind as "company" | "user" | "line", environment ?? undefined),
  };
  let previousExpiresAt = 0;
  for (const { environment: where, keyId } of located.rows) {
    const rotated = await databases[where].writer.write((tx) =>
      rotateStoredKey(tx, keyId, { ...options, environment, replacement })
    );
    if (!rotated.ok) return rotated;
    previousExpiresAt = rotated.value.previousExpiresAt;
  }
  return ok({
    keyId: replacement.id,
    secret: replacement.secret,
    previousKeyId: located.rows[0].keyId,
    previousExpiresAt,
  });
}

/**
 * Stops a key at once: its row in each database holding it, each by its own id. Every row is
 * read before any is written, so that a key revoked in one database only is finished, and one
 * revoked everywhere is refused without a write.
 */
export async function revokeKey(
  databases: Databases,
  input: { key: string },
  now: number,
): Promise<AdminResult<{ revoked: KeyRow[]; revokedAt: number }>> {
  const located = await locateKey(databases, input.key);
  if (!located) {
    return refuse("key_not_found", "no key matches the given secret or id", { field: "key" });
  }
  const revoked: KeyRow[] = [];
  for (const row of located.rows) {
    const [stored] = await databases[row.environment].read.select({
      expiresAt: apiKeys.expiresAt,
      revokedAt: apiKeys.revokedAt,
    }).from(apiKeys).where(eq(apiKeys.id, row.keyId));
    if (keyState(stored, now) !== "revoked") revoked.push(row);
  }
  if (revoked.length === 0) {
    const where = located.rows.map((row) => `${row.keyId} in ${row.environment}`).join(" and ");
    return refuse("key_not_active", `key ${where} is already revoked`, { field: "key" });
  }
  for (const row of revoked) {
    await databases[row.environment].writer.write((tx) =>
      tx.db.update(apiKeys).set({ revokedAt: now }).where(eq(apiKeys.id, row.keyId))
    );
  }
  return ok({ revoked, revokedAt: now });
}

export interface CompanyListing extends CompanyRecord {
  readonly lines: string[];
  readonly users: string[];
}

/** Every company with its line codes and member e-mails. */
export async function listCompanies(databases: Databases): Promise<CompanyListing[]> {
  const read = databases.live.read;
  const [allCompanies, lines, members] = await Promise.all([
    read.select().from(companies).orderBy(companies.createdAt, companies.name),
    read.select().from(businessLines).orderBy(businessLines.createdAt, businessLines.id),
    read.select({ companyId: memberships.companyId, email: users.email }).from(memberships)
      .innerJoin(users, eq(users.id, memberships.userId)),
  ]);
  return allCompanies.map((company) => ({
    id: company.id,
    name: company.name,
    tin: company.tin,
    lines: lines.filter((line) => line.companyId === company.id).map((line) => line.code),
    users: members.filter((member) => member.companyId === company.id).map((member) => member.email)
      .sort(),
  }));
}

const feeCents = v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(100_000_000));

/** Sets a company's fees for one payment method (1-7), in cents, in both environments. */
export async function setFees(
  databases: Databases,
  input: {
    tin: unknown;
    paymentMethodId: unknown;
    payorFeeCents: unknown;
    payeeFeeCents: unknown;
    serviceFeeCents: unknown;
  },
): Promise<AdminResult<{ company: CompanyRecord; paymentMethodId: number }>> {
  const tin = validate(tinSchema, input.tin, "tin");
  if (!tin.ok) return tin;
  const method = validate(
    v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(7)),
    input.paymentMethodId,
    "method",
  );
  if (!method.ok) return method;
  const payor = validate(feeCents, input.payorFeeCents, "payor");
  if (!payor.ok) return payor;
  const payee = validate(feeCents, input.payeeFeeCents, "payee");
  if (!payee.ok) return payee;
  const service = validate(feeCents, input.serviceFeeCents, "service");
  if (!service.ok) return service;
  const company = await companyByTin(databases.live, tin.value);
  if (!company) {
    return refuse("company_not_found", `no company with TIN ${tin.value}`, { field: "tin" });
  }
  const values = {
    companyId: company.id,
    paymentMethodId: method.value,
    payorFeeCents: payor.value,
    payeeFeeCents: payee.value,
    serviceFeeCents: service.value,
  };
  for (const database of [databases.live, databases.test]) {
    await database.writer.write((tx) =>
      tx.db.insert(feeSchedules).values(values).onConflictDoUpdate({
        target: [feeSchedules.companyId, feeSchedules.paymentMethodId],
        set: {
          payorFeeCents: values.payorFeeCents,
          payeeFeeCents: values.payeeFeeCents,
          serviceFeeCents: values.serviceFeeCents,
        },
      })
    );
  }
  return ok({ company, paymentMethodId: method.value });
}
