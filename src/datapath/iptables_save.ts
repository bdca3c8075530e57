/**
 * Parser of `iptables-save` / `ip6tables-save` output, and of the `iptables-restore` buffers kube-proxy writes.
 *
 * The parser is a state machine over lines: `*table` → `:CHAIN POLICY [p:b]` declarations → `-A CHAIN …` rules →
 * `COMMIT`. It accepts what both backends print (iptables-nft and iptables-legacy, with the
 * `# Warning: iptables-legacy tables present` line), kube-proxy's own argument order (`-m comment --comment "…" -m tcp
 * -p tcp -d IP --dport P`), and iptables-save's canonical order (`-d IP/32 -p tcp -m comment --comment … -m tcp
 * --dport P`). Follows the grammar of iptables(8)/iptables-extensions(8) and kube-proxy's test parser
 * (pkg/util/iptables/testing/parse.go).
 *
 * For speed on dumps of tens of MB, the structure is validated eagerly but each chain's rules are tokenised the first
 * time they are read ({@link IptablesChain.rules}); `parseIptablesSave(text, { eager: true })` parses everything up
 * front (tests, `--strict`). Every rule keeps its raw text and 1-based line number, so findings can quote evidence.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import { ChainSlots } from "./chain_slots.ts";
import { DumpParseError } from "./errors.ts";

/** An option that may be negated with `!`, e.g. `! -s 10.0.0.0/8` → `{ negated: true, value: "10.0.0.0/8" }`. */
export interface Negatable<T = string> {
  negated: boolean;
  value: T;
}

/** One `--option value…` of a match module or target; `values` is empty for flags such as `--rcheck`. */
export interface RuleOption {
  name: string;
  negated: boolean;
  values: string[];
}

/** One `-m NAME` match with its options, in order (e.g. `-m statistic --mode random --probability 0.5`). */
export interface MatchModule {
  name: string;
  options: RuleOption[];
}

/** One rule (`-A CHAIN …`). Parameters that are absent are `undefined`, never `""`. */
export interface IptablesRule {
  table: string;
  chain: string;
  /** 1-based line number in the dump. */
  line: number;
  /** The rule's text as printed. */
  raw: string;
  /** `[packets:bytes]` counters when the dump was made with `-c`. */
  counters?: { packets: number; bytes: number };
  source?: Negatable;
  destination?: Negatable;
  protocol?: Negatable;
  inInterface?: Negatable;
  outInterface?: Negatable;
  fragment?: Negatable<true>;
  /** Match modules in order, including implicit ones (`--dport` after `-p tcp` without `-m tcp`). */
  matches: MatchModule[];
  /** `-j TARGET` or `-g CHAIN`; undefined for a rule with no target (it only counts). */
  target?: string;
  /** true when the rule uses `-g` (goto) rather than `-j` (jump). */
  goto?: boolean;
  /** Options of the target, e.g. `--to-destination 10.0.0.1:80`, `--set-xmark 0x4000/0x4000`. */
  targetOptions: RuleOption[];
  /** The `-m comment --comment` text, unescaped. */
  comment?: string;
}

/** A chain: its declaration, counters and rules (tokenised lazily). */
export interface IptablesChain {
  name: string;
  /** Builtin chain policy (`ACCEPT`, `DROP`) or undefined for user chains (`-`). */
  policy?: string;
  counters?: { packets: number; bytes: number };
  /** Line of the `:CHAIN` declaration (or of the first rule, for chains only seen in rules of a partial restore). */
  line: number;
  /** Rules in order. Accessing it parses them on first use; may throw {@link DumpParseError}. */
  readonly rules: IptablesRule[];
  /**
   * The rule at `index` (0-based), tokenised on first use and kept: lets a tracer read only the rules it needs in
   * a chain of 10,000. @throws {DumpParseError} when that rule cannot be tokenised.
   */
  rule(index: number): IptablesRule;
  /** Number of rules, without parsing them. */
  readonly ruleCount: number;
  /** Raw text of each rule line, without parsing. */
  readonly rawRules: readonly string[];
  /** 1-based line numbers of {@link rawRules}. */
  readonly ruleLines: readonly number[];
  /**
   * Set when the source shows only part of the chain (a listing with elided lines): what falls through its end
   * cannot be told. The text says why, e.g. `line 14 "......" is not a rule`.
   */
  incomplete?: string;
}

