/**
 * The paths an app serves and the methods it answers at each, from its route table: a known path
 * asked with another method is a 405 naming the methods it answers. The API's app builds them from
 * its routes; the API's core (routes/api_core.ts) from the same table written down
 * (routes/api_routes.ts), so both answer a wrong method alike. No hono here: the core loads this
 * before the first answer.
 */

/** A path pattern the app serves and the methods it answers there. */
export interface KnownPath {
  readonly pattern: RegExp;
  readonly methods: ReadonlySet<string>;
}

/** Known paths by the shape of the paths they may match. */
export type KnownPaths = ReadonlyMap<string, readonly KnownPath[]>;

/**
 * The shape a path and the patterns that may match it share: its segment count and first segment
 * (a parameter's first segment is ":"). Every request is looked up, so it tests the few patterns
 * of its shape, not every path the app serves (hundreds: a fifth of a cached read's time).
 */
function shapeOf(path: string, firstIsParameter = false): string {
  const segments = path.split("/");
  return `${segments.length} ${firstIsParameter ? ":" : segments[1]}`;
}

/** The known paths that may match `path`: those of its shape, and those starting with a parameter. */
function knownPathsOfShape(paths: KnownPaths, path: string): readonly KnownPath[] {
  const exact = paths.get(shapeOf(path)) ?? [];
  const parameter = paths.get(shapeOf(path, true));
  return parameter ? [...exact, ...parameter] : exact;
}

/**
 * The methods of every path an app serves, from its route table (HEAD wherever GET, as Hono
 * answers it). Middleware (method ALL) and wildcard paths are not paths of their own; the admin
 * endpoint refuses everyone but loopback first, so it is left to itself.
 */
export function knownPaths(routes: readonly { method: string; path: string }[]): KnownPaths {
  const byPath = new Map<string, Set<string>>();
  for (const { method, path } of routes) {
    if (method === "ALL" || path.includes("*") || path.startsWith("/admin")) continue;
    const normalized = path.length > 1 ? path.replace(/\/$/, "") : path;
    const methods = byPath.get(normalized) ?? new Set<string>();
    methods.add(method);
    if (method === "GET") methods.add("HEAD");
    byPath.set(normalized, methods);
  }
  const byShape = new Map<string, KnownPath[]>();
  for (const [path, methods] of byPath) {
    const shape = shapeOf(path, path.split("/")[1]?.startsWith(":"));
    const known = {
      pattern: new RegExp(
        "^" +
          path.split("/").map((segment) =>
            segment.startsWith(":") ? "[^/]+" : segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
          ).join("/") + "$",
      ),
      methods,
    };
    byShape.set(shape, [...(byShape.get(shape) ?? []), known]);
  }
  return byShape;
}

/**
 * The methods `path` answers when it is a known path that does not answer `method` (sorted, for
 * the 405's Allow header), or null: an unknown path, or one that answers `method`.
 */
export function methodsAllowedInstead(
  paths: KnownPaths,
  path: string,
  method: string,
): string[] | null {
  const matching = knownPathsOfShape(paths, path).filter((known) => known.pattern.test(path));
  if (matching.length === 0 || matching.some((known) => known.methods.has(method))) return null;
  return [...new Set(matching.flatMap((known) => [...known.methods]))].sort();
}
