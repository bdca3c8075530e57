/**
 * A string from a bundle, a cluster or the user as one word of a shell command the plugin suggests (`kubectl get
 * volumeattributesclass NAME`, `kubectl --context NAME …`): quoted by the `shell-quote` library when it holds
 * anything a POSIX shell would read as syntax (`;`, `|`, `$(…)`, quotes, spaces), unchanged when it is a plain word.
 * A suggested command is text the user may paste: data in it must stay data.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import { quote } from "shell-quote";

/**
 * One shell word.
 * @param s any string, e.g. `gold; curl x | sh #`.
 * @returns `s` itself when it is a plain word (`gold`, `kube-system`), else `s` quoted (`'gold; curl x | sh #'`).
 * @example shellWord("a b") // "'a b'"
 */
export function shellWord(s: string): string {
  return quote([s]);
}