/** A table (`*nat`, `*filter`, `*mangle`, `*raw`, `*security`). */
export interface IptablesTable {
  name: string;
  line: number;
  /**
   * The table's chains by name, in declaration order. Read-only: a parsed dump never changes. The parser's map makes
   * each chain object on first access (a dump has tens of thousands of chains, a question reads a few dozen).
   */
  chains: ReadonlyMap<string, IptablesChain>;
  /** Chains deleted with `-X` in a partial restore buffer. */
  deletedChains: string[];
  /**
   * How many of `chains` are kube-proxy's per-Service and per-endpoint chains (names starting `KUBE-SVC-`,
   * `KUBE-SVL-` or `KUBE-SEP-`, pkg/proxy/iptables/proxier.go), counted by the parser as it declares them: a
   * 10,000-Service nat table has 60,000 chains, and walking their names afterwards costs ~10 ms. Undefined when the
   * table was not built by {@link parseIptablesSave} (count the names then).
   */
  readonly kubeServiceChains?: number;
}

/** A parsed dump. */
export interface IptablesDump {
  tables: Map<string, IptablesTable>;
  /** `# Generated by iptables-save v1.8.7 (nf_tables)` → "v1.8.7 (nf_tables)". */
  generatedBy?: string;
  /** The backend the header names: "nf_tables", "legacy", or undefined when not printed. */
  backend?: "nf_tables" | "legacy";
  /** true when the dump carried `# Warning: iptables-legacy tables present…` (rules also exist in the other backend). */
  legacyTablesPresent: boolean;
  /** Total number of rule lines. */
  ruleCount: number;
}

/** Options of {@link parseIptablesSave}. */
export interface ParseIptablesSaveOptions {
  /** Tokenise every rule now (and throw on the first bad one) instead of on first access. @default false */
  eager?: boolean;
}

const FORMAT = "iptables-save";
const DECL_RE = /^:(\S+)\s+(\S+)(?:\s+\[(\d+):(\d+)\])?\s*$/;
const CORE_OPTIONS: Record<string, "source" | "destination" | "protocol" | "inInterface" | "outInterface" | "fragment"> = {
  "-s": "source",
  "--source": "source",
  "--src": "source",
  "-d": "destination",
  "--destination": "destination",
  "--dst": "destination",
  "-p": "protocol",
  "--protocol": "protocol",
  "-i": "inInterface",
  "--in-interface": "inInterface",
  "-o": "outInterface",
  "--out-interface": "outInterface",
  "-f": "fragment",
  "--fragment": "fragment",
};
const PROTOCOL_MODULES = new Set(["tcp", "udp", "sctp", "icmp", "icmpv6", "udplite", "dccp"]);

/**
 * Splits one rule line into words the way iptables-save quotes them: double quotes group words, and inside them `\"`
 * and `\\` are escapes (iptables-save writes comments with `"` and escapes `"` and `\`).
 * @param text the rule line.
 * @param line its 1-based line number, for errors.
 * @returns the words, quotes removed.
 * @throws {DumpParseError} when a quote is not closed (a line cut mid-rule).
 */
export function splitRuleWords(text: string, line: number): string[] {
  const words: string[] = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    while (i < n && (text[i] === " " || text[i] === "\t")) i++;
    if (i >= n) break;
    let word = "";
    let quoted = false;
    while (i < n && text[i] !== " " && text[i] !== "\t") {
      const c = text[i]!;
      if (c === '"') {
        quoted = true;
        i++;
        let closed = false;
        while (i < n) {
          const d = text[i]!;
          if (d === "\\" && i + 1 < n) {
            word += text[i + 1];
            i += 2;
            continue;
          }
          if (d === '"') {
            closed = true;
            i++;
            break;
          }
          word += d;
          i++;
        }
        if (!closed) throw new DumpParseError(FORMAT, line, "unterminated quoted string (dump cut mid-rule?)", text);
      } else {
        word += c;
        i++;
      }
    }
    if (word !== "" || quoted) words.push(word);
  }
  return words;
}

/**
 * Tokenises one `-A CHAIN …` line into an {@link IptablesRule}.
 * @param text the line (starting with `-A` or `[p:b] -A`).
 * @param line 1-based line number.
 * @param table the table the line belongs to.
 * @returns the rule.
 * @throws {DumpParseError} on syntax iptables-save never prints (`!` before `-j`, an option without its value).
 */
