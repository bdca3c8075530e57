/**
 * Errors raised by the datapath parsers. Runtime-neutral: no I/O.
 * @module
 */

/**
 * A dump that cannot be read: malformed, truncated, binary, or of another format than expected.
 * The message names the format, the 1-based line, what was expected, and quotes the line:
 * `iptables-save line 42: rule outside of a table (missing "*nat"?): "-A KUBE-SERVICES -j X"`.
 */
export class DumpParseError extends Error {
  override name = "DumpParseError";
  /** Format being parsed, e.g. "iptables-save", "ipvsadm", "ipset", "iptables-list", "nft-json". */
  readonly format: string;
  /** 1-based line number of the offending line (0 when the whole input is at fault, e.g. empty). */
  readonly line: number;
  /** The offending line's text (truncated to 200 characters). */
  readonly text: string;

  /**
   * @param format the dump format.
   * @param line 1-based line number.
   * @param what what is wrong or was expected.
   * @param text the offending line.
   */
  constructor(format: string, line: number, what: string, text: string) {
    const shown = text.length > 200 ? text.slice(0, 200) + "…" : text;
    super(`${format} line ${line}: ${what}: "${shown}"`);
    this.format = format;
    this.line = line;
    this.text = shown;
  }
}
