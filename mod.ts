/**
 * kubectl-netpath as a library: the parsers of node datapath state (iptables-save, `iptables -L` listings,
 * ipvsadm, ipset, nftables), the Bundle model and its reader/writer, and the analyses — how a Service is balanced and
 * masqueraded on each node (`explainService`) and why a claim or pod is Pending (`explainPending`) — with their report
 * types. Everything here is pure (no I/O) and runs unchanged on Node >= 20 and Deno 2, except live collection
 * (`gatherBundle`), which reads the cluster of a kubeconfig and returns the Bundle the analyses take.
 * Layout: docs/architecture.md.
 *
 * Importing it never runs the CLI (also when bundled into another program); the CLI is `deno run -A src/cli/main.ts`
 * under Deno and dist/kubectl-netpath.cjs under Node.
 *
 * @example
 * ```ts
 * import { decodeBundle, explainService } from "./mod.ts";
 * const bundle = decodeBundle(text, "web.bundle.json");
 * const report = explainService(bundle, "shop", "web");
 * report.nodes[0]?.ports[0]?.entryPoints[0]?.balancing.shares; // [{ endpoint: "10.0.0.1:80", share: 0.5 }, …]
 * ```
 * @module
 */

// Kubernetes API object shapes
export type * from "./src/model/k8s.ts";

// Bundle
export * from "./src/bundle/bundle.ts";
export { addObjects, BundleError, type BundleFile, bundleFromFiles, decodeBundle, encodeBundle } from "./src/bundle/decode.ts";

// Parsers
export { DumpParseError } from "./src/datapath/errors.ts";
export {
  findOption,
  findTargetOption,
  type IptablesChain,
  type IptablesDump,
  type IptablesRule,
  type IptablesTable,
  type MatchModule,
  type Negatable,
  parseIptablesSave,
  type ParseIptablesSaveOptions,
  parseRuleLine,
  type RuleOption,
} from "./src/datapath/iptables_save.ts";
export { type IptablesListing, type ListingChain, type ListingRule, parseIptablesListing } from "./src/datapath/iptables_list.ts";
export { listingToDump } from "./src/datapath/iptables_list_convert.ts";
export { IPVS_SCHEDULERS, type IpvsTable, parseIpvsadm, type RealServer, type VirtualServer } from "./src/datapath/ipvsadm.ts";
export { type IpsetMember, type IpsetSet, parseIpsetList } from "./src/datapath/ipset.ts";
export { parseNftJson } from "./src/datapath/nft_json.ts";
export { parseNftText } from "./src/datapath/nft_text.ts";
export type { NftChain, NftRule, NftRuleset, NftSet, NftTable } from "./src/datapath/nft_model.ts";
export { decodeKubeProxyNft, type KubeProxyNft } from "./src/datapath/kube_proxy_nft.ts";

// Service analysis
export { kernelProbability, iptablesSaveProbability } from "./src/service/iptables/probability.ts";
export { traceIptables, TraceError } from "./src/service/iptables/trace.ts";
export { type RuleRef, type TraceOutcome, type TraceResult } from "./src/service/trace.ts";
export type { TracePacket } from "./src/service/trace.ts";
export { explainService, type ExplainServiceOptions, explainServiceNode, finishServiceExplain, type NodeExplained, prepareServiceExplain, type ServiceExplain } from "./src/service/explain.ts";
export type { PacketQuestion, Target, TargetKind } from "./src/model/question.ts";
export { type Datapath, type DatapathBuilder, type NodeDatapath, nodeDatapath } from "./src/service/datapath.ts";
export { iptablesDatapath, readIptables } from "./src/service/iptables/datapath.ts";
export { readIpvs } from "./src/service/ipvs/datapath.ts";
export { traceNft } from "./src/service/nftables/trace.ts";
export { nftDatapath } from "./src/service/nftables/datapath.ts";
export { resolveService, portKey } from "./src/service/resolve.ts";
export { NotFoundError } from "./src/model/errors.ts";
export * from "./src/service/report.ts";

// Why-pending analysis
export { explainPending } from "./src/pending/explain.ts";
export type { PendingQuestion, PendingReport } from "./src/pending/report.ts";
export { evaluateNodeSelector, evaluateNodeSelectorTerm } from "./src/pending/node_selector.ts";
export { parseSchedulerMessage } from "./src/pending/scheduler_message.ts";

// Live collection (I/O: kubeconfig, API server, exec into nodes)
export { gatherBundle, gatherWith, liveSettings, openCluster } from "./src/kube/live.ts";
export type { ClusterOptions, GatherHooks, GatherIo, GatherRequest, GatherResult, LiveOptions } from "./src/kube/options.ts";

// Renderers
export { renderServiceText } from "./src/report/service_text.ts";
export { renderPendingText } from "./src/report/pending_text.ts";
export { serializeReport } from "./src/report/serialize.ts";

