// Small cases of reading a bundle directory (src/bundle/decode.ts bundleFromFiles): what is warned about, and how.
import { describe, expect, it } from "vitest";
import { bundleFromFiles } from "../src/bundle/decode.ts";

const svc = "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: default}\nspec: {clusterIP: 10.96.0.1, ports: [{port: 80}]}\n";

describe("a List with no items", () => {
  it("`items: null` is said to be an empty list, not an unknown kind", () => {
    const b = bundleFromFiles([{ path: "services.yaml", text: svc }, { path: "empty.yaml", text: "apiVersion: v1\nkind: List\nitems: null\n" }], "B");
    expect(b.warnings).toEqual(["B/empty.yaml: a List with no items (items is null); nothing read from it"]);
    expect(b.objects.services).toHaveLength(1);
  });
});
