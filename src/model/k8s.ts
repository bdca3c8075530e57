/**
 * Shapes of the Kubernetes API objects kubectl-netpath reads, as the API server returns them in JSON
 * (core/v1, discovery.k8s.io/v1, storage.k8s.io/v1, events.k8s.io/v1 and core/v1 Event).
 *
 * Only the fields the analyses use are declared; an object may carry others (a hand-made bundle), but a live gather
 * keeps only the allow-list of src/bundle/allow_list.ts: a field read here must be kept there. Field names and optionality follow the OpenAPI schema of Kubernetes v1.33:
 * a field the server may omit is optional here, and the analyses treat "absent" as the API's documented default.
 *
 * Runtime-neutral: no I/O, no imports.
 * @module
 */

/** metadata common to every object (subset of ObjectMeta). */
export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  resourceVersion?: string;
  ownerReferences?: { kind: string; name: string; uid?: string; controller?: boolean }[];
}

/** Any API object: `kind`, `apiVersion`, `metadata`, and the rest kept as-is. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [extra: string]: unknown;
}

/** core/v1 ServicePort. `targetPort` is a number or a named container port. */
export interface ServicePort {
  name?: string;
  protocol?: "TCP" | "UDP" | "SCTP";
  port: number;
  targetPort?: number | string;
  nodePort?: number;
  appProtocol?: string;
}

/** core/v1 Service (the fields the service-path analysis reads). */
export interface Service extends KubeObject {
  spec: {
    type?: "ClusterIP" | "NodePort" | "LoadBalancer" | "ExternalName";
    clusterIP?: string;
    clusterIPs?: string[];
    ports?: ServicePort[];
    selector?: Record<string, string>;
    externalIPs?: string[];
    externalName?: string;
    externalTrafficPolicy?: "Cluster" | "Local";
    internalTrafficPolicy?: "Cluster" | "Local";
    healthCheckNodePort?: number;
    sessionAffinity?: "None" | "ClientIP";
    sessionAffinityConfig?: { clientIP?: { timeoutSeconds?: number } };
    loadBalancerIP?: string;
    loadBalancerSourceRanges?: string[];
    ipFamilies?: ("IPv4" | "IPv6")[];
    ipFamilyPolicy?: string;
    publishNotReadyAddresses?: boolean;
    trafficDistribution?: string;
  };
  status?: { loadBalancer?: { ingress?: { ip?: string; hostname?: string; ipMode?: string }[] } };
}

/** discovery.k8s.io/v1 Endpoint inside an EndpointSlice. Absent conditions mean ready/serving, not terminating. */
export interface Endpoint {
  addresses: string[];
  conditions?: { ready?: boolean; serving?: boolean; terminating?: boolean };
  hostname?: string;
  nodeName?: string;
  zone?: string;
  targetRef?: { kind?: string; name?: string; namespace?: string; uid?: string };
  hints?: { forZones?: { name: string }[]; forNodes?: { name: string }[] };
}

/** discovery.k8s.io/v1 EndpointPort. `port` absent means "all ports" (rare, headless). */
export interface EndpointPort {
  name?: string;
  protocol?: "TCP" | "UDP" | "SCTP";
  port?: number;
  appProtocol?: string;
}

/** discovery.k8s.io/v1 EndpointSlice; its owning Service is the label `kubernetes.io/service-name`. */
export interface EndpointSlice extends KubeObject {
  addressType: "IPv4" | "IPv6" | "FQDN";
  endpoints?: Endpoint[];
  ports?: EndpointPort[];
}

/** Toleration of core/v1 PodSpec. */
export interface Toleration {
  key?: string;
  operator?: "Exists" | "Equal";
  value?: string;
  effect?: "NoSchedule" | "PreferNoSchedule" | "NoExecute";
  tolerationSeconds?: number;
}

/** core/v1 NodeSelectorRequirement (used by PV node affinity and pod node affinity). */
export interface NodeSelectorRequirement {
  key: string;
  operator: "In" | "NotIn" | "Exists" | "DoesNotExist" | "Gt" | "Lt";
  values?: string[];
}

/** core/v1 NodeSelectorTerm: its matchExpressions and matchFields are ANDed. */
export interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[];
  matchFields?: NodeSelectorRequirement[];
}

/** core/v1 NodeSelector: its nodeSelectorTerms are ORed. */
export interface NodeSelector {
  nodeSelectorTerms: NodeSelectorTerm[];
}

