/**
 * The audit log anchored outside its database: rows chained with a key the database does not
 * hold (a re-chain without it is found), signed checkpoints kept elsewhere (a rewrite with the
 * key, or a deleted tail, is found against them), forged checkpoints refused, and the public key
 * printed by a command.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { createApp } from "../routes/app.ts";
import { auditRowHash, canonicalJson } from "../lib/audit/rules.ts";
import { publicKeyText } from "../lib/audit/anchor.ts";
import { ScheduledBackups } from "../lib/backup/jobs.ts";
import { takeAuditCheckpoint } from "../lib/audit/service.ts";
import { systemClock } from "../lib/platform/clock.ts";
import { type HttpFixture, withHttpFixture } from "./http_fixture.ts";
import { ADMIN_TOKEN, adminCall, makeOperator } from "./operator_helpers.ts";
import { testAuditKeys, withTempDir } from "./helpers.ts";

type Row = Record<string, string | number | null>;

async function rowsOf(f: HttpFixture): Promise<Row[]> {
  const { rows } = await f.deps.databases.test.readClient.execute(
    "SELECT * FROM audit_log ORDER BY seq",
  );
  return rows.map((row) => ({ ...row }) as Row);
}

/** The canonical content of a row, as the chain hashes it. */
function content(row: Row): Parameters<typeof auditRowHash>[0] {
  return {
    seq: Number(row.seq),
    id: String(row.id),
    at: Number(row.at),
    environment: row.environment as "test",
    operatorId: row.operator_id as string | null,
    operatorEmail: row.operator_email as string | null,
    origin: String(row.origin),
    action: String(row.action),
    objectType: String(row.object_type),
    objectId: row.object_id as string | null,
    companyId: row.company_id as string | null,
    before: row.before as string | null,
    after: row.after as string | null,
    prevHash: String(row.prev_hash),
  };
}

/**
 * Rewrites the test chain from row `from` on: the operator of that row changed, and every hash
 * recomputed by `hash` (triggers dropped first, as someone holding the file can).
 */
async function rewrite(
  f: HttpFixture,
  from: number,
  hash: (row: ReturnType<typeof content>) => string,
) {
  const rows = await rowsOf(f);
  await f.deps.databases.test.writer.write(async (tx) => {
    await tx.execute("DROP TRIGGER IF EXISTS audit_log_no_update");
    let previous = String(rows[from - 2]?.hash ?? "0".repeat(64));
    for (const row of rows.slice(from - 1)) {
      const changed = {
        ...content(row),
        prevHash: previous,
        operatorEmail: Number(row.seq) === from
          ? "someone@else.test"
          : row.operator_email as string,
      };
      previous = hash(changed);
      await tx.execute({
        sql: "UPDATE audit_log SET operator_email = ?, prev_hash = ?, hash = ? WHERE seq = ?",
        args: [changed.operatorEmail, changed.prevHash, previous, changed.seq],
      });
    }
  });
}

async function withAuditedFixture(
  fn: (f: HttpFixture, call: ReturnType<typeof adminCall>) => Promise<void>,
) {
  await withHttpFixture(async (f) => {
    const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
    const admin = await makeOperator(
      f.deps,
      { email: "admin@ops.test", role: "admin" },
      f.clock.now(),
    );
    const call = adminCall(app, admin.token);
    // Seven test-chain rows: the admin's sign-in, then fees set for each of six methods.
    for (const method of ["1", "2", "3", "4", "5", "6"]) {
      const set = await call("fees:set", { tin: f.cast.acme.tin, method, payor: "1.00" });
      assert.equal(set.status, 200);
    }
    await fn(f, call);
  });
}

Deno.test("a chain re-hashed without the key is found: before, a script re-chained with SHA-256 and audit:verify said intact", async () => {
  await withAuditedFixture(async (f, call) => {
    assert.equal((await call("audit:verify", { environment: "test" })).status, 200);
    const sha256 = (row: ReturnType<typeof content>) =>
      createHash("sha256").update(canonicalJson({
        seq: row.seq,
        id: row.id,
        at: row.at,
        environment: row.environment,
        operator_id: row.operatorId,
        operator_email: row.operatorEmail,
        origin: row.origin,
        action: row.action,
        object_type: row.objectType,
        object_id: row.objectId,
        company_id: row.companyId,
        before: row.before,
        after: row.after,
        prev_hash: row.prevHash,
      })).digest("hex");
    await rewrite(f, 5, sha256);
    const [row5] = (await rowsOf(f)).filter((row) => row.seq === 5);
    const verified = await call("audit:verify", { environment: "test" });
    assert.deepEqual([verified.status, verified.body.error], [409, {
      code: "audit_chain_broken",
      message: `the audit chain is broken at test row 5 (${row5.id}): ` +
        "it is chained without the key after keyed rows: rows written since the key cannot be " +
        "unkeyed",
    }]);
  });
});