export function parseRuleLine(text: string, line: number, table: string): IptablesRule {
  let words = splitRuleWords(text, line);
  let counters: IptablesRule["counters"];
  const first = words[0];
  if (first !== undefined && first.startsWith("[")) {
    counters = parseCounters(first, line, text);
    words = words.slice(1);
  }
  if (words[0] !== "-A" && words[0] !== "--append") {
    throw new DumpParseError(FORMAT, line, `expected "-A CHAIN"`, text);
  }
  const chain = words[1];
  if (chain === undefined) throw new DumpParseError(FORMAT, line, `"-A" without a chain name`, text);
  const rule: IptablesRule = { table, chain, line, raw: text, matches: [], targetOptions: [] };
  if (counters) rule.counters = counters;
  let current: MatchModule | undefined; // module receiving --options
  let implicitProto: MatchModule | undefined;
  let inTarget = false;
  let negate = false;
  for (let i = 2; i < words.length; i++) {
    const w = words[i]!;
    if (w === "!") {
      if (negate) throw new DumpParseError(FORMAT, line, `double "!"`, text);
      negate = true;
      continue;
    }
    const core = CORE_OPTIONS[w];
    if (core !== undefined && !inTarget) {
      if (core === "fragment") {
        rule.fragment = { negated: negate, value: true };
      } else {
        const v = words[++i];
        if (v === undefined) throw new DumpParseError(FORMAT, line, `"${w}" needs a value`, text);
        rule[core] = { negated: negate, value: v };
        if (core === "protocol" && PROTOCOL_MODULES.has(v.toLowerCase())) {
          implicitProto = { name: v.toLowerCase(), options: [] };
        }
      }
      negate = false;
      continue;
    }
    if (w === "-m" || w === "--match") {
      if (negate) throw new DumpParseError(FORMAT, line, `cannot negate "${w}"`, text);
      const name = words[++i];
      if (name === undefined) throw new DumpParseError(FORMAT, line, `"-m" needs a module name`, text);
      current = { name, options: [] };
      rule.matches.push(current);
      if (implicitProto && implicitProto.name === name) implicitProto = current;
      inTarget = false;
      continue;
    }
    if (w === "-j" || w === "--jump" || w === "-g" || w === "--goto") {
      if (negate) throw new DumpParseError(FORMAT, line, `cannot negate "${w}"`, text);
      const target = words[++i];
      if (target === undefined) throw new DumpParseError(FORMAT, line, `"${w}" needs a target`, text);
      rule.target = target;
      if (w === "-g" || w === "--goto") rule.goto = true;
      inTarget = true;
      continue;
    }
    if (w.startsWith("--")) {
      const values: string[] = [];
      while (i + 1 < words.length && !isOptionWord(words[i + 1]!)) values.push(words[++i]!);
      const opt: RuleOption = { name: w.slice(2), negated: negate, values };
      negate = false;
      if (inTarget) {
        rule.targetOptions.push(opt);
      } else if (current) {
        // kube-proxy writes "-m tcp -p tcp -d IP --dport P": an option after core options still belongs to the
        // last module, unless it is a port option of the implicit protocol module.
        if (isProtoOption(opt.name) && implicitProto && current.name !== implicitProto.name && !rule.matches.includes(implicitProto)) {
          rule.matches.push(implicitProto);
          implicitProto.options.push(opt);
        } else {
          current.options.push(opt);
        }
      } else if (implicitProto) {
        if (!rule.matches.includes(implicitProto)) rule.matches.push(implicitProto);
        implicitProto.options.push(opt);
        current = implicitProto;
      } else {
        throw new DumpParseError(FORMAT, line, `option "${w}" outside of any "-m" match or target`, text);
      }
      continue;
    }
    throw new DumpParseError(FORMAT, line, `unexpected word "${w}"`, text);
  }
  if (negate) throw new DumpParseError(FORMAT, line, `dangling "!" at end of rule`, text);
  const comment = findOption(rule, "comment", "comment");
  if (comment?.values[0] !== undefined) rule.comment = comment.values[0];
  return rule;
}

function isOptionWord(w: string): boolean {
  return w === "!" || (w.startsWith("-") && w.length > 1 && !/^-\d/.test(w));
}

function isProtoOption(name: string): boolean {
  return name === "dport" || name === "sport" || name === "destination-port" || name === "source-port" ||
    name === "tcp-flags" || name === "syn" || name === "icmp-type" || name === "chunk-types";
}

function parseCounters(word: string, line: number, text: string): { packets: number; bytes: number } {
  const m = /^\[(\d+):(\d+)\]$/.exec(word);
  if (!m) throw new DumpParseError(FORMAT, line, `malformed counters "${word}" (want [packets:bytes])`, text);
  return { packets: Number(m[1]), bytes: Number(m[2]) };
}

/**
 * Finds an option of a match module in a rule.
 * @param rule the rule.
 * @param module module name (`comment`, `statistic`, `tcp`, `set`, `mark`, `recent`, `addrtype`…).
 * @param option option name without dashes (`comment`, `probability`, `dport`, `match-set`…).
 * @returns the first such option, or undefined.
 */
export function findOption(rule: IptablesRule, module: string, option: string): RuleOption | undefined {
  for (const m of rule.matches) {
    if (m.name !== module) continue;
    for (const o of m.options) if (o.name === option) return o;
  }
  return undefined;
}

/**
 * Finds an option of the rule's target (e.g. `to-destination` of DNAT).
 * @returns the option or undefined.
 */
export function findTargetOption(rule: IptablesRule, option: string): RuleOption | undefined {
  return rule.targetOptions.find((o) => o.name === option);
}

const EMPTY: number[] = [];