/** metav1.LabelSelectorRequirement. */
export interface LabelSelectorRequirement {
  key: string;
  operator: "In" | "NotIn" | "Exists" | "DoesNotExist";
  values?: string[];
}

/** metav1.LabelSelector: matchLabels and matchExpressions are ANDed. */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

/** core/v1 PodAffinityTerm (required inter-pod affinity and anti-affinity). */
export interface PodAffinityTerm {
  labelSelector?: LabelSelector | null;
  /** Empty with a nil namespaceSelector: the pod's own namespace. */
  namespaces?: string[];
  /** `{}` selects every namespace; absent selects none (beyond `namespaces`). */
  namespaceSelector?: LabelSelector | null;
  topologyKey: string;
  matchLabelKeys?: string[];
  mismatchLabelKeys?: string[];
}

/** core/v1 TopologySpreadConstraint. */
export interface TopologySpreadConstraint {
  maxSkew: number;
  topologyKey: string;
  whenUnsatisfiable: "DoNotSchedule" | "ScheduleAnyway";
  labelSelector?: LabelSelector | null;
  /** Default 1 (only meaningful with DoNotSchedule). */
  minDomains?: number;
  /** Default Honor. */
  nodeAffinityPolicy?: "Honor" | "Ignore";
  /** Default Ignore. */
  nodeTaintsPolicy?: "Honor" | "Ignore";
  matchLabelKeys?: string[];
}

/** core/v1 Namespace (its labels: the namespaceSelector of pod affinity terms). */
export interface Namespace extends KubeObject {}

/** core/v1 Pod (fields used by the service and pending analyses). */
export interface Pod extends KubeObject {
  spec?: {
    nodeName?: string;
    hostNetwork?: boolean;
    nodeSelector?: Record<string, string>;
    affinity?: {
      nodeAffinity?: {
        requiredDuringSchedulingIgnoredDuringExecution?: NodeSelector;
        preferredDuringSchedulingIgnoredDuringExecution?: { weight: number; preference: NodeSelectorTerm }[];
      };
      podAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: PodAffinityTerm[] };
      podAntiAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: PodAffinityTerm[] };
      [k: string]: unknown;
    };
    tolerations?: Toleration[];
    volumes?: { name: string; persistentVolumeClaim?: { claimName: string; readOnly?: boolean }; [k: string]: unknown }[];
    containers?: { name: string; ports?: { name?: string; containerPort: number; protocol?: string }[]; [k: string]: unknown }[];
    schedulerName?: string;
    topologySpreadConstraints?: TopologySpreadConstraint[];
    /** Dynamic Resource Allocation: the claims the pod uses, by name or through a template. */
    resourceClaims?: { name: string; resourceClaimName?: string; resourceClaimTemplateName?: string }[];
    /**
     * The Workload and pod group the pod belongs to (core/v1 WorkloadReference, v1.35 alpha, feature gate
     * GenericWorkload; immutable). kube-scheduler's GangScheduling plugin applies the group's policy to every pod of
     * the same namespace, name, podGroup and podGroupReplicaKey. v1.36 replaced it with `spec.schedulingGroup`
     * (KEP-4671, KEP-5832): no later API server serves it.
     */
    workloadRef?: WorkloadReference;
    /**
     * The scheduling group the pod belongs to (core/v1 PodSchedulingGroup, v1.36+, feature gate GenericWorkload;
     * immutable): `podGroupName` names a {@link PodGroup} of the pod's namespace, which may not exist yet. It replaced
     * `spec.workloadRef` in v1.36 (core/v1 types.go: "WorkloadRef is tombstoned … replaced with the SchedulingGroup
     * field in Kubernetes 1.36").
     */
    schedulingGroup?: { podGroupName?: string };
    [k: string]: unknown;
  };
  status?: {
    phase?: string;
    podIP?: string;
    podIPs?: { ip: string }[];
    hostIP?: string;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    /** The ResourceClaims generated from templates, by the pod's claim name (no resourceClaimName: none needed). */
    resourceClaimStatuses?: { name: string; resourceClaimName?: string }[];
    [k: string]: unknown;
  };
}

/**
 * resource.k8s.io ResourceClaim (v1 since Kubernetes 1.34; v1beta1 1.32, v1beta2 1.33): what devices it asks for,
 * and whether (and for which nodes) the scheduler's DynamicResources plugin allocated them.
 */
