/**
 * The documentation's own rules: every relative link of README.md and docs/ leads to a file and
 * heading that exist; nothing in the repository cites a design file outside it (the contract is
 * docs/contract.md); the secrets file of deploy/ stays out of git and out of the Docker context.
 */
import assert from "node:assert/strict";

const root = new URL("..", import.meta.url).pathname;

async function markdownFiles(): Promise<string[]> {
  const files = ["README.md"];
  for await (const entry of Deno.readDir(`${root}docs`)) {
    if (entry.isFile && entry.name.endsWith(".md")) files.push(`docs/${entry.name}`);
  }
  return files.sort();
}

/** GitHub's anchor of a heading: lowercase, punctuation dropped, spaces as hyphens. */
const slug = (heading: string) =>
  heading.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").trim().replace(/\s/g, "-");

async function anchorsOf(file: string): Promise<Set<string>> {
  const text = await Deno.readTextFile(`${root}${file}`);
  const outsideCode = text.replace(/```[\s\S]*?```/g, "");
  // A heading's anchor, or an explicit one (`<a id="…"></a>`) for a paragraph a link points at.
  return new Set([
    ...[...outsideCode.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1])),
    ...[...outsideCode.matchAll(/<a id="([^"]+)"><\/a>/g)].map((m) => m[1]),
  ]);
}

Deno.test("every relative link of README.md and docs/ leads to an existing file and heading or anchor", async () => {
  const broken: string[] = [];
  for (const file of await markdownFiles()) {
    const text = (await Deno.readTextFile(`${root}${file}`)).replace(/```[\s\S]*?```/g, "");
    const dir = file.includes("/") ? file.slice(0, file.lastIndexOf("/") + 1) : "";
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target)) continue;
      const [path, anchor] = target.split("#");
      const resolved = path === "" ? file : new URL(path, `file:///${dir}`).pathname.slice(1);
      try {
        await Deno.stat(`${root}${resolved}`);
      } catch {
        broken.push(`${file}: ${target} (no ${resolved})`);
        continue;
      }
      if (anchor && resolved.endsWith(".md") && !(await anchorsOf(resolved)).has(anchor)) {
        broken.push(`${file}: ${target} (no heading #${anchor} in ${resolved})`);
      }
    }
  }
  assert.deepEqual(broken, []);
});

Deno.test("nothing in the repository cites a design file outside it", async () => {
  const listed = await new Deno.Command("git", {
    args: ["ls-files", "-z"],
    cwd: root,
    stdout: "piped",
  }).output();
  const files = new TextDecoder().decode(listed.stdout).split("\0").filter(Boolean);
  const rule = new RegExp(["DESIGN \\d", "shared" + "/"].join("|"));
  const citing: string[] = [];
  for (const file of files) {
    if (file === "tests/docs_rules_test.ts" || /\.(png|pdf|ttf|otf)$/.test(file)) continue;
    let text: string;
    try {
      text = await Deno.readTextFile(`${root}${file}`);
    } catch {
      continue;
    }
    text.split("\n").forEach((line, i) => {
      if (rule.test(line)) citing.push(`${file}:${i + 1}: ${line.trim().slice(0, 120)}`);
    });
  }
  assert.deepEqual(citing, [], "cite docs/contract.md (contract §n) or say it in plain words");
});

Deno.test("deploy/disbursements.env stays out of git and out of the Docker build context", async () => {
  const ignored = await new Deno.Command("git", {
    args: ["check-ignore", "--no-index", "deploy/disbursements.env"],
    cwd: root,
    stdout: "piped",
  }).output();
  assert.equal(ignored.code, 0, ".gitignore leaves deploy/disbursements.env out");
  const dockerignore = await Deno.readTextFile(`${root}deploy/Dockerfile.dockerignore`);
  assert.ok(dockerignore.split("\n").includes("deploy/disbursements.env"));
  const unit = await Deno.readTextFile(`${root}deploy/disbursements.service`);
  assert.match(unit, /install -d -m 0700 -o root -g root \/etc\/disbursements/);
});