/**
 * Whether chain `name` is one of kube-proxy's per-Service or per-endpoint chains: it starts with KUBE-SVC-, KUBE-SVL- or
 * KUBE-SEP- (pkg/proxy/iptables/proxier.go). Tested by character: called for every declared chain.
 */
export function isKubeServiceChain(name: string): boolean {
  if (name.charCodeAt(5) !== 83 /* S */ || name.charCodeAt(8) !== 45 /* - */ || !name.startsWith("KUBE-")) return false;
  const a = name.charCodeAt(6);
  const b = name.charCodeAt(7);
  return (a === 86 /* V */ && (b === 67 /* C */ || b === 76 /* L */)) || (a === 69 /* E */ && b === 80 /* P */);
}
/** Counters of a `- [0:0]` declaration, shared (a dump declares tens of thousands of chains this way). */
const ZERO_COUNTERS: { packets: number; bytes: number } = Object.freeze({ packets: 0, bytes: 0 });

class LazyChain implements IptablesChain {
  name: string;
  policy?: string;
  counters?: { packets: number; bytes: number };
  line: number;
  /**
   * Where the rules are, as runs of consecutive lines. iptables-save prints each chain's rules together, so a chain
   * is one run, kept in three number fields (no per-chain array: a dump has tens of thousands of chains); a kube-proxy
   * restore buffer interleaves chains, and later runs go to `moreRuns` as `[offset, line, count]` triples.
   */
  private runOffset = 0;
  private runLine = 0;
  private runCount = 0;
  private moreRuns?: number[];
  private count = 0;
  /** Per-rule `[start, end)` offsets and line numbers, computed from the runs on first use. */
  private bounds?: number[];
  private lines?: number[];
  private parsed?: (IptablesRule | undefined)[];
  private raws?: string[];
  private readonly table: string;
  private readonly text: string;

  constructor(text: string, table: string, name: string, line: number) {
    this.text = text;
    this.table = table;
    this.name = name;
    this.line = line;
  }

  /** Appends `count` rule lines starting at `offset` (line number `line`). */
  addRun(offset: number, line: number, count: number): void {
    if (this.count === 0) {
      this.runOffset = offset;
      this.runLine = line;
      this.runCount = count;
    } else {
      (this.moreRuns ??= []).push(offset, line, count);
    }
    this.count += count;
    this.bounds = undefined;
    this.lines = undefined;
    this.raws = undefined;
  }

  private locate(): void {
    if (this.bounds) return;
    const bounds: number[] = new Array(this.count * 2);
    const lines: number[] = new Array(this.count);
    const text = this.text;
    const runs = this.count === 0 ? EMPTY : [this.runOffset, this.runLine, this.runCount, ...(this.moreRuns ?? EMPTY)];
    let k = 0;
    for (let r = 0; r < runs.length; r += 3) {
      let pos = runs[r]!;
      const first = runs[r + 1]!;
      const n = runs[r + 2]!;
      for (let j = 0; j < n; j++) {
        let end = text.indexOf("\n", pos);
        if (end === -1) end = text.length;
        const lineEnd = end > pos && text.charCodeAt(end - 1) === 13 /* \r */ ? end - 1 : end;
        bounds[2 * k] = pos;
        bounds[2 * k + 1] = lineEnd;
        lines[k] = first + j;
        k++;
        pos = end + 1;
      }
    }
    this.bounds = bounds;
    this.lines = lines;
  }

  get ruleCount(): number {
    return this.count;
  }

  get ruleLines(): readonly number[] {
    if (this.count === 0) return EMPTY;
    this.locate();
    return this.lines!;
  }

  get rawRules(): readonly string[] {
    if (!this.raws) {
      const out: string[] = new Array(this.count);
      for (let i = 0; i < this.count; i++) out[i] = this.raw(i);
      this.raws = out;
    }
    return this.raws;
  }

  private raw(i: number): string {
    if (this.raws) return this.raws[i]!;
    this.locate();
    return this.text.slice(this.bounds![2 * i], this.bounds![2 * i + 1]);
  }

  rule(i: number): IptablesRule {
    if (i < 0 || i >= this.count) throw new RangeError(`chain ${this.name} has no rule ${i}`);
    this.parsed ??= [];
    let r = this.parsed[i];
    if (!r) {
      this.locate();
      r = parseRuleLine(this.raw(i), this.lines![i]!, this.table);
      this.parsed[i] = r;
    }
    return r;
  }

  get rules(): IptablesRule[] {
    const out: IptablesRule[] = new Array(this.count);
    for (let i = 0; i < this.count; i++) out[i] = this.rule(i);
    return out;
  }
}

/**
 * The chains of one table as the parser reads them: per declaration (a slot) its name, line, policy and counters and
 * its first run of rules, in parallel arrays; the {@link LazyChain} of a slot is made on first access. Slots of a
 * redeclared chain are replaced (a restore buffer's `:CHAIN` flushes it), slots of `-X` are dropped from the names.
 */
