/**
 * `deno task build`: the service bundled into `dist/` for production starts (`deno task start`
 * starts from it, and builds it first when it is not current: cli/start.ts), which load a few
 * large chunks instead of some 400 modules (see docs/performance.md, cold start). The API's
 * routes are a chunk of their own that the entry loads first, as from sources; the backup and ACH
 * file workers are entries of their own; the migrations and the contract are copied beside them
 * (lib/platform/service_files.ts finds them in either layout). ssh2 and the libSQL server's client stay outside (native addons, loaded from
 * node_modules at their first use), so the bundle runs from the repository, which holds deno.json
 * and node_modules. Beside the bundle, build.json records what it was built from.
 * `deno run -A cli/build.ts [OUTDIR]` writes elsewhere; a build replaces the previous bundle there.
 */
import { serviceFileUrl } from "../lib/platform/service_files.ts";
import { BUILD_STAMP, type BuildStamp, topPath } from "./bundle_stamp.ts";

export { BUILD_STAMP, bundleIsCurrent } from "./bundle_stamp.ts";

/** The modules that start a thread of their own: the service, and each worker it starts. */
const ENTRIES = [
  "main.ts",
  "lib/backup/copy_worker.ts",
  "lib/ach/file_worker.ts",
  "db/checkpoint_worker.ts",
];
/**
 * Packages left to node_modules: ssh2 loads a native addon (cpu-features) the bundler cannot, and
 * so does the libSQL server's client (its Node build requires the native libsql package, which
 * only Deno's own resolution finds). Bundled, that client also made every chunk load Node's
 * `createRequire` at start, which loads Deno's Node layer (about 15 ms of a cold start).
 */
const EXTERNAL = ["ssh2", "cpu-features", "ssh2-sftp-client", "@libsql/client"];
/** The bundle's own paths in its directory, removed before a build writes new ones. */
const BUNDLE_DIRS = ["lib", "db", "docs"];
/** Inputs besides the entries' modules: the import map and lock, and the files copied beside. */
const OTHER_INPUTS = [
  "deno.json",
  "deno.lock",
  "db/migrations/meta/_journal.json",
  "docs/contract.md",
];
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
  // Without its stamp, a bundle is not current until this build has written every file.
  await Deno.remove(`${outdir}/${BUILD_STAMP}`).catch((error) => {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  });
  // Each input as it is before the bundler reads it: a change made during the build is seen.
  const stamp = await stampOf(await inputsOf(root));
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
  await Deno.writeTextFile(`${outdir}/${BUILD_STAMP}`, JSON.stringify(stamp));
}

/**
 * The repository's files a build reads (paths from its top): every local module the entries
 * import, statically or not (`deno info`), the migrations and the other inputs.
 */
async function inputsOf(root: string): Promise<string[]> {
  const modules = await Promise.all(ENTRIES.map(async (entry) => {
    const info = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", entry],
      cwd: root,
      env: { NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!info.success) {
      throw new BuildError(`deno info ${entry} failed:\n${new TextDecoder().decode(info.stderr)}`);
    }
    const graph: { modules: { specifier: string }[] } = JSON.parse(
      new TextDecoder().decode(info.stdout),
    );
    const top = serviceFileUrl("").href;
    return graph.modules.map((module) => module.specifier)
      .filter((specifier) => specifier.startsWith(top) && !specifier.includes("/node_modules/"))
      .map((specifier) => decodeURIComponent(specifier.slice(top.length)));
  }));
  const migrations = await Array.fromAsync(
    Deno.readDir(`${root}db/migrations`),
    (entry) => `db/migrations/${entry.name}`,
  );
  return [...new Set([...modules.flat(), ...migrations.filter((path) => path.endsWith(".sql"))])]
    .concat(OTHER_INPUTS).sort();
}

async function stampOf(inputs: readonly string[]): Promise<BuildStamp> {
  const top = topPath();
  const stats = await Promise.all(inputs.map((path) => Deno.stat(top + path)));
  return {
    deno: Deno.version.deno,
    inputs: Object.fromEntries(
      inputs.map((path, i) => [path, [stats[i].size, stats[i].mtime?.getTime() ?? null]]),
    ),
  };
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
  console.log(`bundle written to ${outdir}: deno task start starts from it`);
}
