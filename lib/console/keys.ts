/**
 * The console's Keys page: company, line and user keys of the operator's companies by hint (the
 * non-secret start) and creation date. Only hints are read: a key's secret is never stored, and
 * its hash never leaves the database. Rotation and revocation run as the CLI's key commands.
 */
import type { Client, InValue } from "@libsql/client";
import {
  allOf,
  orderAndPage,
  type Page,
  pageOf,
  type PageWindow,
  scopeCondition,
  type Sortable,
} from "./paging.ts";

export const keySorts: Sortable = { created: "k.created_at", kind: "k.kind", owner: "owner" };

export const KEY_KINDS = ["company", "line", "user"] as const;
export type KeyKind = typeof KEY_KINDS[number];

export interface KeyRow {
  readonly id: string;
  readonly kind: KeyKind;
  readonly hint: string;
  /** The company, line (company / code) or user e-mail it belongs to. */
  readonly owner: string;
  readonly createdAt: number;
  readonly expiresAt: number | null;
  readonly revokedAt: number | null;
  readonly replacedBy: string | null;
}

/**
 * A page of the keys of one database within the scope: company and line keys of its companies,
 * and keys of users whose every company is one of them (such a key acts for all of them).
 */
export async function listKeys(
  client: Client,
  filter: { companyIds: readonly string[] | null; kind?: KeyKind; includeEnded: boolean },
  request: PageWindow,
): Promise<Page<KeyRow>> {
  const scope = scopeCondition("m.company_id", filter.companyIds);
  const conditions: { sql: string; args: InValue[] }[] = [
    // A user key acts for every company of its user: shown when all of them are in the scope.
    {
      sql: `(k.kind <> 'user' AND ${scopeCondition("k.company_id", filter.companyIds).sql})
            OR (k.kind = 'user'
                AND EXISTS (SELECT 1 FROM memberships m WHERE m.user_id = k.user_id)
                AND NOT EXISTS (SELECT 1 FROM memberships m
                                WHERE m.user_id = k.user_id AND NOT (${scope.sql})))`,
      args: [...scopeCondition("k.company_id", filter.companyIds).args, ...scope.args],
    },
  ];
  if (filter.kind) conditions.push({ sql: "k.kind = ?", args: [filter.kind] });
  if (!filter.includeEnded) conditions.push({ sql: "k.revoked_at IS NULL", args: [] });
  const where = allOf(conditions);
  const order = orderAndPage(request, keySorts, "k.rowid");
  const { rows } = await client.execute({
    sql: `SELECT k.id, k.kind, k.hint, k.created_at, k.expires_at, k.revoked_at, k.replaced_by,
            CASE k.kind WHEN 'user' THEN u.email
                        WHEN 'line' THEN c.name || ' / ' || l.code ELSE c.name END AS owner
          FROM api_keys k LEFT JOIN companies c ON c.id = k.company_id
            LEFT JOIN business_lines l ON l.id = k.line_id LEFT JOIN users u ON u.id = k.user_id
          WHERE ${where.sql} ${order.sql}`,
    args: [...where.args, ...order.args],
  });
  const number = (value: unknown) => value === null ? null : Number(value);
  return pageOf(
    request,
    rows.map((row) => ({
      id: String(row.id),
      kind: String(row.kind) as KeyKind,
      hint: String(row.hint),
      owner: String(row.owner),
      createdAt: Number(row.created_at),
      expiresAt: number(row.expires_at),
      revokedAt: number(row.revoked_at),
      replacedBy: row.replaced_by === null ? null : String(row.replaced_by),
    })),
  );
}