export interface ResourceClaim extends KubeObject {
  spec?: {
    devices?: {
      /** v1beta1: deviceClassName on the request; v1/v1beta2: under `exactly`, or a list in `firstAvailable`. */
      requests?: {
        name: string;
        deviceClassName?: string;
        exactly?: { deviceClassName?: string };
        firstAvailable?: { name?: string; deviceClassName?: string }[];
      }[];
    };
  };
  status?: {
    /** Set once allocated; `nodeSelector` limits the nodes that can use the devices. */
    allocation?: { nodeSelector?: NodeSelector; devices?: { results?: { request: string; driver: string; pool: string; device: string }[] } };
    /** The pods the claim is reserved for (at most 256). */
    reservedFor?: { resource?: string; name: string; uid?: string }[];
  };
}

/** core/v1 WorkloadReference (v1.35): a pod's place in a {@link Workload}. */
export interface WorkloadReference {
  /** The Workload's name, in the pod's namespace. */
  name: string;
  /** The pod group within the Workload (`spec.podGroups[].name`). */
  podGroup: string;
  /** Which replica of the pod group; the group's policy applies to each replica apart. Empty or absent: one replica. */
  podGroupReplicaKey?: string;
}

/**
 * scheduling.k8s.io/v1alpha1 Workload (v1.35 alpha, feature gate GenericWorkload; staging/src/k8s.io/api/scheduling/
 * v1alpha1/types.go): the pod groups of a workload and each one's scheduling policy, read by kube-scheduler's
 * GangScheduling plugin. `spec.podGroups` is immutable (at most 8). v1.36 turned the groups into templates
 * (`scheduling.k8s.io/v1alpha2`, `spec.podGroupTemplates`) instantiated as PodGroup objects.
 */
export interface Workload extends KubeObject {
  spec?: {
    /** The object that owns the workload (e.g. a Job), for tools. */
    controllerRef?: { apiGroup?: string; kind: string; name: string };
    podGroups?: {
      name: string;
      /** Exactly one of `basic` (pods scheduled one by one, as without a Workload) and `gang`. */
      policy?: { basic?: Record<string, never>; gang?: { minCount: number } };
    }[];
  };
}

/**
 * scheduling.k8s.io PodGroup (v1.36+, feature gate GenericWorkload): one runtime group of pods and the scheduling
 * policy kube-scheduler applies to them, copied from a Workload's pod group template by its controller. Served as
 * `v1alpha2` by v1.36 and `v1alpha3` by v1.37.0-beta.0 (k8s.io/api tags v0.36.0, v0.37.0-beta.0), `v1beta1` on the
 * development branch after it; the fields read here are the same in each (staging/src/k8s.io/api/scheduling/…/types.go).
 */
export interface PodGroup extends KubeObject {
  spec?: {
    /** The Workload pod group template it was made from (informational: the scheduler reads the PodGroup's own policy). */
    podGroupTemplateRef?: { workload?: { workloadName?: string; podGroupTemplateName?: string } };
    /** Exactly one of `basic` (pods scheduled as without a group) and `gang` (all-or-nothing, `minCount`). */
    schedulingPolicy?: { basic?: Record<string, never>; gang?: { minCount: number } };
    /** v1.37 (feature gate CompositePodGroup): the CompositePodGroup whose tree decides readiness instead. */
    parentCompositePodGroupName?: string;
  };
  status?: {
    /**
     * Written by kube-scheduler after each pod group scheduling cycle: `PodGroupScheduled` (v1.36) or
     * `PodGroupInitiallyScheduled` (v1.37), reason `Scheduled`, `Unschedulable` or `SchedulerError`, and the cycle's
     * message; `DisruptionTarget` on preemption.
     */
    conditions?: { type: string; status: string; reason?: string; message?: string; lastTransitionTime?: string }[];
  };
}

/** core/v1 Taint. */
export interface Taint {
  key: string;
  value?: string;
  effect: "NoSchedule" | "PreferNoSchedule" | "NoExecute";
}

/** core/v1 Node. */
export interface Node extends KubeObject {
  spec?: { podCIDR?: string; podCIDRs?: string[]; taints?: Taint[]; unschedulable?: boolean; providerID?: string };
  status?: {
    addresses?: { type: string; address: string }[];
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    nodeInfo?: { kubeProxyVersion?: string; kubeletVersion?: string; [k: string]: unknown };
    /** Features the kubelet declares (NodeDeclaredFeatures, v1.35+ alpha), which the scheduler matches a pod's needs against. */
    declaredFeatures?: string[];
    [k: string]: unknown;
  };
}