class ChainIndex implements ReadonlyMap<string, IptablesChain> {
  /** Name → slot (a Map in behaviour; chain_slots.ts says why not a Map). */
  private readonly slots: ChainSlots;
  /** Set once a name is declared a second time (the parser then stops trusting declaration order). */
  redeclared = false;
  /** Declared, not deleted, chains named KUBE-SVC-, KUBE-SVL- or KUBE-SEP- (see IptablesTable.kubeServiceChains). */
  kubeServiceChains = 0;
  /** Per slot. */
  readonly names: string[] = [];
  /** Policy and counters of the slots not declared `- [0:0]` (builtin chains, `-N`, counters from `-c`). */
  private readonly unusual = new Map<number, { policy: string | undefined; counters: { packets: number; bytes: number } | undefined }>();
  /**
   * Per slot, four 32-bit numbers: the declaration's line, and the first run of rules (text offset, line, count; count
   * 0 for none). One typed array grown by doubling: a dump declares tens of thousands of chains, and four JavaScript
   * arrays of them cost the parser more than the scan itself (allocation and garbage collection).
   */
  private meta = new Int32Array(4 * 1024);
  /** The chain objects made so far, by slot. */
  private readonly objects = new Map<number, LazyChain>();
  private readonly text: string;
  private readonly table: string;

  constructor(text: string, table: string) {
    this.text = text;
    this.table = table;
    this.slots = new ChainSlots(this.names);
  }

  /**
   * Declares (or redeclares, emptied) chain `name`; returns its slot. `kubeService`: whether the name is one of
   * kube-proxy's Service chains, when the caller has already tested it in the text (testing the characters of a slice
   * of a large dump costs more than the declaration).
   */
  declare(
    name: string,
    line: number,
    policy: string | undefined,
    counters: { packets: number; bytes: number } | undefined,
    kubeService?: boolean,
  ): number {
    const slot = this.names.length;
    this.names.push(name);
    if (4 * slot + 4 > this.meta.length) {
      const grown = new Int32Array(this.meta.length * 2);
      grown.set(this.meta);
      this.meta = grown;
    }
    const m = 4 * slot;
    this.meta[m] = line;
    this.meta[m + 1] = 0;
    this.meta[m + 2] = 0;
    this.meta[m + 3] = 0;
    if (policy !== undefined || counters !== ZERO_COUNTERS) this.unusual.set(slot, { policy, counters });
    if (!this.slots.add(name, slot)) this.redeclared = true;
    else if (kubeService ?? isKubeServiceChain(name)) this.kubeServiceChains++;
    return slot;
  }

  /** The slot of chain `name`, or undefined. */
  slotOf(name: string): number | undefined {
    return this.slots.get(name);
  }

  /** Appends `count` rule lines starting at `offset` (line number `line`) to the chain of `slot`. */
  addRun(slot: number, offset: number, line: number, count: number): void {
    const made = this.objects.get(slot);
    if (made) made.addRun(offset, line, count);
    else if (this.meta[4 * slot + 3] === 0) {
      const m = 4 * slot;
      this.meta[m + 1] = offset;
      this.meta[m + 2] = line;
      this.meta[m + 3] = count;
    } else this.chainAt(slot).addRun(offset, line, count);
  }

  /** Drops chain `name` (`-X`). */
  remove(name: string): void {
    if (this.slots.delete(name) && isKubeServiceChain(name)) this.kubeServiceChains--;
  }

  private chainAt(slot: number): LazyChain {
    let c = this.objects.get(slot);
    if (!c) {
      const m = 4 * slot;
      c = new LazyChain(this.text, this.table, this.names[slot]!, this.meta[m]!);
      const u = this.unusual.get(slot);
      if (!u) c.counters = ZERO_COUNTERS;
      else {
        if (u.policy !== undefined) c.policy = u.policy;
        if (u.counters !== undefined) c.counters = u.counters;
      }
      if (this.meta[m + 3]! > 0) c.addRun(this.meta[m + 1]!, this.meta[m + 2]!, this.meta[m + 3]!);
      this.objects.set(slot, c);
    }
    return c;
  }

  get size(): number {
    return this.slots.size;
  }

  get(name: string): IptablesChain | undefined {
    const slot = this.slots.get(name);
    return slot === undefined ? undefined : this.chainAt(slot);
  }

  has(name: string): boolean {
    return this.slots.has(name);
  }

  *keys(): MapIterator<string> {
    yield* this.slots.keys();
  }

  *values(): MapIterator<IptablesChain> {
    for (const slot of this.slots.values()) yield this.chainAt(slot);
  }

  *entries(): MapIterator<[string, IptablesChain]> {
    for (const [name, slot] of this.slots.entries()) yield [name, this.chainAt(slot)];
  }

  [Symbol.iterator](): MapIterator<[string, IptablesChain]> {
    return this.entries();
  }

