import { describe, expect, test } from "vitest";
import { parseQuantity, quantityMilliValue, quantityValue } from "../src/model/quantity.ts";

// resource.Quantity as k8s.io/apimachinery/pkg/api/resource reads it: one suffix at most (binary SI, decimal SI or a
// decimal exponent); Value() and MilliValue() round up, away from zero (quantity.go ScaledValue).
describe("Kubernetes quantities", () => {
  const cases: { input: string | number; base: number | undefined; value: number | undefined; milli: number | undefined }[] = [
    { input: "2Gi", base: 2 * 2 ** 30, value: 2 * 2 ** 30, milli: 2 * 2 ** 30 * 1000 },
    { input: "500Mi", base: 500 * 2 ** 20, value: 500 * 2 ** 20, milli: 500 * 2 ** 20 * 1000 },
    { input: "1.5Ti", base: 1.5 * 2 ** 40, value: 1.5 * 2 ** 40, milli: 1.5 * 2 ** 40 * 1000 },
    { input: "0.5Ki", base: 512, value: 512, milli: 512_000 },
    { input: "10G", base: 1e10, value: 1e10, milli: 1e13 },
    { input: "100m", base: 0.1, value: 1, milli: 100 },
    { input: "1.1", base: 1.1, value: 2, milli: 1100 },
    { input: "0.0001", base: 0.0001, value: 1, milli: 1 },
    { input: "250u", base: 0.00025, value: 1, milli: 1 },
    { input: "5n", base: 5e-9, value: 1, milli: 1 },
    { input: "1e3", base: 1000, value: 1000, milli: 1e6 },
    { input: "1E-3", base: 0.001, value: 1, milli: 1 },
    { input: "+42", base: 42, value: 42, milli: 42_000 },
    { input: "-1.5", base: -1.5, value: -2, milli: -1500 },
    { input: ".5", base: 0.5, value: 1, milli: 500 },
    { input: "5.", base: 5, value: 5, milli: 5000 },
    { input: "0", base: 0, value: 0, milli: 0 },
    { input: 10, base: 10, value: 10, milli: 10_000 },
    { input: 0.25, base: 0.25, value: 1, milli: 250 },
    { input: "2 Gi", base: undefined, value: undefined, milli: undefined },
    { input: "Gi", base: undefined, value: undefined, milli: undefined },
    { input: "1e3Mi", base: undefined, value: undefined, milli: undefined },
    { input: "1KiB", base: undefined, value: undefined, milli: undefined },
    { input: "1.2.3", base: undefined, value: undefined, milli: undefined },
    { input: "1e999", base: undefined, value: undefined, milli: undefined },
    { input: "9".repeat(101), base: undefined, value: undefined, milli: undefined },
    { input: "", base: undefined, value: undefined, milli: undefined },
    { input: Number.NaN, base: undefined, value: undefined, milli: undefined },
  ];
  test.each(cases)("$input", ({ input, base, value, milli }) => {
    expect(parseQuantity(input)).toBe(base);
    expect(quantityValue(input)).toBe(value);
    expect(quantityMilliValue(input)).toBe(milli);
  });
  test("absent", () => {
    expect(parseQuantity(undefined)).toBeUndefined();
    expect(quantityValue(null)).toBeUndefined();
    expect(quantityMilliValue(undefined)).toBeUndefined();
  });
});
