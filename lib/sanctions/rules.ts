/**
 * Sanctions screening rules (pure): reading the OFAC SDN list as published, normalizing names,
 * and the fuzzy match.
 *
 * **Normalization.** A name is folded to uppercase ASCII (accents dropped: "Sanktiónov" →
 * "SANKTIONOV"; ß → SS, Æ → AE, Ø → O, Ł → L), every character other than a letter or a digit
 * becomes a space, the name is cut into tokens, titles and company forms are dropped (MR, MRS,
 * MS, MISS, DR, PROF, SIR, JR, SR, THE, OF, AND, CO, COMPANY, CORP, CORPORATION, INC,
 * INCORPORATED, LLC, LLP, LP, LTD, LIMITED, PLC, SA, AG, GMBH) and the tokens are sorted, so
 * "SANKTIONOV, Ivan" and "Mr. Ivan Sanktionov" both read "IVAN SANKTIONOV".
 *
 * **Match.** A list name matches a screened name when either
 * 1. the Jaro-Winkler similarity of their normalized (sorted-token) strings is at least 0.92, or
 * 2. the list name has at least 2 tokens and each of them is within Jaro-Winkler 0.90 of a
 *    distinct token of the screened name (the screened name may carry more tokens: a middle
 *    name, a second surname).
 *
 * Jaro-Winkler here is Winkler's: a common prefix of up to 4 characters raises a Jaro similarity
 * above 0.7 by 0.1 per character. So "IVANA SANCHEZ" does not match "IVAN SANKTIONOV" (0.65, and
 * SANCHEZ/SANKTIONOV 0.58), while "Ivan Sanktionov", "SANKTIONOV IVAN" and "Ivan Sanktiónov" do.
 *
 * **Speed.** A list is indexed once per list id (`SanctionsIndex`): a screened token is compared
 * with the list's tokens that equal it or share its first 3 letters, and only the entries holding
 * a token within 0.8 of it are candidates. Rule 1 is computed only where a bound allows 0.92 (the
 * shorter string at least 0.6 of the longer, and enough letters in common).
 */
import { ok, refuse, type Result } from "../platform/result.ts";

/** Rule 1: Jaro-Winkler of the sorted-token strings at least this. */
export const NAME_SIMILARITY_MIN = 0.92;
/** Rule 2: each list token within this Jaro-Winkler of a distinct screened token. */
export const TOKEN_SIMILARITY_MIN = 0.90;
/** Rule 2 needs a list name of at least this many tokens (one token alone is too common). */
export const TOKENS_FOR_TOKEN_RULE_MIN = 2;
/** Candidates are found by whole tokens and by this many first letters of a token. */
const PREFIX_LENGTH = 3;
/** Winkler's prefix: at most 4 characters, 0.1 each, above a Jaro of 0.7. */
const WINKLER_PREFIX_MAX = 4;
const WINKLER_SCALE = 0.1;
const WINKLER_THRESHOLD = 0.7;
/** Rule 1 cannot reach 0.92 when the shorter string is under this share of the longer. */
const LENGTH_RATIO_MIN = 0.6;

/** The SDN file's size limit (the published list is about 5 MiB). */
export const SANCTIONS_FILE_BYTES_MAX = 50 * 1024 * 1024;

const STOP_WORDS: ReadonlySet<string> = new Set([
  "MR",
  "MRS",
  "MS",
  "MISS",
  "DR",
  "PROF",
  "SIR",
  "JR",
  "SR",
  "THE",
  "OF",
  "AND",
  "CO",
  "COMPANY",
  "CORP",
  "CORPORATION",
  "INC",
  "INCORPORATED",
  "LLC",
  "LLP",
  "LP",
  "LTD",
  "LIMITED",
  "PLC",
  "SA",
  "AG",
  "GMBH",
]);

/** Text folded to uppercase ASCII letters, digits and spaces. */
export function foldName(text: string): string {
  return text
    .replace(/ß/g, "ss").replace(/[Ææ]/g, "AE").replace(/[Œœ]/g, "OE").replace(/[Øø]/g, "O")
    .replace(/[Łł]/g, "L").replace(/[Đđ]/g, "D").replace(/[Þþ]/g, "TH")
    .normalize("NFKD").replace(/[\u0300-\u036f]/g, "")
    .toUpperCase()
    .replace(/[^A-Z0-9]+/g, " ")
    .trim();
}

/** A name's tokens after folding, without stop words, sorted. */
export function nameTokens(name: string): string[] {
  return foldName(name).split(" ").filter((token) => token !== "" && !STOP_WORDS.has(token))
    .sort();
}

