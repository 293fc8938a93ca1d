/**
 * The README's walkthrough, run as written: its `sh` blocks, in order, in bash against
 * `main.ts --dev` on a temporary DATA_DIR and a free port (the only edits: the receiver's port
 * 9000 becomes a free one, and the receiver prints to a file the test reads). It must reach a
 * completed payout on each surface, and the receiver of client/receiver.ts must have verified the
 * deliveries of both endpoints with each one's own secret.
 */
import assert from "node:assert/strict";
import { freePort, startService } from "../bench/service.ts";

const root = new URL("..", import.meta.url).pathname;

/** The walkthrough's shell blocks, in order: README from its heading to the next `## `. */
async function walkthroughScript(): Promise<string> {
  const readme = await Deno.readTextFile(`${root}README.md`);
  const start = readme.indexOf("## Walkthrough");
  assert.ok(start >= 0, "the README has its walkthrough");
  const end = readme.indexOf("\n## ", start + 3);
  const section = readme.slice(start, end < 0 ? undefined : end);
  const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
  assert.ok(blocks.length >= 4, `found ${blocks.length} shell blocks`);
  return blocks.join("\n");
}

Deno.test("README walkthrough: both surfaces reach a completed payout, and the receiver verifies every delivery", async () => {
  const service = await startService();
  const dataDir = service.dataDir;
  const receiverPort = freePort();
  const receiverLog = `${dataDir}/receiver.log`;
  try {
    const script = (await walkthroughScript())
      .replaceAll("127.0.0.1:9000", `127.0.0.1:${receiverPort}`)
      .replace(
        "deno run -N -E client/receiver.ts &",
        `RECEIVER_PORT=${receiverPort} deno run -N -E client/receiver.ts > "${receiverLog}" &`,
      );
    assert.match(script, new RegExp(`client/receiver.ts > "${receiverLog}" &`));
    // Deliveries follow the commits by a moment (a refused first attempt is retried within
    // seconds): wait for both creations and completions, at most a minute, then stop it.
    const tail = `
for i in $(seq 1 300); do
  grep -q 'DISBURSEMENT.COMPLETED' "${receiverLog}" && grep -q 'disbursement.completed' "${receiverLog}" &&
    grep -q 'DISBURSEMENT.CREATED' "${receiverLog}" && grep -q 'disbursement.created' "${receiverLog}" && break
  sleep 0.2
done
kill %1
`;
    const run = await new Deno.Command("bash", {
      // Whatever happens, the receiver goes with the script (it holds the script's stderr).
      args: ["-e", "-c", `trap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n${script}${tail}`],
      cwd: root,
      env: { DATA_DIR: dataDir, PATH: `${Deno.execPath().replace(/\/[^/]+$/, "")}:/usr/bin:/bin` },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const out = new TextDecoder().decode(run.stdout);
    const err = new TextDecoder().decode(run.stderr);
    assert.equal(run.code, 0, `the walkthrough failed:\n${out}\n${err}`);
    assert.match(out, /"available":1005000/, "the ACH funding arrived on the line");
    assert.match(out, /"id":"dsb_\w+","object":"disbursement","status":"completed"/);
    assert.match(out, /"disbursement_uuid":"D-2001","payee_uuid":"P-1","status":"Completed"/);
    const received = (await Deno.readTextFile(receiverLog)).trim().split("\n");
    for (
      const event of [
        "disbursement.created sequence 1",
        "disbursement.completed",
        "DISBURSEMENT.CREATED sequence 1",
        "DISBURSEMENT.COMPLETED",
      ]
    ) {
      assert.ok(
        received.some((line) => line.includes(event)),
        `${event} in\n${received.join("\n")}`,
      );
    }
  } finally {
    await service.stop();
  }
});
