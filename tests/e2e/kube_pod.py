#!/usr/bin/env python3
"""tests/e2e/99_container.sh's kube play case: deploy/kubernetes/'s agent
DaemonSet turned into what `podman kube play` runs (podman 4.3 plays Pods
and Deployments, not DaemonSets): its pod template as a Pod, unchanged but
for the image (the test's), the seccomp profile (podman's default denies
bpf() to CAP_BPF: the annotation names deploy/podman/seccomp-bpf.sh's, under
--seccomp-profile-root), and the node address the kubelet would give
(status.hostIP, which podman leaves empty): the lab server's. The ConfigMap
and the Secret go along as they are, the Secret's placeholder key replaced by
a real one.

  kube_pod.py DEPLOY_DIR IMAGE NODE_IP KEY_HEX OUT.yaml
"""
import sys
import yaml

d, image, node_ip, key, out = sys.argv[1:6]
ds = yaml.safe_load(open(f"{d}/daemonset.yaml"))
cm = yaml.safe_load(open(f"{d}/configmap.yaml"))
sec = yaml.safe_load(open(f"{d}/secret.yaml"))
sec["stringData"]["auth.key"] = key
tpl = ds["spec"]["template"]
spec = tpl["spec"]
for c in spec["containers"]:
    c["image"] = image
    c["imagePullPolicy"] = "Never"
    for e in c["env"]:
        if e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "status.hostIP":
            e.pop("valueFrom")
            e["value"] = node_ip
    c["securityContext"].pop("seccompProfile", None)
meta = {"name": ds["metadata"]["name"], "namespace": ds["metadata"]["namespace"],
        "labels": tpl["metadata"]["labels"],
        "annotations": dict(tpl["metadata"].get("annotations", {}),
                            **{"seccomp.security.alpha.kubernetes.io/pod": "localhost/xdpperf.json"})}
pod = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
yaml.safe_dump_all([cm, sec, pod], open(out, "w"), sort_keys=False)
