/**
 * `deno task build`: the service bundled into `dist/` for production starts
 * (`deno task start:bundle`), which load a few large chunks instead of some 400 modules (see
 * docs/performance.md, cold start). The API's routes are a chunk of their own that the entry
 * loads first, as from sources; the backup and ACH file workers are entries of their own; the
 * migrations and the contract are copied beside them (lib/platform/service_files.ts finds them in
 * either layout). ssh2 stays outside (a native addon, loaded from node_modules at its first use),
 * so the bundle runs from the repository, which holds deno.json and node_modules.
 * `deno run -A cli/build.ts [OUTDIR]` writes elsewhere; a build replaces the previous bundle there.
 */
import { serviceFileUrl } from "../lib/platform/service_files.ts";

/** The modules that start a thread of their own: the service, and each worker it starts. */
const ENTRIES = [
  "main.ts",
  "lib/backup/copy_worker.ts",
  "lib/ach/file_worker.ts",
  "db/checkpoint_worker.ts",
];
/** Packages left to node_modules: ssh2 loads a native addon (cpu-features) the bundler cannot. */
const EXTERNAL = ["ssh2", "cpu-features", "ssh2-sftp-client"];
/** The bundle's own paths in its directory, removed before a build writes new ones. */
const BUNDLE_DIRS = ["lib", "db", "docs"];
/**
 * The bundler's warning that a page's `@jsxImportSource` comment is not kept: harmless, since
 * deno.json sets the same source for every file (tests/bundle_test.ts compares the pages).
 */
const JSX_COMMENT_WARNING = "[unsupported-jsx-comment]";

export class BuildError extends Error {}

/** Writes the bundle into `outdir`, replacing the previous one there. */
export async function buildBundle(outdir: string): Promise<void> {
  const root = serviceFileUrl("").pathname;
  await Deno.mkdir(outdir, { recursive: true });
  // Deno finds deno.json (and so ssh2 in node_modules) from the bundle's own place.
  if (!`${await Deno.realPath(outdir)}/`.startsWith(await Deno.realPath(root))) {
    throw new BuildError(`${outdir} is outside the repository: the bundle must be inside it`);
  }
  for await (const entry of Deno.readDir(outdir)) {
    if (entry.isFile && entry.name.endsWith(".js") || BUNDLE_DIRS.includes(entry.name)) {
      await Deno.remove(`${outdir}/${entry.name}`, { recursive: true });
    }
  }
  const bundled = await new Deno.Command(Deno.execPath(), {
    args: [
      "bundle",
      "--platform=deno",
      "--code-splitting",
      `--outdir=${outdir}`,
      ...EXTERNAL.map((name) => `--external=${name}`),
      ...ENTRIES,
    ],
    cwd: root,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const log = new TextDecoder().decode(bundled.stderr) + new TextDecoder().decode(bundled.stdout);
  if (!bundled.success) throw new BuildError(`deno bundle failed:\n${log}`);
  const warnings = log.split("\n")
    .filter((line) => line.includes("warning") && !line.includes(JSX_COMMENT_WARNING))
    .filter((line) => !line.includes("is experimental"));
  if (warnings.length > 0) throw new BuildError(`deno bundle warned:\n${warnings.join("\n")}`);

  await Deno.mkdir(`${outdir}/db/migrations/meta`, { recursive: true });
  await Deno.copyFile(
    `${root}db/migrations/meta/_journal.json`,
    `${outdir}/db/migrations/meta/_journal.json`,
  );
  for await (const entry of Deno.readDir(`${root}db/migrations`)) {
    if (entry.isFile && entry.name.endsWith(".sql")) {
      await Deno.copyFile(
        `${root}db/migrations/${entry.name}`,
        `${outdir}/db/migrations/${entry.name}`,
      );
    }
  }
  await Deno.mkdir(`${outdir}/docs`, { recursive: true });
  await Deno.copyFile(`${root}docs/contract.md`, `${outdir}/docs/contract.md`);
}

if (import.meta.main) {
  const outdir = Deno.args[0] ?? serviceFileUrl("dist").pathname;
  try {
    await buildBundle(outdir);
  } catch (error) {
    if (!(error instanceof BuildError)) throw error;
    console.error(error.message);
    Deno.exit(1);
  }
  console.log(`bundle written to ${outdir}: start it with deno task start:bundle`);
}