/** The name as the matcher compares it: its sorted tokens joined by a space. */
export function normalizeName(name: string): string {
  return nameTokens(name).join(" ");
}

/** Scratch flags of `jaro`, grown as needed: screening compares thousands of pairs. */
let aMatched = new Uint8Array(64);
let bMatched = new Uint8Array(64);

/** Jaro similarity of two strings, 0 to 1. */
export function jaro(a: string, b: string): number {
  if (a === b) return 1;
  if (a.length === 0 || b.length === 0) return 0;
  if (a.length > aMatched.length) aMatched = new Uint8Array(a.length * 2);
  if (b.length > bMatched.length) bMatched = new Uint8Array(b.length * 2);
  aMatched.fill(0, 0, a.length);
  bMatched.fill(0, 0, b.length);
  const window = Math.max(0, Math.floor(Math.max(a.length, b.length) / 2) - 1);
  let matches = 0;
  for (let i = 0; i < a.length; i++) {
    const from = Math.max(0, i - window);
    const to = Math.min(b.length - 1, i + window);
    const code = a.charCodeAt(i);
    for (let j = from; j <= to; j++) {
      if (bMatched[j] || code !== b.charCodeAt(j)) continue;
      aMatched[i] = 1;
      bMatched[j] = 1;
      matches++;
      break;
    }
  }
  if (matches === 0) return 0;
  let transpositions = 0;
  let k = 0;
  for (let i = 0; i < a.length; i++) {
    if (!aMatched[i]) continue;
    while (!bMatched[k]) k++;
    if (a.charCodeAt(i) !== b.charCodeAt(k)) transpositions++;
    k++;
  }
  const m = matches;
  return (m / a.length + m / b.length + (m - transpositions / 2) / m) / 3;
}

/** Jaro-Winkler similarity of two strings, 0 to 1. */
export function jaroWinkler(a: string, b: string): number {
  const j = jaro(a, b);
  if (j <= WINKLER_THRESHOLD) return j;
  let prefix = 0;
  const limit = Math.min(WINKLER_PREFIX_MAX, a.length, b.length);
  while (prefix < limit && a.charCodeAt(prefix) === b.charCodeAt(prefix)) prefix++;
  return j + prefix * WINKLER_SCALE * (1 - j);
}

/** One name of the list (an SDN's primary name or one of its aliases). */
export interface SanctionsEntry {
  /** The SDN's ent_num. */
  readonly entryNumber: number;
  readonly name: string;
  readonly normalizedName: string;
  readonly sdnType: string;
  readonly program: string;
}

/** How a screened name matched a list name. */
export interface NameMatch {
  readonly screenedName: string;
  readonly entryNumber: number;
  readonly listName: string;
  readonly program: string;
  /** The rule's similarity: rule 1's Jaro-Winkler, or rule 2's lowest token similarity. */
  readonly score: number;
  readonly rule: "name" | "tokens";
}

/**
 * Whether each token of `listTokens` has a distinct partner in `screenedTokens` within the token
 * rule's similarity; the lowest partner similarity, or null. Pairs are taken best first.
 */
function tokenRuleScore(listTokens: readonly string[], screenedTokens: readonly string[]) {
  if (listTokens.length < TOKENS_FOR_TOKEN_RULE_MIN) return null;
  if (listTokens.length > screenedTokens.length) return null;
  const pairs: { l: number; s: number; score: number }[] = [];
  for (const [l, listToken] of listTokens.entries()) {
    let any = false;
    for (const [s, screenedToken] of screenedTokens.entries()) {
      const score = jaroWinkler(listToken, screenedToken);
      if (score >= TOKEN_SIMILARITY_MIN) {
        pairs.push({ l, s, score });
        any = true;
      }
    }
    if (!any) return null;
  }
  pairs.sort((a, b) => b.score - a.score);
  const listUsed = new Set<number>();
  const screenedUsed = new Set<number>();
  let lowest = 1;
  for (const pair of pairs) {
    if (listUsed.has(pair.l) || screenedUsed.has(pair.s)) continue;
    listUsed.add(pair.l);
    screenedUsed.add(pair.s);
    lowest = Math.min(lowest, pair.score);
  }
  return listUsed.size === listTokens.length ? lowest : null;
}

