/** The operator commands of Operations: secrets:generate, migrate, backup and restore. */
import { ok } from "../platform/result.ts";
import { backupDatabases } from "../backup/service.ts";
import { restoreBackup } from "../backup/restore.ts";
import { checkMigrations } from "../backup/migration_check.ts";
import { migrateServer } from "../../db/client.ts";
import { generateSecrets } from "../backup/secrets.ts";
import type { BackupManifest } from "../backup/archive.ts";
import { type Command, pathFlag, reads, readsEverything } from "./command_kit.ts";

/** What an operator reads of a manifest: per database, its migration level and money rows. */
function manifestView(manifest: BackupManifest) {
  return {
    created_at: manifest.created_at,
    deno: manifest.deno,
    sqlite: manifest.sqlite,
    databases: manifest.databases,
  };
}

export const backupCommands: Readonly<Record<string, Command>> = {
  "secrets:generate": {
    summary:
      "print a fresh JWT_SECRET and ENCRYPTION_KEY as environment lines (keep a copy apart from the backups)",
    flags: {},
    role: "admin",
    public: () => true,
    needsDatabases: false,
    reach: reads,
    run: () => {
      const { jwtSecret, encryptionKey } = generateSecrets();
      // Printed as is (like a CSV report), ready to append to the service's environment file.
      return Promise.resolve(
        ok({ csv: `JWT_SECRET=${jwtSecret}\nENCRYPTION_KEY=${encryptionKey}\n` }),
      );
    },
  },
  migrate: {
    summary:
      "apply the pending migrations to libSQL server databases, once under a lock in the database (embedded files migrate at service start); --check lists them, changing nothing",
    flags: { check: "list, change nothing" },
    role: "admin",
    public: () => true,
    needsDatabases: false,
    switches: ["check"],
    optional: ["check"],
    reach: reads,
    run: async (ctx, f) => {
      const settings = ctx.databaseSettings;
      const environments: Record<string, unknown> = {};
      if (f.check !== "true") {
        for (const environment of ["live", "test"] as const) {
          const url = settings.urls[environment];
          const run = await migrateServer(url, {
            authToken: settings.authToken,
            busyTimeoutMs: settings.busyTimeoutMs,
          });
          environments[environment] = run === null
            ? { database: url, migrated: "at service start (embedded file)" }
            : {
              database: url.replace(/\?.*$/, ""),
              applied_now: run.appliedNow,
              applied: run.applied,
            };
        }
        return ok(environments);
      }
      let pending = 0;
      for (const environment of ["live", "test"] as const) {
        const check = await checkMigrations(
          settings.urls[environment],
          settings.authToken,
          settings.busyTimeoutMs,
        );
        pending += check.pending.length;
        environments[environment] = {
          database: check.where,
          exists: check.exists,
          applied: check.applied,
          would_run: check.pending.map((entry) => entry.tag),
        };
      }
      return ok({ ...environments, pending });
    },
  },
  backup: {
    summary:
      "copy both databases online (VACUUM INTO) into one file with a manifest, and print its SHA-256",
    flags: {
      out: "the backup file to write (it must not exist; FILE.sha256 is written beside it)",
    },
    paths: ["out"],
    role: "admin",
    reach: readsEverything,
    run: async (ctx, f) => {
      const out = pathFlag(ctx, f, "out");
      if (!out.ok) return out;
      const taken = await backupDatabases(ctx.databases, {
        out: out.value,
        now: ctx.now,
        actor: ctx.actor,
      });
      if (!taken.ok) return taken;
      return ok({
        file: taken.value.file,
        sha256: taken.value.sha256,
        sha256_file: `${taken.value.file}.sha256`,
        bytes: taken.value.bytes,
        ...manifestView(taken.value.manifest),
      });
    },
  },
  restore: {
    summary:
      "restore a backup into an empty data directory, after checking its SHA-256 and manifest (no service needed)",
    flags: {
      from: "the backup file",
      "data-dir": "the data directory to fill: absent or empty",
      sha256: "the SHA-256 the file must have (default: FILE.sha256 when present)",
    },
    optional: ["sha256"],
    paths: ["from", "data-dir"],
    role: "admin",
    // A file operation into an empty directory: it has no operators to sign in yet; who may read
    // the backup file and write the directory decides (backups are written mode 0600).
    public: () => true,
    needsDatabases: false,
    reach: reads,
    run: async (ctx, f) => {
      const from = pathFlag(ctx, f, "from");
      if (!from.ok) return from;
      const dataDir = pathFlag(ctx, f, "data-dir");
      if (!dataDir.ok) return dataDir;
      const restored = await restoreBackup({
        from: from.value,
        dataDir: dataDir.value,
        sha256: f.sha256 ?? null,
      });
      if (!restored.ok) return restored;
      return ok({
        data_dir: restored.value.dataDir,
        files: restored.value.files,
        sha256: restored.value.sha256,
        sha256_checked: restored.value.sha256Checked,
        ...manifestView(restored.value.manifest),
        next:
          `start the service with DATA_DIR=${restored.value.dataDir} and the JWT_SECRET and ENCRYPTION_KEY it ran with`,
      });
    },
  },
};
