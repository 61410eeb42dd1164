#!/usr/bin/env python3
"""tests/e2e/99_container.sh's kube play case: deploy/kubernetes/'s agent
DaemonSet turned into what `podman kube play` runs (podman 4.3 plays Pods
and Deployments, not DaemonSets): its pod template as a Pod, unchanged but
for the image (the test's), the seccomp profile (podman's default denies
bpf() to CAP_BPF: the annotation names deploy/podman/seccomp-bpf.sh's, under
--seccomp-profile-root), and the node address the kubelet would give
(status.hostIP, which podman leaves empty): the lab server's; $(VAR) in
args expanded as the kubelet does (podman 4.3 passes them as they are); the ports
are dropped (podman refuses port declarations with host networking, which
Kubernetes takes as documentation). The ConfigMap
goes along as it is. The Secret cannot: podman 4.3's kube play panics on a
secret volume (a nil pointer in VolumeFromSecret, measured with a podman
secret of that name too), so the key's volume becomes a hostPath of the
directory holding auth.key (mode 600), mounted where the Secret would be.

  kube_pod.py DEPLOY_DIR IMAGE NODE_IP KEY_DIR OUT.yaml
"""
import sys
import yaml

d, image, node_ip, key_dir, out = sys.argv[1:6]
ds = yaml.safe_load(open(f"{d}/daemonset.yaml"))
cm = yaml.safe_load(open(f"{d}/configmap.yaml"))
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
    c.pop("ports", None)  # podman: "PortMappings can only be used with Bridge or slirp4netns networking"
    # The kubelet expands $(VAR) in args from the container's env; podman 4.3 does not: done here, from
    # the env's values and the ConfigMap's keys.
    env = {}
    for e in c["env"]:
        ref = e.get("valueFrom", {}).get("configMapKeyRef")
        env[e["name"]] = cm["data"][ref["key"]] if ref else e["value"]
    for k, v in env.items():
        c["args"] = [a.replace(f"$({k})", v) for a in c["args"]]
for v in spec["volumes"]:
    if "secret" in v:
        v.pop("secret")
        v["hostPath"] = {"path": key_dir, "type": "Directory"}
meta = {"name": ds["metadata"]["name"], "namespace": ds["metadata"]["namespace"],
        "labels": tpl["metadata"]["labels"],
        "annotations": dict(tpl["metadata"].get("annotations", {}),
                            **{"seccomp.security.alpha.kubernetes.io/pod": "localhost/xdpperf.json"})}
pod = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
yaml.safe_dump_all([cm, pod], open(out, "w"), sort_keys=False)