/** Whether a list entry matches a screened name (both normalized), and how. */
export function matchName(
  entry: SanctionsEntry,
  screenedName: string,
  screenedNormalized: string,
): NameMatch | null {
  const listNormalized = entry.normalizedName;
  if (listNormalized === "" || screenedNormalized === "") return null;
  const base = {
    screenedName,
    entryNumber: entry.entryNumber,
    listName: entry.name,
    program: entry.program,
  };
  const shorter = Math.min(listNormalized.length, screenedNormalized.length);
  const longer = Math.max(listNormalized.length, screenedNormalized.length);
  if (shorter / longer >= LENGTH_RATIO_MIN) {
    const score = jaroWinkler(listNormalized, screenedNormalized);
    if (score >= NAME_SIMILARITY_MIN) return { ...base, score: round(score), rule: "name" };
  }
  const tokens = tokenRuleScore(listNormalized.split(" "), screenedNormalized.split(" "));
  return tokens === null ? null : { ...base, score: round(tokens), rule: "tokens" };
}

const round = (score: number) => Math.round(score * 10_000) / 10_000;

/** Letters, digits and spaces counted, for a cheap bound on rule 1 before computing it. */
function histogram(text: string): Uint8Array {
  const counts = new Uint8Array(HISTOGRAM_SLOTS);
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 65 && code <= 90) counts[code - 65]++;
    else if (code >= 48 && code <= 57) counts[26 + code - 48]++;
    else counts[36]++;
  }
  return counts;
}

/** A normalized name holds A-Z, 0-9 and spaces. */
const HISTOGRAM_SLOTS = 37;

/**
 * Whether rule 1 can reach its threshold: Jaro counts at most the characters both strings hold
 * (per letter, the smaller count), and Winkler's prefix adds at most 0.4 of what Jaro misses.
 * `a` lists its letters present (slots) so that only those are compared.
 */
function nameRuleReachable(
  a: { length: number; counts: Uint8Array; slots: Uint8Array },
  b: { length: number; counts: Uint8Array },
): boolean {
  const shorter = Math.min(a.length, b.length);
  if (shorter / Math.max(a.length, b.length) < LENGTH_RATIO_MIN) return false;
  let common = 0;
  const slots = a.slots;
  for (let i = 0; i < slots.length; i++) {
    common += Math.min(a.counts[slots[i]], b.counts[slots[i]]);
  }
  const jaroMax = (common / a.length + common / b.length + 1) / 3;
  return jaroMax + (1 - jaroMax) * WINKLER_PREFIX_MAX * WINKLER_SCALE >= NAME_SIMILARITY_MIN;
}

/** The slots of a histogram that are not zero. */
function slotsOf(counts: Uint8Array): Uint8Array {
  return Uint8Array.from(counts.keys()).filter((slot) => counts[slot] > 0);
}

/** Tokens this similar to a screened token lead to candidate entries (below rule 2's 0.90, so
 * "ABDUL RAHMAN" still finds "ABDULRAHMAN" for rule 1). */
const CANDIDATE_TOKEN_SIMILARITY_MIN = 0.8;

interface IndexedEntry {
  readonly entry: SanctionsEntry;
  readonly tokens: readonly number[];
  readonly length: number;
  readonly counts: Uint8Array;
  readonly slots: Uint8Array;
}

/**
 * A list's entries indexed for screening: each distinct token of the list, the entries that hold
 * it, and the tokens under each 3-letter prefix. A screened token is compared with the list's
 * tokens that equal it or share its first 3 letters; the entries holding a token within 0.8 of
 * it are the candidates, and only they are matched.
 */
export class SanctionsIndex {
  readonly #entries: IndexedEntry[] = [];
  readonly #tokenIds = new Map<string, number>();
  readonly #tokens: string[] = [];
  readonly #tokenEntries: number[][] = [];
  readonly #byPrefix = new Map<string, number[]>();
  /** Per entry: the screening that last saw it, and how many of its tokens were close there. */
  #seenIn = new Uint32Array(0);
  #closeTokens = new Uint16Array(0);
  #generation = 0;