/** core/v1 ConfigMap (kube-system/kube-proxy holds `config.conf`, a KubeProxyConfiguration in YAML). */
export interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

/** A container of a {@link DaemonSet}: its command line and the volumes it mounts. */
export interface DaemonSetContainer {
  name: string;
  command?: string[];
  args?: string[];
  volumeMounts?: { name: string; mountPath: string; subPath?: string }[];
}

/**
 * apps/v1 DaemonSet, as a bundle keeps it: the kube-system/kube-proxy DaemonSet's containers' command, args and
 * volumeMounts, and its ConfigMap volumes (src/kube/gather_api.ts keeps nothing else): where kube-proxy's
 * configuration comes from (`--config FILE` or flags).
 */
export interface DaemonSet extends KubeObject {
  spec?: {
    template?: {
      spec?: {
        containers?: DaemonSetContainer[];
        volumes?: { name: string; configMap?: { name?: string } }[];
      };
    };
  };
}

/** core/v1 PersistentVolumeClaim. */
export interface PersistentVolumeClaim extends KubeObject {
  spec?: {
    storageClassName?: string | null;
    volumeName?: string;
    accessModes?: string[];
    volumeMode?: string;
    resources?: { requests?: { storage?: string } };
    selector?: { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values?: string[] }[] };
    /** The VolumeAttributesClass the volume is to be provisioned or modified with (beta v1.31, GA v1.34). */
    volumeAttributesClassName?: string | null;
    [k: string]: unknown;
  };
  status?: { phase?: string; capacity?: { storage?: string }; accessModes?: string[]; [k: string]: unknown };
}

/** storage.k8s.io VolumeAttributesClass (v1 since v1.34; v1beta1 v1.31–1.33): mutable volume attributes of a driver. */
export interface VolumeAttributesClass extends KubeObject {
  driverName?: string;
}

/** core/v1 PersistentVolume. */
export interface PersistentVolume extends KubeObject {
  spec?: {
    capacity?: { storage?: string };
    accessModes?: string[];
    volumeMode?: string;
    storageClassName?: string;
    claimRef?: { name?: string; namespace?: string; uid?: string };
    nodeAffinity?: { required?: NodeSelector };
    persistentVolumeReclaimPolicy?: string;
    volumeAttributesClassName?: string | null;
    [k: string]: unknown;
  };
  status?: { phase?: string; [k: string]: unknown };
}

/** storage.k8s.io/v1 CSINode: the CSI drivers registered on a node and how many volumes each may attach. */
export interface CSINode extends KubeObject {
  spec?: { drivers?: { name: string; nodeID?: string; allocatable?: { count?: number }; topologyKeys?: string[] }[] };
}

/** storage.k8s.io/v1 CSIDriver: whether the driver opts into storage capacity tracking. */
export interface CSIDriver extends KubeObject {
  spec?: { storageCapacity?: boolean; attachRequired?: boolean };
}

/** storage.k8s.io/v1 CSIStorageCapacity: free capacity of a StorageClass in one topology segment. */
export interface CSIStorageCapacity extends KubeObject {
  storageClassName: string;
  nodeTopology?: LabelSelector | null;
  capacity?: string;
  maximumVolumeSize?: string;
}

/** storage.k8s.io/v1 StorageClass. */
export interface StorageClass extends KubeObject {
  provisioner: string;
  parameters?: Record<string, string>;
  volumeBindingMode?: "Immediate" | "WaitForFirstConsumer";
  allowedTopologies?: { matchLabelExpressions?: { key: string; values: string[] }[] }[];
  reclaimPolicy?: string;
}

/** core/v1 Event (also accepts events.k8s.io/v1 field names `note`/`regarding`). */
export interface KubeEvent extends KubeObject {
  type?: string;
  reason?: string;
  message?: string;
  note?: string;
  involvedObject?: { kind?: string; name?: string; namespace?: string; uid?: string };
  regarding?: { kind?: string; name?: string; namespace?: string; uid?: string };
  count?: number;
  firstTimestamp?: string;
  lastTimestamp?: string;
  eventTime?: string;
  source?: { component?: string; host?: string };
}
