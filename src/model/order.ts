/**
 * Sort orders for report lists, without `localeCompare`: its first call loads ICU collation data (about 6 ms on Node
 * 20), paid on every run for lists whose order only has to be stable and readable.
 *
 * Runtime-neutral: no I/O.
 * @module
 */

/**
 * Code-unit order (what `<` does on strings): stable, locale-independent; for ASCII names such as file paths, zones
 * and table names it is alphabetical with upper case before lower case.
 * @returns negative, zero or positive, as `Array.prototype.sort` wants.
 */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Natural order: runs of decimal digits compare as numbers, the rest by code unit, so `10.244.0.9:80` sorts before
 * `10.244.0.10:80` and `pod-2` before `pod-10`. Equal numbers with different zero padding (`07`, `7`) fall back to
 * code-unit order, so the order is total.
 * @returns negative, zero or positive, as `Array.prototype.sort` wants.
 */
export function compareNatural(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(j);
    if (isDigit(ca) && isDigit(cb)) {
      let ei = i;
      while (ei < a.length && isDigit(a.charCodeAt(ei))) ei++;
      let ej = j;
      while (ej < b.length && isDigit(b.charCodeAt(ej))) ej++;
      // Compare the runs as numbers without converting them: strip leading zeros, then length, then digits.
      let si = i;
      while (si < ei - 1 && a.charCodeAt(si) === 48) si++;
      let sj = j;
      while (sj < ej - 1 && b.charCodeAt(sj) === 48) sj++;
      const la = ei - si;
      const lb = ej - sj;
      if (la !== lb) return la - lb;
      for (let k = 0; k < la; k++) {
        const d = a.charCodeAt(si + k) - b.charCodeAt(sj + k);
        if (d !== 0) return d;
      }
      i = ei;
      j = ej;
      continue;
    }
    if (ca !== cb) return ca - cb;
    i++;
    j++;
  }
  if (a.length - i !== b.length - j) return (a.length - i) - (b.length - j);
  return compareText(a, b);
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/**
 * Rank of each ASCII character in ICU root collation (CLDR, punctuation non-ignorable: `_ - : . /` before digits
 * before letters), for the characters Kubernetes object and port names and their `ns/name:port` joins are made of;
 * 0 for any other character.
 */
const COLLATION_RANK = (() => {
  const rank = new Uint8Array(128);
  [..."_-:./0123456789abcdefghijklmnopqrstuvwxyz"].forEach((c, i) => rank[c.charCodeAt(0)] = i + 1);
  return rank;
})();

/**
 * The order `a.localeCompare(b)` gives (ICU root collation), without loading ICU's collation data (~9 ms on the first
 * call of a run) or calling into it 100,000 times for a 10,000-Service sort. For strings of lowercase letters, digits
 * and `_-:./` — Kubernetes names and `ns/name:port` keys — every character has its own primary weight, so the
 * collation is the lexicographic order of the ranks above (a prefix first); a string with any other character (upper
 * case, other punctuation, non-ASCII) is compared by `localeCompare` itself. tests/model_order.test.ts checks the ranks
 * against the runtime's own collation.
 * @returns negative, zero or positive, with the sign of `a.localeCompare(b)`.
 */
export function compareCollated(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(i);
    if (ca === cb) {
      if (ca < 128 && COLLATION_RANK[ca] !== 0) continue;
      return a.localeCompare(b);
    }
    const ra = ca < 128 ? COLLATION_RANK[ca]! : 0;
    const rb = cb < 128 ? COLLATION_RANK[cb]! : 0;
    if (ra === 0 || rb === 0 || !collatable(a, i + 1) || !collatable(b, i + 1)) return a.localeCompare(b);
    return ra - rb;
  }
  if (!collatable(a, n) || !collatable(b, n)) return a.localeCompare(b);
  return a.length - b.length;
}

/** True when every character of `s` from `from` on has a rank. */
function collatable(s: string, from: number): boolean {
  for (let i = from; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128 || COLLATION_RANK[c] === 0) return false;
  }
  return true;
}

/**
 * Sorts `items` in place by `keyOf(item)` in the order `localeCompare` gives, as {@link compareCollated} does, for
 * lists of thousands: each key is turned into its string of ranks once and the sort compares those with `<` (10,000
 * keys: ~3 ms against ~20 ms of comparator calls). When any key has a character without a rank, the list is sorted
 * with `localeCompare` itself. The sort is stable, as `Array.prototype.sort` is.
 * @param items the list, sorted in place.
 * @param keyOf the key of an item (called once per item).
 * @returns `items`.
 */
export function sortCollated<T>(items: T[], keyOf: (item: T) => string): T[] {
  const ranked: { item: T; rank: string }[] = [];
  // Each rank string is made in one piece from a reused buffer (appending a character at a time would make a
  // string per character, 300,000 for 10,000 keys, that the comparisons then flatten).
  let codes = new Uint16Array(64);
  for (const item of items) {
    const key = keyOf(item);
    // (a key too long for one fromCharCode call: the same order from localeCompare itself)
    if (key.length > 8192) return items.sort((a, b) => keyOf(a).localeCompare(keyOf(b)));
    if (key.length > codes.length) codes = new Uint16Array(key.length * 2);
    for (let i = 0; i < key.length; i++) {
      const c = key.charCodeAt(i);
      const r = c < 128 ? COLLATION_RANK[c]! : 0;
      if (r === 0) return items.sort((a, b) => keyOf(a).localeCompare(keyOf(b)));
      codes[i] = r;
    }
    ranked.push({ item, rank: String.fromCharCode.apply(null, codes.subarray(0, key.length) as unknown as number[]) });
  }
  ranked.sort((a, b) => (a.rank < b.rank ? -1 : a.rank > b.rank ? 1 : 0));
  for (let i = 0; i < ranked.length; i++) items[i] = ranked[i]!.item;
  return items;
}
