/**
 * Which webhook URLs may be registered and reached (contract §8): live endpoints must be https to a
 * global unicast address. Every block of the IANA IPv4 and IPv6 special-purpose address registries
 * is refused, written in any form (the URL parser turns `2130706433` and `0x7f.1` into 127.0.0.1
 * before this check), and so is every IPv6 address outside 2000::/3. The NAT64, 6to4 and Teredo
 * forms carry an IPv4 address, which must itself be public. The test environment also accepts
 * http and loopback, for receivers on a developer's machine. Host names are resolved and every
 * address judged at registration (when the name resolves) and again at every attempt.
 */
import { ok, refuse, type Result } from "../platform/result.ts";

interface Block {
  readonly cidr: string;
  readonly name: string;
}

/** IANA IPv4 Special-Purpose Address Registry, plus multicast and the reserved 240/4. */
const IPV4_SPECIAL: readonly Block[] = [
  { cidr: "0.0.0.0/8", name: '"this" network' },
  { cidr: "10.0.0.0/8", name: "private-use" },
  { cidr: "100.64.0.0/10", name: "shared address space, CGNAT" },
  { cidr: "127.0.0.0/8", name: "loopback" },
  { cidr: "169.254.0.0/16", name: "link-local and cloud metadata" },
  { cidr: "172.16.0.0/12", name: "private-use" },
  { cidr: "192.0.0.0/24", name: "IETF protocol assignments" },
  { cidr: "192.0.2.0/24", name: "documentation, TEST-NET-1" },
  { cidr: "192.31.196.0/24", name: "AS112-v4" },
  { cidr: "192.52.193.0/24", name: "AMT" },
  { cidr: "192.88.99.0/24", name: "deprecated 6to4 relay anycast" },
  { cidr: "192.168.0.0/16", name: "private-use" },
  { cidr: "192.175.48.0/24", name: "direct delegation AS112 service" },
  { cidr: "198.18.0.0/15", name: "benchmarking" },
  { cidr: "198.51.100.0/24", name: "documentation, TEST-NET-2" },
  { cidr: "203.0.113.0/24", name: "documentation, TEST-NET-3" },
  { cidr: "224.0.0.0/4", name: "multicast" },
  { cidr: "255.255.255.255/32", name: "limited broadcast" },
  { cidr: "240.0.0.0/4", name: "reserved" },
];

/** How an IPv6 block carries IPv4 addresses, each of which must be public for it to be reached. */
type Embedded = (groups: readonly number[]) => number[];

interface Ipv6Block extends Block {
  /** Set for the forms that are reachable when the IPv4 address they carry is public. */
  readonly carries?: Embedded;
}

const ipv4Of = (high: number, low: number) => ((high << 16) | low) >>> 0;

/**
 * IANA IPv6 Special-Purpose Address Registry, plus the deprecated forms that still route to IPv4
 * or to a local network (IPv4-compatible, IPv4-translated, site-local). First match wins, so the
 * Teredo /32 is judged by what it carries before the rest of 2001::/23 is refused. The registry's
 * globally reachable anycast services inside 2001::/23 (PCP, TURN, DNS-SD, AMT, AS112, ORCHIDv2,
 * drone remote ID) are refused with it: none of them is a webhook receiver.
 */
const IPV6_SPECIAL: readonly Ipv6Block[] = [
  { cidr: "::/128", name: "unspecified" },
  { cidr: "::1/128", name: "loopback" },
  { cidr: "::/96", name: "deprecated IPv4-compatible" },
  { cidr: "::ffff:0:0/96", name: "IPv4-mapped" },
  { cidr: "::ffff:0:0:0/96", name: "IPv4-translated" },
  {
    cidr: "64:ff9b::/96",
    name: "NAT64 well-known prefix",
    carries: (g) => [ipv4Of(g[6], g[7])],
  },
  { cidr: "64:ff9b:1::/48", name: "NAT64 local-use prefix" },
  { cidr: "100::/64", name: "discard-only" },
  {
    cidr: "2001::/32",
    name: "Teredo",
    // The server's address in clear, the client's inverted (RFC 4380).
    carries: (g) => [ipv4Of(g[2], g[3]), ~ipv4Of(g[6], g[7]) >>> 0],
  },
  { cidr: "2001::/23", name: "IETF protocol assignments" },
  { cidr: "2001:db8::/32", name: "documentation" },
  { cidr: "2002::/16", name: "6to4", carries: (g) => [ipv4Of(g[1], g[2])] },
  { cidr: "2620:4f:8000::/48", name: "direct delegation AS112 service" },
  { cidr: "3fff::/20", name: "documentation" },
  { cidr: "5f00::/16", name: "SRv6 segment identifiers" },
  { cidr: "fc00::/7", name: "unique local" },
  { cidr: "fe80::/10", name: "link-local" },
  { cidr: "fec0::/10", name: "deprecated site-local" },
  { cidr: "ff00::/8", name: "multicast" },
];

