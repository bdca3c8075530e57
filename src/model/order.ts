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
