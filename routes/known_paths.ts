/**
 * The paths an app serves and the methods it answers at each, from its route table: a known path
 * asked with another method is a 405 naming the methods it answers. The API's app builds them from
 * its routes; the API's core (routes/api_core.ts) from the same table written down
 * (routes/api_routes.ts), so both answer a wrong method alike. No hono here: the core loads this
 * before the first answer.
 */

/** A path pattern the app serves (its segments, a parameter's starting with ":") and its methods. */
export interface KnownPath {
  readonly segments: readonly string[];
  readonly methods: ReadonlySet<string>;
}

/** Known paths by the shape of the paths they may match. */
export type KnownPaths = ReadonlyMap<string, readonly KnownPath[]>;

/**
 * The shape a path and the patterns that may match it share: its segment count and first segment
 * (a parameter's first segment is ":"). Every request is looked up, so it tests the few patterns
 * of its shape, not every path the app serves (hundreds: a fifth of a cached read's time).
 */
function shapeOf(segments: readonly string[], firstIsParameter = false): string {
  return `${segments.length} ${firstIsParameter ? ":" : segments[1]}`;
}

/** Whether a pattern's segments match a path's: each equal, or a parameter's non-empty. */
function matches(known: KnownPath, segments: readonly string[]): boolean {
  return known.segments.every((segment, i) =>
    segment.startsWith(":") ? segments[i] !== "" : segment === segments[i]
  );
}

/**
 * The methods of every path an app serves, from its route table (HEAD wherever GET, as Hono
 * answers it). Middleware (method ALL) and wildcard paths are not paths of their own; the admin
 * endpoint refuses everyone but loopback first, so it is left to itself. No regular expression is
 * built: the API's core builds these before its first answer.
 */
export function knownPaths(routes: readonly { method: string; path: string }[]): KnownPaths {
  const byPath = new Map<string, Set<string>>();
  for (const { method, path } of routes) {
    if (method === "ALL" || path.includes("*") || path.startsWith("/admin")) continue;
    const normalized = path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
    const methods = byPath.get(normalized) ?? new Set<string>();
    methods.add(method);
    if (method === "GET") methods.add("HEAD");
    byPath.set(normalized, methods);
  }
  const byShape = new Map<string, KnownPath[]>();
  for (const [path, methods] of byPath) {
    const segments = path.split("/");
    const shape = shapeOf(segments, segments[1]?.startsWith(":"));
    byShape.set(shape, [...(byShape.get(shape) ?? []), { segments, methods }]);
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
  const segments = path.split("/");
  const exact = paths.get(shapeOf(segments)) ?? [];
  const parameter = paths.get(shapeOf(segments, true));
  const matching = (parameter ? [...exact, ...parameter] : exact).filter((known) =>
    matches(known, segments)
  );
  if (matching.length === 0 || matching.some((known) => known.methods.has(method))) return null;
  return [...new Set(matching.flatMap((known) => [...known.methods]))].sort();
}