Deno.test("signed checkpoints find a rewrite made with the key and a deleted tail, which the chain alone cannot", async () => {
  await withAuditedFixture(async (f, call) => {
    await withTempDir(async (copies) => {
      const written = await call("audit:checkpoint", { out: copies });
      assert.equal(written.status, 200, JSON.stringify(written.body));
      assert.deepEqual(written.body.result.test, {
        seq: 7,
        hash: (await rowsOf(f))[6].hash,
      });
      const file = JSON.parse(await Deno.readTextFile(written.body.result.file));
      const key = await call("audit:public-key", {});
      assert.deepEqual(key.body.result, { public_key: file.public_key });
      assert.match(file.public_key, /^ed25519:[A-Za-z0-9+/]{43}=$/);
      const intact = await call("audit:verify", { checkpoints: copies });
      assert.deepEqual(intact.body.result.checkpoints, 1);

      // Someone with the database and the key re-chains from row 3: the chain alone holds.
      await rewrite(f, 3, (row) => auditRowHash(row, testAuditKeys.chainKey));
      assert.equal((await call("audit:verify", { environment: "test" })).status, 200);
      const rewritten = await call("audit:verify", { environment: "test", checkpoints: copies });
      assert.deepEqual([rewritten.status, rewritten.body.error.message], [
        409,
        `the audit chain is broken at test row 7 (${
          (await rowsOf(f))[6].id
        }): its hash differs from the one the checkpoint of ${file.created_at} signed: the log was rewritten`,
      ]);
    });
  });
});

Deno.test("a deleted tail is found against a checkpoint; a forged checkpoint is refused", async () => {
  await withAuditedFixture(async (f, call) => {
    await withTempDir(async (copies) => {
      assert.equal((await call("audit:checkpoint", { out: copies })).status, 200);
      // Before: deleting the last row left a chain that verified.
      await f.deps.databases.test.writer.write(async (tx) => {
        await tx.execute("DROP TRIGGER audit_log_no_delete");
        await tx.execute("DELETE FROM audit_log WHERE seq = 7");
      });
      assert.equal((await call("audit:verify", { environment: "test" })).status, 200);
      const cut = await call("audit:verify", { environment: "test", checkpoints: copies });
      assert.equal(cut.status, 409);
      assert.match(
        cut.body.error.message,
        /^the audit chain is broken at test row 7: the checkpoint of \S+ saw row 7, but the log ends at row 6: its tail was deleted$/,
      );

      // A checkpoint made with another key is not trusted, whatever public key it names.
      const [name] = await Array.fromAsync(Deno.readDir(copies), (entry) => entry.name);
      const forged = JSON.parse(await Deno.readTextFile(`${copies}/${name}`));
      forged.chains.test = { seq: 6, hash: (await rowsOf(f))[5].hash };
      await Deno.writeTextFile(
        `${copies}/audit-checkpoint-29990101T000000Z.json`,
        JSON.stringify(forged),
      );
      const refused = await call("audit:verify", { environment: "test", checkpoints: copies });
      assert.deepEqual([refused.status, refused.body.error], [409, {
        code: "audit_checkpoint_forged",
        message:
          "not signed by this installation's audit key: audit-checkpoint-29990101T000000Z.json",
      }]);
    });
  });
});

Deno.test("each scheduled backup leaves a signed checkpoint in the copy destination", async () => {
  await withAuditedFixture(async (f) => {
    await withTempDir(async (dir) => {
      const backups = new ScheduledBackups(
        { live: f.deps.databases.live.url, test: f.deps.databases.test.url },
        {
          dir: `${dir}/backups`,
          copyDir: `${dir}/copies`,
          s3: null,
          intervalMinutes: 60,
          keep: 2,
          busyTimeoutMs: 5000,
          auditCheckpoint: (now) => takeAuditCheckpoint(f.deps.databases, now),
        },
        systemClock,
        () => {},
      );
      await backups.sweep();
      const names = (await Array.fromAsync(Deno.readDir(`${dir}/copies`), (e) => e.name)).sort();
      assert.equal(names.length, 3, names.join(", "));
      const checkpoint = JSON.parse(
        await Deno.readTextFile(`${dir}/copies/${names.find((n) => n.startsWith("audit-"))}`),
      );
      assert.equal(checkpoint.public_key, publicKeyText(testAuditKeys.publicKey));
      assert.equal(checkpoint.chains.test.seq, 7);
    });
  });
});
