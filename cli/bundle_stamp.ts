/**
 * What a build of the bundle records beside it (cli/build.ts writes it) and the check a start
 * makes of it (cli/start.ts), apart from the build itself: a start that finds the bundle current
 * loads nothing of the build.
 */
import { serviceFileUrl } from "../lib/platform/service_files.ts";

/** What a build records of its inputs, beside the bundle, so that a start knows it is current. */
export const BUILD_STAMP = "build.json";

/** The Deno that built a bundle, and each input's size and modification time then. */
export interface BuildStamp {
  readonly deno: string;
  readonly inputs: Readonly<Record<string, readonly [size: number, modifiedMs: number | null]>>;
}

/** The repository's top as a path, that of each input is appended to. */
export const topPath = (): string => decodeURIComponent(serviceFileUrl("").pathname);

/**
 * True when `outdir` holds a bundle this Deno built from the repository's files as they are now
 * (each input's size and modification time as the build saw them). Any difference, or no
 * complete build, is not current. A start pays a stat per input (a few hundred, 1 to 3 ms).
 */
export function bundleIsCurrent(outdir: string): boolean {
  let stamp: BuildStamp;
  try {
    stamp = JSON.parse(Deno.readTextFileSync(`${outdir}/${BUILD_STAMP}`));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
  if (stamp.deno !== Deno.version.deno) return false;
  const top = topPath();
  return Object.entries(stamp.inputs).every(([path, [size, modifiedMs]]) => {
    try {
      const stat = Deno.statSync(top + path);
      return stat.size === size && (stat.mtime?.getTime() ?? null) === modifiedMs;
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return false;
      throw error;
    }
  });
}
