/**
 * Why a Service has no (or too few) endpoints — the most common "can't reach my Service" with no datapath problem at
 * all. From the Service, its EndpointSlices and the namespace's Pods and Events in the bundle, as the EndpointSlice
 * controller decides (pkg/controller/endpointslice, staging/src/k8s.io/endpointslice reconciler):
 * - a selector that matches no Pod (with the Pods whose labels come closest);
 * - Pods that match but are not Ready (their Ready condition's message, and the readiness-probe Events);
 * - a named `targetPort` that no container of a matching Pod declares (the controller then publishes no port for it);
 * - a ServicePort protocol that the matching container port does not use;
 * - `publishNotReadyAddresses: true` (not-ready Pods are published as ready: the endpoints may not answer);
 * - a Service without a selector and no EndpointSlice written by hand;
 * - EndpointSlices managed by another controller (`endpointslice.kubernetes.io/managed-by`).
 * The same evidence style as the rest: each finding names the objects and fields it reads.
 *
 * Runtime-neutral: no I/O.
 * @module
 */
import type { BundleObjects } from "../bundle/bundle.ts";
import type { Pod } from "../model/k8s.ts";
import type { ResolvedService } from "./resolve.ts";
import type { Finding } from "./report.ts";
import { labelSelectorMatches } from "../model/label_selector.ts";

/** The controller that manages EndpointSlices of Services with a selector (its `managed-by` label value). */
export const ENDPOINTSLICE_CONTROLLER = "endpointslice-controller.k8s.io";

/** A Service's selector (labels.SelectorFromSet) against a pod's labels. */
function matches(selector: Record<string, string>, labels: Record<string, string> | undefined): boolean {
  return labelSelectorMatches({ matchLabels: selector }, labels, "nothing");
}

function terminal(p: Pod): boolean {
  return p.status?.phase === "Succeeded" || p.status?.phase === "Failed";
}

/** The Pods whose labels come closest to a selector: most selector labels matched, then names. */
function closest(selector: Record<string, string>, pods: Pod[]): { pod: Pod; matched: number; differs: string[] }[] {
  const keys = Object.entries(selector);
  return pods
    .map((pod) => {
      const labels = pod.metadata.labels ?? {};
      const differs = keys.filter(([k, v]) => labels[k] !== v).map(([k, v]) => `${k}=${v} (pod has ${labels[k] === undefined ? "no such label" : `${k}=${labels[k]}`})`);
      return { pod, matched: keys.length - differs.length, differs };
    })
    .filter((x) => x.matched > 0)
    .sort((a, b) => b.matched - a.matched || (a.pod.metadata.name < b.pod.metadata.name ? -1 : 1))
    .slice(0, 3);
}

/**
 * Diagnoses a Service's endpoints.
 * @param resolved the resolved Service (its slices and endpoints).
 * @param objects the bundle's objects (Pods and Events of the namespace, as far as the bundle holds them).
 * @returns findings, most decisive first; empty when the endpoints are what the Pods say they should be.
 */