  forEach(fn: (value: IptablesChain, key: string, map: ReadonlyMap<string, IptablesChain>) => void, thisArg?: unknown): void {
    for (const [name, slot] of this.slots.entries()) fn.call(thisArg, this.chainAt(slot), name, this);
  }
}

/** Where {@link parseIptablesSave} is in the text, and what its hot loops share. */
class ScanState {
  readonly text: string;
  /** Offset of the next line, and the number of the last line read (1-based). */
  pos = 0;
  lineNo = 0;
  /** The last non-blank line read, quoted when the dump ends without COMMIT. */
  lastStart = 0;
  lastEnd = 0;
  lastLineNo = 0;
  ruleCount = 0;
  /**
   * iptables-save prints the rule blocks in the order it declared the chains: the chain of the next run is usually
   * the next declared one, found by comparing names in place (no slice, no Map lookup). Slots declared in the open
   * table in order, the next expected one, and whether the order can still be trusted (no -X, -N, -F or
   * re-declaration seen, table not re-opened).
   */
  declared: number[] = [];
  cursor = 0;
  inOrder = false;

  constructor(text: string) {
    this.text = text;
  }
}

/**
 * Reads the block of `-A CHAIN …` lines at `st.pos` (the first is one), as runs of consecutive lines of one chain
 * added to `index`; stops before the first line that is not `-A `.
 * @throws {DumpParseError} for a rule of an undeclared chain or without a chain name.
 */
function readRules(st: ScanState, index: ChainIndex, tableName: string): void {
  const text = st.text;
  const len = text.length;
  let pos = st.pos;
  let lineNo = st.lineNo;
  let rules = 0;
  let run = -1;
  let runStart = 0;
  let runLine = 0;
  let runCount = 0;
  let runNameLength = 0;
  let runName = "";
  let lineStart = pos;
  let lineEnd = pos;
  while (pos < len && text.charCodeAt(pos) === 45 /* - */ && text.charCodeAt(pos + 1) === 65 /* A */ && text.charCodeAt(pos + 2) === 32) {
    let end = text.indexOf("\n", pos);
    if (end === -1) end = len;
    lineStart = pos;
    lineEnd = end > pos && text.charCodeAt(end - 1) === 13 /* \r */ ? end - 1 : end;
    pos = end + 1;
    lineNo++;
    rules++;
    // Same chain as the previous line? Its name compared in place by the builtin (a loop over the characters here
    // runs unoptimised for most of a dump's lines: the parser runs once per process)
    if (run !== -1 && text.charCodeAt(lineStart + 3 + runNameLength) === 32 /* space */ && text.startsWith(runName, lineStart + 3)) {
      runCount++;
      continue;
    }
    if (run !== -1) index.addRun(run, runStart, runLine, runCount);
    let slot = -1;
    if (st.inOrder) {
      const names = index.names;
      const declared = st.declared;
      for (let k = st.cursor; k < declared.length && k < st.cursor + 8; k++) {
        const name = names[declared[k]!]!;
        if (text.charCodeAt(lineStart + 3 + name.length) === 32 && text.startsWith(name, lineStart + 3)) {
          slot = declared[k]!;
          st.cursor = k + 1;
          break;
        }
      }
    }
    if (slot === -1) {
      let sp = text.indexOf(" ", lineStart + 3);
      if (sp === -1 || sp > lineEnd) sp = lineEnd;
      const chainName = text.slice(lineStart + 3, sp);
      if (chainName === "") throw new DumpParseError(FORMAT, lineNo, `"-A" without a chain name`, text.slice(lineStart, lineEnd));
      const found = index.slotOf(chainName);
      if (found === undefined) {
        throw new DumpParseError(FORMAT, lineNo, `rule for chain "${chainName}" that was not declared in table "${tableName}"`, text.slice(lineStart, lineEnd));
      }
      slot = found;
    }
    run = slot;
    runName = index.names[slot]!;
    runNameLength = runName.length;
    runStart = lineStart;
    runLine = lineNo;
    runCount = 1;
  }
  if (run !== -1) index.addRun(run, runStart, runLine, runCount);
  st.pos = pos;
  st.lineNo = lineNo;
  st.ruleCount += rules;
  st.lastStart = lineStart;
  st.lastEnd = lineEnd;
  st.lastLineNo = lineNo;
}

/**
 * Reads the block of `:NAME - [0:0]` declarations at `st.pos` (how iptables-save declares nearly every chain) without
 * the regular expression; stops before the first line of another shape.
 * @returns whether any line was read (false: the line at `st.pos` needs the general path).
 */