const GLOBAL_UNICAST_V6 = "2000::/3";

function ipv4Number(text: string): number | null {
  const parts = text.split(".");
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return null;
  return parts.reduce((n, p) => n * 256 + Number(p), 0);
}

const dotted = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");

/** The eight 16-bit groups of an IPv6 address (without brackets), or null when it is not one. */
function ipv6Groups(text: string): number[] | null {
  let h = text.toLowerCase();
  const tail = h.slice(h.lastIndexOf(":") + 1);
  if (tail.includes(".")) {
    const n = ipv4Number(tail);
    if (n === null) return null;
    h = `${h.slice(0, h.length - tail.length)}${(n >>> 16).toString(16)}:${
      (n & 0xffff).toString(16)
    }`;
  }
  const halves = h.split("::");
  if (halves.length > 2) return null;
  const groupsOf = (part: string) => (part === "" ? [] : part.split(":"));
  const head = groupsOf(halves[0]);
  const rest = halves.length === 2 ? groupsOf(halves[1]) : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const all = [...head, ...Array(halves.length === 2 ? missing : 0).fill("0"), ...rest];
  if (!all.every((g) => /^[0-9a-f]{1,4}$/.test(g))) return null;
  return all.map((g) => parseInt(g, 16));
}

const toBigInt = (groups: readonly number[]) => groups.reduce((n, g) => (n << 16n) | BigInt(g), 0n);

interface Prefix {
  readonly value: bigint;
  readonly bits: number;
  readonly width: 32 | 128;
}

function parseCidr(cidr: string): Prefix {
  const [address, bits] = cidr.split("/");
  const v4 = ipv4Number(address);
  const groups = v4 === null ? ipv6Groups(address) : null;
  if (v4 === null && groups === null) throw new Error(`bad block ${cidr}`);
  return v4 !== null
    ? { value: BigInt(v4), bits: Number(bits), width: 32 }
    : { value: toBigInt(groups!), bits: Number(bits), width: 128 };
}

const within = (value: bigint, prefix: Prefix) => {
  const shift = BigInt(prefix.width - prefix.bits);
  return (value >> shift) === (prefix.value >> shift);
};

const ipv4Table = IPV4_SPECIAL.map((block) => ({ ...block, prefix: parseCidr(block.cidr) }));
const ipv6Table = IPV6_SPECIAL.map((block) => ({ ...block, prefix: parseCidr(block.cidr) }));
const globalUnicast = parseCidr(GLOBAL_UNICAST_V6);

function specialIpv4Block(n: number): Block | null {
  return ipv4Table.find((block) => within(BigInt(n), block.prefix)) ?? null;
}

/** Why an IPv4 address may not be a webhook target, or null when it is public (or not IPv4). */
export function blockedIpv4(host: string): string | null {
  const n = ipv4Number(host);
  if (n === null) return null;
  const block = specialIpv4Block(n);
  return block ? `${host} is in ${block.cidr} (${block.name}), not a public address` : null;
}

/** Why an IPv6 address (without brackets) may not be a webhook target, or null when it is public. */
export function blockedIpv6(host: string): string | null {
  const groups = ipv6Groups(host);
  if (groups === null) return host.includes(":") ? `${host} is not an IPv6 address` : null;
  const value = toBigInt(groups);
  const block = ipv6Table.find((b) => within(value, b.prefix));
  if (block?.carries) {
    for (const carried of block.carries(groups)) {
      const inner = specialIpv4Block(carried);
      if (inner) {
        return `${host} is in ${block.cidr} (${block.name}) and carries ${
          dotted(carried)
        }, which is in ${inner.cidr} (${inner.name})`;
      }
    }
    return null;
  }
  if (block) return `${host} is in ${block.cidr} (${block.name}), not a public address`;
  if (!within(value, globalUnicast)) {
    return `${host} is outside ${GLOBAL_UNICAST_V6}, the global unicast space`;
  }
  return null;
}

