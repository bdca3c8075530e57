/**
 * Kubernetes resource quantities (`resource.Quantity`, k8s.io/apimachinery/pkg/api/resource quantity.go): `2Gi`,
 * `500M`, `100m`, `1.5`, `1e3`. One parser for the whole project: the scheduler's filters (requests and allocatable),
 * the PV controller's capacity check and CSIStorageCapacity, and the tests' container memory limits.
 *
 * A quantity is a signed decimal number followed by at most one suffix: a binary SI suffix (`Ki` … `Ei`, powers of
 * 1024), a decimal SI suffix (`n` `u` `m` `k` `M` `G` `T` `P` `E`) or a decimal exponent (`e3`, `E-2`). It is read
 * exactly (a ratio of integers), so that rounding is done once and as Kubernetes does it: `Value()` and
 * `MilliValue()` round up, away from zero (quantity.go `ScaledValue`, which `Value` and `MilliValue` call).
 *
 * Runtime-neutral: no I/O.
 * @module
 */

/** A quantity read exactly: `num / den`, `den` > 0. */
interface Exact {
  num: bigint;
  den: bigint;
}

const BINARY: Record<string, bigint> = { Ki: 1n << 10n, Mi: 1n << 20n, Gi: 1n << 30n, Ti: 1n << 40n, Pi: 1n << 50n, Ei: 1n << 60n };
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, "": 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const QUANTITY = /^([+-]?)([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:(Ki|Mi|Gi|Ti|Pi|Ei)|[eE]([+-]?[0-9]+)|(n|u|m|k|M|G|T|P|E))?$/;

/** Exponents beyond this make numbers no Kubernetes object holds (and BigInt powers that cost time). */
const MAX_EXPONENT = 400;
/** Longer text is no quantity an API server wrote (and BigInt's reading of a long digit string is quadratic). */
const MAX_LENGTH = 100;

function exact(q: string | number): Exact | undefined {
  const text = typeof q === "number" ? (Number.isFinite(q) ? String(q) : "") : q.trim();
  const m = text.length <= MAX_LENGTH ? QUANTITY.exec(text) : null;
  if (!m) return undefined;
  const [, sign, number, binary, exponent, decimal] = m;
  const [whole, fraction = ""] = number!.split(".");
  let num = BigInt(`${whole || "0"}${fraction}`) * (sign === "-" ? -1n : 1n);
  let den = 1n;
  const exp = -fraction.length + (exponent !== undefined ? Number(exponent) : DECIMAL[decimal ?? ""]!);
  if (Math.abs(exp) > MAX_EXPONENT) return undefined;
  if (binary) num *= BINARY[binary]!;
  if (exp >= 0) num *= 10n ** BigInt(exp);
  else den = 10n ** BigInt(-exp);
  return { num, den };
}

/** `ceil(|num × 10^scale / den|)` with num's sign: quantity.go ScaledValue's rounding (away from zero). */
function scaledValue(e: Exact, scale: number): number {
  const num = scale >= 0 ? e.num * 10n ** BigInt(scale) : e.num;
  const den = scale >= 0 ? e.den : e.den * 10n ** BigInt(-scale);
  const neg = num < 0n;
  const abs = neg ? -num : num;
  const q = (abs + den - 1n) / den;
  return Number(neg ? -q : q);
}

/**
 * A quantity's value in base units (bytes for memory and storage, cores for cpu), as a JavaScript number.
 * A number (a YAML bundle's `storage: 10`) is read as its decimal text.
 * @param q e.g. `2Gi`, `500M`, `1.5Ti`, `100m`, `1e3`.
 * @returns the value (`2Gi` → 2147483648, `100m` → 0.1), or `undefined` when `q` is absent or not a quantity.
 * @example parseQuantity("2Gi") // 2147483648
 */
export function parseQuantity(q: string | number | undefined | null): number | undefined {
  if (q === undefined || q === null) return undefined;
  const e = exact(q);
  return e === undefined ? undefined : Number(e.num) / Number(e.den);
}

/**
 * `Quantity.Value()`: the value in base units rounded up, away from zero (`1.5` → 2, `100m` → 1). What the PV
 * controller compares (pv_controller.go `checkVolumeSatisfyClaim`, `volumeQty.Value() < requestedSize`) and the
 * scheduler adds for every resource but cpu (framework/types.go `Resource.Add`).
 * @returns the integer, or `undefined` when `q` is absent or not a quantity.
 */
export function quantityValue(q: string | number | undefined | null): number | undefined {
  if (q === undefined || q === null) return undefined;
  const e = exact(q);
  return e === undefined ? undefined : scaledValue(e, 0);
}

/**
 * `Quantity.MilliValue()`: the value in thousandths of base units rounded up, away from zero (`0.1` → 100, `1` →
 * 1000, `0.0001` → 1): what the scheduler adds for cpu (framework/types.go `Resource.Add`, `MilliCPU`).
 * @returns the integer, or `undefined` when `q` is absent or not a quantity.
 */
export function quantityMilliValue(q: string | number | undefined | null): number | undefined {
  if (q === undefined || q === null) return undefined;
  const e = exact(q);
  return e === undefined ? undefined : scaledValue(e, 3);
}
