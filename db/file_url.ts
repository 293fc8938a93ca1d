/**
 * The file path of an embedded database's `file:` URL, apart from the embedded client: the
 * service's start reads it (the DATA_DIR's files) before it loads any database code.
 */

/** The file path of a `file:` URL (`file:dir/x.db`, `file:/abs/x.db`, `file:///abs/x.db`). */
export function filePathOf(url: string): string {
  if (!url.startsWith("file:")) throw new Error(`not a file: URL: ${url}`);
  let path = url.slice("file:".length).split("?")[0];
  if (path.startsWith("//")) {
    const authority = path.slice(2, path.indexOf("/", 2) === -1 ? undefined : path.indexOf("/", 2));
    if (authority !== "" && authority.toLowerCase() !== "localhost") {
      throw new Error(`a file: URL names no host: ${url}`);
    }
    path = path.slice(2 + authority.length);
  }
  return decodeURIComponent(path);
}
