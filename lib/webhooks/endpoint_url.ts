/**
 * Which webhook URLs may be registered (DESIGN 8): live endpoints must be https and must not point
 * at loopback, private, link-local, CGNAT, metadata, multicast or reserved addresses, written in any
 * form (the URL parser turns `2130706433` and `0x7f.1` into 127.0.0.1 before this check). The test
 * environment also accepts http and loopback, for receivers on a developer's machine. Host names
 * are checked again after DNS resolution when delivering.
 */
import { ok, refuse, type Result } from "../platform/result.ts";

const ipv4Blocked: [number, number][] = [
  [0x00000000, 8], // "this" network
  [0x0a000000, 8], // private
  [0x64400000, 10], // CGNAT
  [0x7f000000, 8], // loopback
  [0xa9fe0000, 16], // link-local, cloud metadata
  [0xac100000, 12], // private
  [0xc0000000, 24], // IETF protocol assignments
  [0xc0000200, 24], // documentation
  [0xc0a80000, 16], // private
  [0xc6120000, 15], // benchmarking
  [0xc6336400, 24], // documentation
  [0xcb007100, 24], // documentation
  [0xe0000000, 4], // multicast
  [0xf0000000, 4], // reserved, broadcast
];

function ipv4Number(host: string): number | null {
  const parts = host.split(".");
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return null;
  return parts.reduce((n, p) => n * 256 + Number(p), 0);
}

/** Why an IPv4 address may not be a webhook target, or null when it is public. */
export function blockedIpv4(host: string): string | null {
  const n = ipv4Number(host);
  if (n === null) return null;
  for (const [base, bits] of ipv4Blocked) {
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    if (((n & mask) >>> 0) === base) {
      return `${host} is a loopback, private, link-local or reserved address`;
    }
  }
  return null;
}

/** Why an IPv6 address (without brackets) may not be a webhook target, or null. */
export function blockedIpv6(host: string): string | null {
  const h = host.toLowerCase();
  if (!h.includes(":")) return null;
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(h);
  if (mapped) {
    const n = parseInt(mapped[1], 16) * 65536 + parseInt(mapped[2], 16);
    return blockedIpv4([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".")) ??
      `${host} maps an IPv4 address`;
  }
  if (h === "::" || h === "::1") return `${host} is unspecified or loopback`;
  const first = parseInt(h.split(":")[0] || "0", 16);
  if ((first & 0xfe00) === 0xfc00) return `${host} is a unique local address`;
  if ((first & 0xffc0) === 0xfe80) return `${host} is link-local`;
  if ((first & 0xff00) === 0xff00) return `${host} is multicast`;
  if (h.startsWith("64:ff9b:") || h.startsWith("2001:db8:")) {
    return `${host} is a translation or documentation prefix`;
  }
  return null;
}

const isLoopbackHost = (host: string) =>
  host === "localhost" || host === "[::1]" || /^127\./.test(host);

/** The parsed URL when `raw` may be registered in `environment`, or why not. */
export function checkEndpointUrl(
  raw: string,
  environment: "test" | "live",
): Result<URL, "url_not_allowed"> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse("url_not_allowed", "url must be an absolute URL");
  }
  if (url.username || url.password) {
    return refuse("url_not_allowed", "url must not carry credentials");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return refuse("url_not_allowed", "url must be https");
  }
  const host = url.hostname.toLowerCase();
  if (environment === "test" && isLoopbackHost(host)) return ok(url);
  if (url.protocol !== "https:") {
    return refuse(
      "url_not_allowed",
      environment === "live"
        ? "a live url must be https"
        : "url must be https, or http on localhost",
    );
  }
  if (host === "localhost" || host.endsWith(".localhost")) {
    return refuse("url_not_allowed", `${host} is loopback`);
  }
  const problem = host.startsWith("[") ? blockedIpv6(host.slice(1, -1)) : blockedIpv4(host);
  if (problem) return refuse("url_not_allowed", problem);
  return ok(url);
}