const isLoopbackAddress = (address: string) => {
  const v4 = ipv4Number(address);
  if (v4 !== null) return v4 >>> 24 === 127;
  const groups = ipv6Groups(address);
  return groups !== null && toBigInt(groups) === 1n;
};

/**
 * Why a resolved address may not be reached in `environment`, or null when it may: public, or
 * loopback in the test environment.
 */
export function blockedAddress(address: string, environment: "test" | "live"): string | null {
  if (environment === "test" && isLoopbackAddress(address)) return null;
  return address.includes(":") ? blockedIpv6(address) : blockedIpv4(address);
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

/** Resolves a host name to its addresses (A and AAAA). */
export type HostResolver = (host: string, signal: AbortSignal) => Promise<string[]>;

/** Deno's resolver: both record types, failing only when neither answers. */
export const resolveWithDns: HostResolver = async (host, signal) => {
  const lookups = await Promise.allSettled([
    Deno.resolveDns(host, "A", { signal }),
    Deno.resolveDns(host, "AAAA", { signal }),
  ]);
  const found = lookups.flatMap((l) => (l.status === "fulfilled" ? l.value : []));
  if (found.length === 0 && lookups[0].status === "rejected") throw lookups[0].reason;
  return found;
};

/** A literal address or localhost: nothing to resolve, checkEndpointUrl judged it already. */
const isLiteralHost = (hostname: string) =>
  hostname.startsWith("[") || ipv4Number(hostname) !== null || hostname === "localhost";

export type ResolvedHost =
  | { readonly ok: true; readonly addresses: string[] | null }
  | { readonly ok: false; readonly unresolved: boolean; readonly message: string };

/**
 * The addresses `hostname` may be reached at in `environment`, every one judged (a single blocked
 * answer refuses the name: the connection could go to any of them); null addresses for a literal
 * address or localhost, which checkEndpointUrl judges.
 */
export async function resolveEndpointHost(
  hostname: string,
  environment: "test" | "live",
  options: { resolve?: HostResolver; signal: AbortSignal },
): Promise<ResolvedHost> {
  if (isLiteralHost(hostname)) return { ok: true, addresses: null };
  let addresses: string[];
  try {
    addresses = await (options.resolve ?? resolveWithDns)(hostname, options.signal);
  } catch (error) {
    const message = `${hostname} did not resolve: ${
      error instanceof Error ? error.message : error
    }`;
    return { ok: false, unresolved: true, message };
  }
  if (addresses.length === 0) {
    return { ok: false, unresolved: true, message: `${hostname} has no address` };
  }
  for (const address of addresses) {
    const problem = blockedAddress(address, environment);
    if (problem) {
      const message = `${hostname} resolves to ${address}: ${problem}`;
      return { ok: false, unresolved: false, message };
    }
  }
  return { ok: true, addresses };
}

/** How long a registration waits for the host name to resolve before accepting it unjudged. */
export const REGISTRATION_RESOLVE_TIMEOUT_MS = 2_000;

/**
 * The URL when `raw` may be registered: checkEndpointUrl, then the host name's addresses. A name
 * that does not resolve (yet) is accepted; every attempt resolves and judges it again.
 */
export async function checkEndpointRegistration(
  raw: string,
  environment: "test" | "live",
  resolve?: HostResolver,
): Promise<Result<URL, "url_not_allowed">> {
  const url = checkEndpointUrl(raw, environment);
  if (!url.ok) return url;
  const resolved = await resolveEndpointHost(url.value.hostname, environment, {
    resolve,
    signal: AbortSignal.timeout(REGISTRATION_RESOLVE_TIMEOUT_MS),
  });
  if (!resolved.ok && !resolved.unresolved) return refuse("url_not_allowed", resolved.message);
  return url;
}