  constructor(entries: readonly SanctionsEntry[]) {
    for (const entry of entries) {
      const tokens = entry.normalizedName.split(" ").filter((token) => token !== "");
      if (tokens.length === 0) continue;
      const index = this.#entries.length;
      const counts = histogram(entry.normalizedName);
      const ids = [...new Set(tokens)].map((token) => this.#tokenId(token));
      for (const id of ids) this.#tokenEntries[id].push(index);
      this.#entries.push({
        entry,
        tokens: ids,
        length: entry.normalizedName.length,
        counts,
        slots: slotsOf(counts),
      });
    }
    this.#seenIn = new Uint32Array(this.#entries.length);
    this.#closeTokens = new Uint16Array(this.#entries.length);
  }

  #nextGeneration(): number {
    if (this.#generation === 0xffffffff) {
      this.#seenIn.fill(0);
      this.#generation = 0;
    }
    return ++this.#generation;
  }

  #tokenId(token: string): number {
    let id = this.#tokenIds.get(token);
    if (id === undefined) {
      id = this.#tokens.length;
      this.#tokenIds.set(token, id);
      this.#tokens.push(token);
      this.#tokenEntries.push([]);
      const prefix = token.slice(0, PREFIX_LENGTH);
      const bucket = this.#byPrefix.get(prefix);
      if (bucket) bucket.push(id);
      else this.#byPrefix.set(prefix, [id]);
    }
    return id;
  }

  get size(): number {
    return this.#entries.length;
  }

  /** Every list name that matches one of `names`, best score first. */
  screen(names: readonly string[]): NameMatch[] {
    const found: NameMatch[] = [];
    for (const name of names) {
      const normalized = normalizeName(name);
      if (normalized === "") continue;
      const screenedTokens = normalized.split(" ");
      // The best similarity of each list token to any screened token, for the near ones.
      const near = new Map<number, number>();
      for (const token of screenedTokens) {
        const exact = this.#tokenIds.get(token);
        if (exact !== undefined) near.set(exact, 1);
        for (const id of this.#byPrefix.get(token.slice(0, PREFIX_LENGTH)) ?? []) {
          if ((near.get(id) ?? 0) === 1) continue;
          const score = jaroWinkler(this.#tokens[id], token);
          if (score >= CANDIDATE_TOKEN_SIMILARITY_MIN && score > (near.get(id) ?? 0)) {
            near.set(id, score);
          }
        }
      }
      const screened = { length: normalized.length, counts: histogram(normalized) };
      // Each candidate once, with how many of its tokens are within rule 2's similarity.
      const generation = this.#nextGeneration();
      const candidates: number[] = [];
      for (const [id, score] of near) {
        const close = score >= TOKEN_SIMILARITY_MIN ? 1 : 0;
        for (const index of this.#tokenEntries[id]) {
          if (this.#seenIn[index] !== generation) {
            this.#seenIn[index] = generation;
            this.#closeTokens[index] = 0;
            candidates.push(index);
          }
          this.#closeTokens[index] += close;
        }
      }
      for (const index of candidates) {
        const indexed = this.#entries[index];
        const tokenRule = indexed.tokens.length >= TOKENS_FOR_TOKEN_RULE_MIN &&
          this.#closeTokens[index] === indexed.tokens.length;
        if (!tokenRule && !nameRuleReachable(indexed, screened)) continue;
        const match = matchName(indexed.entry, name, normalized);
        if (match) found.push(match);
      }
    }
    return found.sort((a, b) => b.score - a.score || a.entryNumber - b.entryNumber);
  }
}

/** A row of the published SDN list, before normalization. */
export interface SdnRow {
  readonly entryNumber: number;
  readonly name: string;
  readonly sdnType: string;
  readonly program: string;
}

/**
 * CSV as OFAC writes it: comma-separated, fields in double quotes when they hold a comma or a
 * quote (a quote doubled inside), CRLF or LF line ends. A line of only the DOS end-of-file
 * character (\x1A), which the published files end with, and blank lines are skipped. Returns the
 * rows with their 1-based line numbers, or the line that does not parse.
 */
export function parseCsv(
  text: string,
): Result<{ line: number; fields: string[] }[], "invalid_input"> {
  const rows: { line: number; fields: string[] }[] = [];
  const bad = (line: number, why: string) =>
    refuse("invalid_input", `line ${line}: ${why}`, { details: { line } });
  let line = 1;
  let i = 0;
  while (i <= text.length) {
    const startLine = line;
    const fields: string[] = [];
    // One field per turn; a turn ends at a comma (another field follows) or a line end.
    for (;;) {
      let field: string;
      let at = i;
      while (text[at] === " ") at++;
      if (text[at] === '"') {
        let value = "";
        let from = at + 1;
        for (;;) {
          const quote = text.indexOf('"', from);
          if (quote === -1) return bad(startLine, "a quoted field is never closed");
          value += text.slice(from, quote);
          if (text[quote + 1] === '"') {
            value += '"';
            from = quote + 2;
            continue;
          }
          at = quote + 1;
          break;
        }
        for (const ch of value) if (ch === "\n") line++;
        while (text[at] === " ") at++;
        if (at < text.length && text[at] !== "," && text[at] !== "\r" && text[at] !== "\n") {
          return bad(line, "text after a closing quote");
        }
        field = value;
      } else {
        UNQUOTED_FIELD_END.lastIndex = i;
        const end = UNQUOTED_FIELD_END.exec(text)?.index ?? text.length;
        field = text.slice(i, end);
        if (field.includes('"')) return bad(line, "a quote inside an unquoted field");
        at = end;
      }
      fields.push(field);
      if (text[at] === ",") {
        i = at + 1;
        continue;
      }
      i = at + (text[at] === "\r" && text[at + 1] === "\n" ? 2 : 1);
      line++;
      break;
    }
    const blank = fields.length === 1 && (fields[0].trim() === "" || fields[0] === "\x1A");
    if (!blank) rows.push({ line: startLine, fields });
  }
  return ok(rows);
}

