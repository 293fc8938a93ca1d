/**
 * `deno task start`: the service's production start, from the bundle in `dist/` (see
 * docs/performance.md, cold start: its first API answer comes in about a third of the sources'
 * time). A bundle that is missing, or was built from other files than the repository holds now
 * (after a pull, say) or by another Deno, is built again first (cli/build.ts, a few seconds); when
 * that build fails, the service starts from the sources, and says so. Either way the service runs
 * in this process, exactly as `deno run main.ts` would run it.
 */
import { bundleIsCurrent } from "./bundle_stamp.ts";
import { serviceFileUrl } from "../lib/platform/service_files.ts";

/** Where the service's entry is: the bundle's, built first when it is not current, or the sources'. */
export async function serviceEntry(dist: URL): Promise<URL> {
  if (bundleIsCurrent(dist.pathname)) return new URL("main.js", dist);
  console.error(`building the bundle in ${dist.pathname} (its sources changed, or it is missing)`);
  // The build's module only when building: a start from a current bundle does not load it.
  const { buildBundle, BuildError } = await import("./build.ts");
  try {
    await buildBundle(dist.pathname);
    return new URL("main.js", dist);
  } catch (error) {
    if (!(error instanceof BuildError || error instanceof Deno.errors.PermissionDenied)) {
      throw error;
    }
    console.error(
      `warning: the bundle could not be built, so the service starts from its sources (a slower ` +
        `start): ${error.message}`,
    );
    return serviceFileUrl("main.ts");
  }
}

if (import.meta.main) {
  const { main } = await import(String(await serviceEntry(serviceFileUrl("dist/"))));
  await main();
}