function readDeclarations(st: ScanState, index: ChainIndex): boolean {
  const text = st.text;
  const len = text.length;
  let pos = st.pos;
  let lineNo = st.lineNo;
  let lineStart = pos;
  let lineEnd = pos;
  let read = false;
  while (pos < len && text.charCodeAt(pos) === 58 /* : */) {
    let end = text.indexOf("\n", pos);
    if (end === -1) end = len;
    const e = end > pos && text.charCodeAt(end - 1) === 13 /* \r */ ? end - 1 : end;
    const sp = text.indexOf(" ", pos + 1);
    if (!(sp > pos + 1 && sp + 8 === e && text.startsWith(" - [0:0]", sp))) break;
    lineStart = pos;
    lineEnd = e;
    lineNo++;
    // KUBE-SVC-, KUBE-SVL-, KUBE-SEP- (see isKubeServiceChain), tested in the text
    const a = text.charCodeAt(pos + 7);
    const b = text.charCodeAt(pos + 8);
    const kubeService = text.charCodeAt(pos + 6) === 83 /* S */ && text.charCodeAt(pos + 9) === 45 /* - */ &&
      ((a === 86 /* V */ && (b === 67 /* C */ || b === 76 /* L */)) || (a === 69 /* E */ && b === 80 /* P */)) &&
      text.startsWith("KUBE-", pos + 1);
    st.declared.push(index.declare(text.slice(pos + 1, sp), lineNo, undefined, ZERO_COUNTERS, kubeService));
    pos = end + 1;
    read = true;
  }
  if (!read) return false;
  if (index.redeclared) st.inOrder = false;
  st.pos = pos;
  st.lineNo = lineNo;
  st.lastStart = lineStart;
  st.lastEnd = lineEnd;
  st.lastLineNo = lineNo;
  return true;
}

/**
 * Parses `iptables-save` output (or a kube-proxy `iptables-restore` buffer).
 *
 * @param text the whole dump, `\n` or `\r\n` line ends.
 * @param options {@link ParseIptablesSaveOptions}.
 * @returns the dump: tables → chains → rules, with raw text and line numbers.
 * @throws {DumpParseError} when the text is empty, binary, not iptables-save (e.g. an `iptables -L` listing), when a
 *   rule or declaration appears outside a table, when a table is not closed by `COMMIT` (a truncated dump), or (with
 *   `eager`) when a rule cannot be tokenised.
 * @example
 * ```ts
 * import { parseIptablesSave } from "./mod.ts"; // the checkout's mod.ts (README "Library"); the npm package ships the CLI only
 * const dump = parseIptablesSave("*nat\n:KUBE-SERVICES - [0:0]\n-A KUBE-SERVICES -j RETURN\nCOMMIT\n");
 * dump.tables.get("nat")!.chains.get("KUBE-SERVICES")!.rules[0]!.target; // "RETURN"
 * ```
 */