export function diagnoseEndpoints(resolved: ResolvedService, objects: BundleObjects): Finding[] {
  const out: Finding[] = [];
  const svc = resolved.service;
  const ns = svc.metadata.namespace ?? "default";
  const name = svc.metadata.name;
  if (svc.spec.type === "ExternalName") return out;
  const selector = svc.spec.selector ?? {};
  const hasSelector = Object.keys(selector).length > 0;
  const pods = objects.pods.filter((p) => (p.metadata.namespace ?? "default") === ns && !terminal(p));
  const foreign = resolved.slices.filter((s) => {
    const by = s.metadata.labels?.["endpointslice.kubernetes.io/managed-by"];
    return by !== undefined && by !== ENDPOINTSLICE_CONTROLLER;
  });
  // A Service without a selector is fed by hand or mirrored from its Endpoints (endpointslicemirroring-controller):
  // another manager is news only when the Service has a selector.
  for (const s of hasSelector ? foreign : []) {
    out.push({
      severity: "info",
      code: "EndpointSlicesManagedElsewhere",
      message: `EndpointSlice ${s.metadata.name} is managed by ${s.metadata.labels!["endpointslice.kubernetes.io/managed-by"]}, not by the EndpointSlice controller: its endpoints are whatever that controller (or person) writes, not the Pods the selector matches`,
    });
  }
  if (!hasSelector) {
    if (resolved.slices.length === 0) {
      out.push({
        severity: "warning",
        code: "NoSelectorNoEndpointSlices",
        message: `Service ${ns}/${name} has no selector, so no controller writes its endpoints, and no EndpointSlice labelled kubernetes.io/service-name=${name} exists: create one by hand (or add a selector)`,
      });
    }
    return out;
  }
  if (svc.spec.publishNotReadyAddresses) {
    out.push({
      severity: "info",
      code: "PublishNotReadyAddresses",
      message: "publishNotReadyAddresses is true: the EndpointSlice controller publishes matching Pods as ready whether they are or not, so an endpoint may not answer yet",
    });
  }
  const matching = pods.filter((p) => matches(selector, p.metadata.labels));
  const sel = Object.entries(selector).map(([k, v]) => `${k}=${v}`).join(",");
  const readyEndpoints = new Set(resolved.endpoints.filter((e) => e.ready).map((e) => e.address));
  if (matching.length === 0) {
    // A bundle without the namespace's Pods cannot say anything when the Service has endpoints.
    if (pods.length === 0 && readyEndpoints.size > 0) return out;
    if (pods.length === 0) {
      out.push({
        severity: "warning",
        code: "NoPodsMatchSelector",
        message: `selector ${sel} matches no Pod in the bundle (the bundle holds no Pods of namespace ${ns}: capture with the namespace's Pods to tell why)`,
      });
      return out;
    }
    const near = closest(selector, pods);
    out.push({
      severity: "warning",
      code: "NoPodsMatchSelector",
      message: `selector ${sel} matches none of the ${pods.length} Pods of namespace ${ns}` +
        (near.length > 0 ? `; closest: ${near.map((x) => `${x.pod.metadata.name} (differs in ${x.differs.join(", ")})`).join("; ")}` : ""),
    });
    return out;
  }
  // Not ready: the Pod's Ready condition says False (a bundle may hold Pods without status conditions: then only an
  // address missing from the ready endpoints says so, and nothing is claimed when neither is known).
  const notReady = matching.filter((p) => {
    const ready = p.status?.conditions?.find((c) => c.type === "Ready");
    if (ready) return ready.status !== "True";
    const ip = p.status?.podIP;
    return ip !== undefined && readyEndpoints.size > 0 && !readyEndpoints.has(ip) ? true : false;
  });
  if (notReady.length > 0 && !svc.spec.publishNotReadyAddresses) {
    const events = objects.events.filter((e) => {
      const o = e.involvedObject ?? e.regarding;
      return o?.kind === "Pod" && (o.namespace ?? ns) === ns && notReady.some((p) => p.metadata.name === o.name) && /Unhealthy|probe/i.test(`${e.reason ?? ""} ${e.message ?? e.note ?? ""}`);
    });
    const why = notReady.slice(0, 3).map((p) => {
      const ready = p.status?.conditions?.find((c) => c.type === "Ready");
      const ev = events.find((e) => (e.involvedObject ?? e.regarding)?.name === p.metadata.name);
      const text = ev ? `${ev.reason}: ${ev.message ?? ev.note ?? ""}` : ready?.message ?? ready?.reason ?? `phase ${p.status?.phase ?? "unknown"}`;
      return `${p.metadata.name} (${text})`;
    });
    out.push({
      severity: "warning",
      code: "PodsNotReady",
      message: `${notReady.length} of ${matching.length} Pods matching ${sel} are not Ready, so they are not ready endpoints: ${why.join("; ")}${notReady.length > 3 ? "; …" : ""}`,
    });
  }
  for (const sp of svc.spec.ports ?? []) {
    const target = sp.targetPort ?? sp.port;
    const proto = sp.protocol ?? "TCP";
    const label = sp.name ? `${sp.name} (${sp.port}/${proto})` : `${sp.port}/${proto}`;
    if (typeof target === "string") {
      const declaring = matching.filter((p) => p.spec?.containers?.some((c) => c.ports?.some((cp) => cp.name === target)));
      if (declaring.length === 0) {
        out.push({
          severity: "warning",
          code: "TargetPortNotDeclared",
          message: `ServicePort ${label}: targetPort "${target}" is a port name no container of the ${matching.length} matching Pods declares: the EndpointSlice controller publishes no port for them`,
        });
        continue;
      }
      const wrong = declaring.filter((p) => p.spec?.containers?.some((c) => c.ports?.some((cp) => cp.name === target && (cp.protocol ?? "TCP") !== proto)));
      if (wrong.length > 0) {
        out.push({
          severity: "warning",
          code: "ProtocolMismatch",
          message: `ServicePort ${label}: the container port named "${target}" of ${wrong.map((p) => p.metadata.name).slice(0, 3).join(", ")} is not ${proto}`,
        });
      }
    } else {
      // A numeric targetPort need not be declared (containers may listen on undeclared ports); a declared port of the
      // same number with another protocol is worth saying.
      const other = matching.filter((p) => p.spec?.containers?.some((c) => c.ports?.some((cp) => cp.containerPort === target && (cp.protocol ?? "TCP") !== proto)) &&
        !p.spec?.containers?.some((c) => c.ports?.some((cp) => cp.containerPort === target && (cp.protocol ?? "TCP") === proto)));
      if (other.length > 0) {
        out.push({
          severity: "warning",
          code: "ProtocolMismatch",
          message: `ServicePort ${label}: containers of ${other.map((p) => p.metadata.name).slice(0, 3).join(", ")} declare port ${target} with another protocol than ${proto}`,
        });
      }
    }
  }
  return out;
}
