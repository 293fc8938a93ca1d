/**
 * The sandbox seed's row on a libSQL server, in `__sandbox_seed` of the test database: the lock
 * one seeding node takes in one write (its lease frees it if the node dies), then the credentials
 * that node sealed, for every other node of the primary to open. Dev mode only; the table comes
 * with the migrations (0012), so a node never changes a shared primary's schema.
 */
import type { Client } from "@libsql/client";
import type { GroupCommitWriter } from "../../db/writer.ts";

/** The seed row as read back. */
export interface SandboxSeedRow {
  readonly holder: string;
  readonly leaseUntil: number;
  /** The seeded credentials sealed with ENCRYPTION_KEY; null while the holder seeds. */
  readonly credentialsSealed: string | null;
}

/**
 * Takes the seed lock for `holder` in one write: when no row exists, or its holder's lease has
 * passed without recording a seed. True when this holder has it.
 */
export async function takeSandboxSeedLock(
  writer: GroupCommitWriter,
  lock: { holder: string; now: number; leaseMs: number },
): Promise<boolean> {
  const taken = await writer.write((tx) =>
    tx.execute({
      sql: `INSERT INTO __sandbox_seed (id, holder, lease_until) VALUES (1, ?, ?)
            ON CONFLICT (id) DO UPDATE SET holder = excluded.holder, lease_until = excluded.lease_until
            WHERE __sandbox_seed.credentials_sealed IS NULL AND __sandbox_seed.lease_until <= ?
            RETURNING holder`,
      args: [lock.holder, lock.now + lock.leaseMs, lock.now],
    })
  );
  return taken.rows.length === 1;
}

/** The seed row, or null when no node holds the lock or recorded a seed. */
export async function readSandboxSeed(client: Client): Promise<SandboxSeedRow | null> {
  const { rows } = await client.execute(
    "SELECT holder, lease_until, credentials_sealed FROM __sandbox_seed WHERE id = 1",
  );
  if (!rows[0]) return null;
  return {
    holder: String(rows[0].holder),
    leaseUntil: Number(rows[0].lease_until),
    credentialsSealed: rows[0].credentials_sealed === null
      ? null
      : String(rows[0].credentials_sealed),
  };
}

/** Records the holder's seed: the row stays, so no node takes the lock again. */
export async function recordSandboxSeed(
  writer: GroupCommitWriter,
  seed: { holder: string; credentialsSealed: string },
): Promise<void> {
  const recorded = await writer.write((tx) =>
    tx.execute({
      sql: "UPDATE __sandbox_seed SET credentials_sealed = ? WHERE id = 1 AND holder = ?",
      args: [seed.credentialsSealed, seed.holder],
    })
  );
  if (recorded.rowsAffected !== 1) {
    throw new Error(
      `sandbox seed of ${seed.holder} not recorded: its lock was taken over (lease passed)`,
    );
  }
}

/** Gives the lock up without recording a seed. */
export async function releaseSandboxSeedLock(
  writer: GroupCommitWriter,
  holder: string,
): Promise<void> {
  await writer.write((tx) =>
    tx.execute({
      sql: "DELETE FROM __sandbox_seed WHERE holder = ? AND credentials_sealed IS NULL",
      args: [holder],
    })
  );
}
