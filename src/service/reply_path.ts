/**
 * The reply path of a connection DNATed on this node (issue 14 point 5). When a client that is not on this node
 * reaches an endpoint on a third node and is not masqueraded, the endpoint replies straight to the client's address:
 * the reply never crosses this node, so its conntrack entry never reverses the DNAT, and the client receives a reply
 * from the endpoint's address instead of the Service address it sent to — it drops it, and the connection never
 * completes. This is the `externalTrafficPolicy: Local` case where kube-proxy (v1.22+) sends pods of other nodes to
 * the cluster-wide chain without masquerade ("pod traffic for … external destinations"), and any other unmasqueraded
 * DNAT to a remote endpoint for a client routed through this node.
 * A client on this node, a host-network process of this node, and an endpoint on this node all get their replies
 * through this node: no finding. A client whose node is not known (a pod address in no node's `spec.podCIDRs` and no
 * Pod of the bundle: CNIs with their own IPAM, such as Calico, assign pod IPs outside the podCIDR) gets the answer for
 * both places, named by the fact that decides it: which node the client runs on.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { ClientVerdict, EndpointInfo } from "./report.ts";

/**
 * Where the client of a verdict is, as far as the reply is concerned: on this node (its replies return through it),
 * elsewhere (they return through it only when the endpoint is on this node or the client is masqueraded), or unknown
 * (the answer depends on which node the client runs on, and says so).
 */
export type ClientPlace = "this-node" | "elsewhere" | "unknown";

/**
 * Marks the endpoints whose replies cannot return through this node, and says so in the verdict. An endpoint whose
 * masquerade is not known (`masqueraded` absent: client_verdict.ts masqueradeNotKnown, a rule that would mark or
 * masquerade it could not be told to match) is not marked; a caveat says the connection fails if the client is not masqueraded.
 * @param v the verdict (mutated: `endpoints[].replyFails`, `caveats`, and the reason when every forwarded
 *   connection is affected).
 * @param place where the client is.
 * @param node this node's name.
 * @param endpoints the Service's endpoints with their nodes (from the API).
 * @param unknownWhy for `place` "unknown": why the client's node is not known (a clause, e.g. "no Pod of the bundle has
 *   this address"), said in the caveat.
 */
export function checkReplyPath(v: ClientVerdict, place: ClientPlace, node: string, endpoints: EndpointInfo[], unknownWhy?: string): void {
  if (place === "this-node" || v.outcome === "dropped" || v.outcome === "rejected") return;
  const nodeOf = (ep: string) => endpoints.find((e) => e.address === ep.replace(/^\[?([^\]]*?)\]?:\d+$/, "$1"))?.node;
  const bypass: string[] = [];
  const unknown: string[] = [];
  /** Endpoints elsewhere whose masquerade is not known (a marking or masquerading rule's match could not be told). */
  const ifNotMasqueraded: string[] = [];
  for (const e of v.endpoints) {
    if (e.masqueraded === true || e.endpoint.startsWith("unknown (")) continue;
    const where = nodeOf(e.endpoint);
    if (where === node) continue;
    if (e.masqueraded === undefined) {
      if (where !== undefined) ifNotMasqueraded.push(`${e.endpoint} (on ${where})`);
      continue;
    }
    if (where === undefined) {
      unknown.push(e.endpoint);
      continue;
    }
    // a client of unknown place: the reply bypasses this node only if the client is not on it, which is not known
    if (place === "elsewhere") e.replyFails = "bypasses-node";
    bypass.push(`${e.endpoint} (on ${where})`);
  }
  if (bypass.length > 0 && place === "unknown") {
    const one = bypass.length === 1;
    v.caveats.push(
      `reply path: the node ${v.source} runs on is not known${unknownWhy ? ` (${unknownWhy})` : ""}, and it decides whether the connection completes: ` +
        `if ${v.source} is on ${node}, the replies return through ${node}, whose conntrack reverses the DNAT; if it is on another node, ${bypass.join(", ")} ${one ? "replies" : "reply"} straight to it, ` +
        `not through ${node}, since the client is not masqueraded, and the connection does not complete`,
    );
    const all = v.endpoints.filter((e) => e.masqueraded === false).every((e) => bypass.some((b) => b.startsWith(`${e.endpoint} `)));
    if (all && v.endpoints.length > 0) v.reason = `${v.reason}; whether the replies return through ${node} depends on which node ${v.source} runs on (not known)`;
  } else if (bypass.length > 0) {
    v.caveats.push(
      `reply path: ${bypass.join(", ")} ${bypass.length === 1 ? "replies" : "reply"} straight to ${v.source}, not through ${node}, since the client is not masqueraded: ` +
        `${node}'s conntrack never reverses the DNAT, the client gets a reply from the endpoint's address instead of the one it sent to, and the connection does not complete`,
    );
    const all = v.endpoints.filter((e) => e.masqueraded === false).every((e) => e.replyFails === "bypasses-node");
    if (all && v.endpoints.length > 0) v.reason = `${v.reason}; but the replies bypass ${node}: the connection does not complete`;
  }
  if (ifNotMasqueraded.length > 0) {
    v.caveats.push(
      `reply path: whether ${v.source} is masqueraded to ${ifNotMasqueraded.join(", ")} is not known (see the reason: a rule whose match could not be told decides it); ` +
        `if it is not, ${ifNotMasqueraded.length === 1 ? "that endpoint replies" : "those endpoints reply"} straight to ${v.source}${place === "unknown" ? ` when it is not on ${node} (its node is not known${unknownWhy ? `: ${unknownWhy}` : ""})` : ""}, not through ${node}, and the connection does not complete`,
    );
  }
  if (unknown.length > 0) {
    // the reply crosses this node when the client is on it (wherever the endpoint runs) or the endpoint is: with the
    // client's node unknown too, both facts decide, and the caveat names both
    const one = unknown.length === 1;
    v.caveats.push(
      place === "unknown"
        ? `reply path: the nodes of ${unknown.join(", ")} (not in the API objects) and of ${v.source}${unknownWhy ? ` (${unknownWhy})` : ""} are not known, and they decide whether the connection completes: ` +
          `it does if either is ${node} (the replies then return through ${node}, whose conntrack reverses the DNAT); if neither is, ${unknown.join(", ")} ${one ? "replies" : "reply"} straight to ${v.source}, not through ${node}, and the connection does not complete`
        : `reply path: the node of ${unknown.join(", ")} is not in the API objects; if it is not ${node}, the unmasqueraded reply bypasses ${node} and the connection does not complete`,
    );
  }
}