export function parseIptablesSave(text: string, options: ParseIptablesSaveOptions = {}): IptablesDump {
  if (text.trim() === "") throw new DumpParseError(FORMAT, 0, "empty input (was iptables-save run, and as root?)", "");
  if (text.indexOf("\u0000") !== -1) {
    throw new DumpParseError(FORMAT, 0, "binary data, not iptables-save text", text.slice(0, 40).replace(/[^\x20-\x7e]/g, "?"));
  }
  const dump: IptablesDump = { tables: new Map(), legacyTablesPresent: false, ruleCount: 0 };
  let table: IptablesTable | undefined;
  // The chains of the open table (its `chains`).
  let index: ChainIndex | undefined;
  const st = new ScanState(text);
  const len = text.length;
  let sawContent = false;
  while (st.pos < len) {
    const c = text.charCodeAt(st.pos);
    // The two hot paths, each a loop of its own so that V8 optimises it on its own feedback: a block of rules (a
    // dump is mostly rules) and a block of `:NAME - [0:0]` declarations.
    if (c === 45 /* - */ && index && text.charCodeAt(st.pos + 1) === 65 /* A */ && text.charCodeAt(st.pos + 2) === 32) {
      readRules(st, index, table!.name);
      sawContent = true;
      continue;
    }
    if (c === 58 /* : */ && index && readDeclarations(st, index)) {
      sawContent = true;
      continue;
    }
    let end = text.indexOf("\n", st.pos);
    if (end === -1) end = len;
    const lineStart = st.pos;
    let lineEnd = end;
    st.pos = end + 1;
    const lineNo = ++st.lineNo;
    if (lineEnd > lineStart && text.charCodeAt(lineEnd - 1) === 13 /* \r */) lineEnd--;
    const line = text.slice(lineStart, lineEnd);
    if (line.trim() !== "") {
      st.lastStart = lineStart;
      st.lastEnd = lineEnd;
      st.lastLineNo = lineNo;
    }
    if (c === 45 /* - */ || c === 91 /* [ */) {
      // [p:b] -A CHAIN … / -X CHAIN / -F CHAIN / -N CHAIN
      if (!table || !index) throw new DumpParseError(FORMAT, lineNo, `rule outside of a table (missing "*nat"?)`, line);
      const rest = c === 91 ? line.slice(line.indexOf("]") + 1).trimStart() : line;
      const sp = rest.indexOf(" ");
      const verb = sp === -1 ? rest : rest.slice(0, sp);
      const afterVerb = sp === -1 ? "" : rest.slice(sp + 1);
      const sp2 = afterVerb.indexOf(" ");
      const chainName = sp2 === -1 ? afterVerb : afterVerb.slice(0, sp2);
      if (chainName === "") throw new DumpParseError(FORMAT, lineNo, `"${verb}" without a chain name`, line);
      if (verb === "-A" || verb === "--append") {
        const slot = index.slotOf(chainName);
        if (slot === undefined) {
          throw new DumpParseError(FORMAT, lineNo, `rule for chain "${chainName}" that was not declared in table "${table.name}"`, line);
        }
        index.addRun(slot, lineStart, lineNo, 1);
        st.ruleCount++;
        sawContent = true;
      } else if (verb === "-X" || verb === "--delete-chain") {
        st.inOrder = false;
        table.deletedChains.push(chainName);
        index.remove(chainName);
      } else if (verb === "-F" || verb === "--flush" || verb === "-N" || verb === "--new-chain") {
        st.inOrder = false;
        if (!index.has(chainName)) index.declare(chainName, lineNo, undefined, undefined);
      } else {
        throw new DumpParseError(FORMAT, lineNo, `unknown command "${verb}" (want -A, -X, -F or -N)`, line);
      }
      continue;
    }
    if (c === 58 /* : */) {
      if (!index) throw new DumpParseError(FORMAT, lineNo, `chain declaration outside of a table (missing "*nat"?)`, line);
      const m = DECL_RE.exec(line);
      if (!m) throw new DumpParseError(FORMAT, lineNo, `malformed chain declaration (want ":CHAIN POLICY [p:b]")`, line);
      const counters = m[3] !== undefined ? { packets: Number(m[3]), bytes: Number(m[4]) } : undefined;
      st.declared.push(index.declare(m[1]!, lineNo, m[2] !== "-" ? m[2]! : undefined, counters));
      if (index.redeclared) st.inOrder = false;
      sawContent = true;
      continue;
    }
    if (c === 42 /* * */) {
      if (table) throw new DumpParseError(FORMAT, lineNo, `table "${table.name}" (line ${table.line}) not closed by COMMIT before this one`, line);
      const name = line.slice(1).trim();
      if (!/^[a-z]+$/.test(name)) throw new DumpParseError(FORMAT, lineNo, `malformed table header`, line);
      st.inOrder = !dump.tables.has(name);
      st.declared = [];
      st.cursor = 0;
      table = dump.tables.get(name);
      if (table) index = table.chains as ChainIndex;
      else {
        const chains = new ChainIndex(text, name);
        index = chains;
        table = {
          name,
          line: lineNo,
          chains,
          deletedChains: [],
          get kubeServiceChains() {
            return chains.kubeServiceChains;
          },
        };
      }
      dump.tables.set(name, table);
      sawContent = true;
      continue;
    }
    const trimmed = line.trim();
    if (trimmed === "COMMIT") {
      if (!table) throw new DumpParseError(FORMAT, lineNo, "COMMIT outside of a table", line);
      table = undefined;
      index = undefined;
      continue;
    }
    if (trimmed === "") continue;
    if (trimmed.startsWith("#")) {
      const g = /^#\s*Generated by (?:iptables|ip6tables)-save (.+?) on /.exec(trimmed);
      if (g) {
        dump.generatedBy = g[1];
        if (/nf_tables/.test(g[1]!)) dump.backend = "nf_tables";
        else if (/legacy/.test(g[1]!)) dump.backend = "legacy";
      }
      if (/iptables-legacy tables present/.test(trimmed)) dump.legacyTablesPresent = true;
      continue;
    }
    if (/^Chain \S+ \(/.test(trimmed)) {
      throw new DumpParseError(FORMAT, lineNo, "this is an `iptables -L` listing, not iptables-save output", line);
    }
    throw new DumpParseError(FORMAT, lineNo, "unexpected line (want *table, :CHAIN, -A rule, COMMIT or # comment)", line);
  }
  if (table) {
    throw new DumpParseError(
      FORMAT,
      st.lastLineNo,
      `the dump ends inside table "${table.name}" (opened at line ${table.line}) without COMMIT: it was truncated, this last line may be cut`,
      text.slice(st.lastStart, st.lastEnd),
    );
  }
  if (!sawContent) throw new DumpParseError(FORMAT, st.lineNo, "no tables found (only comments)", "");
  dump.ruleCount = st.ruleCount;
  if (options.eager) {
    for (const t of dump.tables.values()) for (const ch of t.chains.values()) void ch.rules;
  }
  return dump;
}
