import assert from "node:assert/strict";
import { acquireWriterLock, isDataDirLocked, missingDatabaseFiles } from "../db/data_dir.ts";
import { openTempDatabase, withTempDir } from "./helpers.ts";

const dataDirModule = new URL("../db/data_dir.ts", import.meta.url).href;

/** Tries the lock from another process; exit 0 = acquired, 3 = refused. */
async function tryFromAnotherProcess(dataDir: string): Promise<{ code: number; stderr: string }> {
  const script = `
    import { acquireWriterLock } from ${JSON.stringify(dataDirModule)};
    const lock = await acquireWriterLock(${JSON.stringify(dataDir)});
    if (!lock.ok) { console.error(lock.message); Deno.exit(3); }
    await lock.value.release();`;
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--ext=ts", script],
    cwd: new URL("..", import.meta.url).pathname,
    stdout: "null",
    stderr: "piped",
  }).output();
  return { code: output.code, stderr: new TextDecoder().decode(output.stderr) };
}

Deno.test("the DATA_DIR writer lock refuses a second process at once and frees on release", async () => {
  await withTempDir(async (dir) => {
    const lock = await acquireWriterLock(dir);
    assert.ok(lock.ok);
    const refused = await tryFromAnotherProcess(dir);
    assert.equal(refused.code, 3);
    assert.match(
      refused.stderr,
      /another process is using DATA_DIR .* \(lock .*writer\.lock is held\)/,
    );
    assert.equal(await isDataDirLocked(dir), true);
    await lock.value.release();
    assert.equal((await tryFromAnotherProcess(dir)).code, 0, "free after release");
    assert.equal(await isDataDirLocked(dir), false);
  });
});

Deno.test("the lock dies with its process: a killed holder leaves DATA_DIR usable", async () => {
  await withTempDir(async (dir) => {
    const holder = new Deno.Command(Deno.execPath(), {
      args: [
        "eval",
        "--ext=ts",
        `
        import { acquireWriterLock } from ${JSON.stringify(dataDirModule)};
        const lock = await acquireWriterLock(${JSON.stringify(dir)});
        console.log(lock.ok ? "held" : "refused");
        await new Promise(() => setInterval(() => {}, 1000));`,
      ],
      cwd: new URL("..", import.meta.url).pathname,
      stdout: "piped",
      stderr: "null",
    }).spawn();
    const reader = holder.stdout.getReader();
    assert.equal(new TextDecoder().decode((await reader.read()).value).trim(), "held");
    assert.equal(await isDataDirLocked(dir), true);
    holder.kill("SIGKILL");
    await holder.status;
    reader.releaseLock();
    await holder.stdout.cancel();
    assert.equal(await isDataDirLocked(dir), false);
  });
});

Deno.test("missingDatabaseFiles names the embedded files that are not there, by absolute path", async () => {
  await withTempDir(async (dir) => {
    const files = { test: `file:${dir}/test.db`, live: `file:${dir}/live.db` };
    assert.deepEqual(await missingDatabaseFiles(files), [`${dir}/test.db`, `${dir}/live.db`]);
    await (await openTempDatabase(dir, "live")).close();
    assert.deepEqual(await missingDatabaseFiles(files), [`${dir}/test.db`]);
    await (await openTempDatabase(dir, "test")).close();
    assert.deepEqual(await missingDatabaseFiles(files), []);
    // A server keeps its own databases, and memory holds none to look for.
    assert.deepEqual(
      await missingDatabaseFiles({ test: "libsql://db.example.test", live: "file::memory:" }),
      [],
    );
    const cwd = Deno.cwd();
    assert.deepEqual(
      await missingDatabaseFiles({ test: "file:nowhere/test.db", live: "file:./nowhere/live.db" }),
      [`${cwd}/nowhere/test.db`, `${cwd}/nowhere/live.db`],
    );
  });
});