/** Where an unquoted field ends: a comma or a line end. */
const UNQUOTED_FIELD_END = /[,\r\n]/g;

/** OFAC's empty value. */
const EMPTY = "-0-";
const cell = (value: string | undefined) => {
  const trimmed = (value ?? "").trim();
  return trimmed === EMPTY ? "" : trimmed;
};

function entryNumberOf(value: string, line: number, file: string) {
  const trimmed = value.trim();
  if (!/^\d{1,9}$/.test(trimmed)) {
    return refuse(
      "invalid_input",
      `${file} line ${line}: ent_num ${JSON.stringify(trimmed.slice(0, 20))} is not a number`,
      { details: { line } },
    );
  }
  return ok(Number(trimmed));
}

/**
 * The SDN list (sdn.csv: no header; ent_num, SDN_Name, SDN_Type, Program, Title, Call_Sign,
 * Vess_type, Tonnage, GRT, Vess_flag, Vess_owner, Remarks) and its aliases (alt.csv: ent_num,
 * alt_num, alt_type, alt_name, alt_remarks), each alias under its SDN's type and program.
 */
export function parseSdnList(
  sdnCsv: string,
  altCsv: string | null,
): Result<SdnRow[], "invalid_input"> {
  const sdn = parseCsv(sdnCsv);
  if (!sdn.ok) return refuse("invalid_input", `sdn.csv ${sdn.message}`, { field: "file" });
  const rows: SdnRow[] = [];
  const byNumber = new Map<number, SdnRow>();
  for (const { line, fields } of sdn.value) {
    if (fields.length < 4) {
      return refuse(
        "invalid_input",
        `sdn.csv line ${line}: ${fields.length} columns, at least 4 expected (ent_num, SDN_Name, SDN_Type, Program, …)`,
        { field: "file" },
      );
    }
    const number = entryNumberOf(fields[0], line, "sdn.csv");
    if (!number.ok) return { ...number, field: "file" };
    const name = cell(fields[1]);
    if (name === "") {
      return refuse("invalid_input", `sdn.csv line ${line}: SDN_Name is empty`, { field: "file" });
    }
    const row = {
      entryNumber: number.value,
      name,
      sdnType: cell(fields[2]),
      program: cell(fields[3]),
    };
    rows.push(row);
    byNumber.set(row.entryNumber, row);
  }
  if (altCsv !== null) {
    const alt = parseCsv(altCsv);
    if (!alt.ok) return refuse("invalid_input", `alt.csv ${alt.message}`, { field: "alt" });
    for (const { line, fields } of alt.value) {
      if (fields.length < 4) {
        return refuse(
          "invalid_input",
          `alt.csv line ${line}: ${fields.length} columns, at least 4 expected (ent_num, alt_num, alt_type, alt_name, …)`,
          { field: "alt" },
        );
      }
      const number = entryNumberOf(fields[0], line, "alt.csv");
      if (!number.ok) return { ...number, field: "alt" };
      const name = cell(fields[3]);
      const primary = byNumber.get(number.value);
      if (name === "") continue;
      if (!primary) {
        return refuse(
          "invalid_input",
          `alt.csv line ${line}: ent_num ${number.value} is not in sdn.csv`,
          { field: "alt" },
        );
      }
      rows.push({
        entryNumber: number.value,
        name,
        sdnType: primary.sdnType,
        program: primary.program,
      });
    }
  }
  if (rows.length === 0) {
    return refuse("invalid_input", "sdn.csv holds no entries: an empty list screens nothing", {
      field: "file",
    });
  }
  return ok(rows);
}

/** The list's rows as the matcher keeps them; names that normalize to nothing are left out. */
export function sanctionsEntries(rows: readonly SdnRow[]): SanctionsEntry[] {
  const seen = new Set<string>();
  const entries: SanctionsEntry[] = [];
  for (const row of rows) {
    const key = `${row.entryNumber}\u0000${row.name}`;
    const normalizedName = normalizeName(row.name);
    if (normalizedName === "" || seen.has(key)) continue;
    seen.add(key);
    entries.push({ ...row, normalizedName });
  }
  return entries;
}
