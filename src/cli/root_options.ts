/**
 * Flags written before a subcommand (`kubectl netpath --context prod cleanup`): with positional options (capture and
 * cleanup take their own flags) the root command parses them, so the subcommand would not see them and would run
 * against the current context. The connection flags the subcommand also has are carried over (its own, written after
 * it, win); any other root flag written before it is a usage error rather than silently dropped.
 * @module
 */
import type { CommandUnknownOpts } from "@commander-js/extra-typings";
import { UsageError } from "./target.ts";

/** The root flags a subcommand takes over when they are written before it (camelCase option keys). */
const SHARED = ["namespace", "context", "kubeconfig", "requestTimeout"] as const;

/**
 * `opts` of subcommand `cmd`, with the shared flags the user wrote before the subcommand name.
 * @param root the root command.
 * @param cmd the subcommand that runs.
 * @param opts its parsed options (not changed).
 * @returns the options to run with.
 * @throws {UsageError} for another root flag written before the subcommand.
 */
export function withRootOptions<T extends Record<string, unknown>>(root: CommandUnknownOpts, cmd: CommandUnknownOpts, opts: T): T {
  const out: Record<string, unknown> = { ...opts };
  const rootOpts = root.opts() as Record<string, unknown>;
  for (const key of Object.keys(rootOpts)) {
    if (root.getOptionValueSource(key) !== "cli") continue;
    if (!(SHARED as readonly string[]).includes(key)) {
      const flag = root.options.find((o) => o.attributeName() === key)?.long ?? key;
      throw new UsageError(`${flag} before \`${cmd.name()}\` belongs to the main command: write it after \`${cmd.name()}\`${cmd.options.some((o) => o.attributeName() === key) ? "" : ` (${cmd.name()} has no such flag)`}`);
    }
    if (cmd.getOptionValueSource(key) !== "cli") out[key] = rootOpts[key];
  }
  return out as T;
}
