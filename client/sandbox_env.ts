/**
 * Prints the sandbox's credentials as shell assignments, so a walkthrough needs neither jq nor
 * copying by hand: `eval "$(deno run -R -E client/sandbox_env.ts)"` sets B (the base URL), TIN, CAK and
 * UAK (Acme Mutual's TIN, company key and test user key) and SK (the test key of its line `auto`).
 * Reads `$DATA_DIR/sandbox-credentials.json` (default `./data`), or the path given as argument.
 */
const path = Deno.args[0] ??
  `${(Deno.env.get("DATA_DIR") ?? "./data").replace(/\/+$/, "")}/sandbox-credentials.json`;

let text: string;
try {
  text = await Deno.readTextFile(path);
} catch {
  console.error(`${path}: no sandbox credentials here; start the sandbox first (deno task dev)`);
  Deno.exit(1);
}
const sandbox = JSON.parse(text);
const acme = sandbox.companies[0];
const auto = acme.lines.find((line: { line: string }) => line.line === "auto") ?? acme.lines[0];

/** Single-quoted for the shell: every value is printable ASCII without a quote. */
const quoted = (value: string) => `'${value.replaceAll("'", "'\\''")}'`;
const variables: [string, string][] = [
  ["B", sandbox.base_url],
  ["TIN", acme.tin],
  ["CAK", acme.company_api_key],
  ["UAK", acme.users[0].api_key_test],
  ["SK", auto.key_test],
];
for (const [name, value] of variables) console.log(`${name}=${quoted(value)}`);
