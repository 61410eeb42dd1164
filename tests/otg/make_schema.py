#!/usr/bin/env python3
"""Vendor the OTG schemas the project's bodies use, from a models release.

    python3 tests/otg/make_schema.py OPENAPI.yaml > tests/otg/otg-1.61.0.json

OPENAPI.yaml is artifacts/openapi.yaml of open-traffic-generator/models at
tag v1.61.0 (MIT licence). The output keeps components/schemas' entries that
the roots below reach through $ref, with Config cut to its ports and flows
(what xdpperf takes), the choice objects of the requests and responses cut to
the branches xdpperf serves (traffic; flow and port metrics), and the flow
headers xdpperf does not send kept as plain objects. Descriptions and x-
annotations are dropped; every type, enum, format, required list and default
is copied unchanged, so a body of the subset valid here is valid against the
release.
"""
import json
import sys

import yaml

ROOTS = ["Config", "Control.State", "Metrics.Request", "Metrics.Response", "Warning", "Error", "Version"]
# property lists kept of the roots that are wider than xdpperf's subset
KEEP = {
    "Config": ["ports", "flows"],
    "Control.State": ["choice", "traffic"],
    "Metrics.Request": ["choice", "flow", "port"],
    "Metrics.Response": ["choice", "flow_metrics", "port_metrics"],
}
# choice objects whose branches outside xdpperf's subset are kept as plain objects (their
# choice values stay valid, their insides are not checked here: the controller refuses them)
OPAQUE = {
    "Flow.Header": ["ethernet", "vlan", "ipv4", "ipv6", "tcp", "udp"],
    "Flow.TxRx": ["port"],
}
# the choices whose branch was cut: only the served values stay in the enum
CHOICES = {
    "Control.State": ["traffic"],
    "Metrics.Request": ["port", "flow"],
    "Metrics.Response": ["flow_metrics", "port_metrics"],
}


def refs(node, out):
    if isinstance(node, dict):
        r = node.get("$ref")
        if isinstance(r, str) and r.startswith("#/components/schemas/"):
            out.add(r.rsplit("/", 1)[1])
        for v in node.values():
            refs(v, out)
    elif isinstance(node, list):
        for v in node:
            refs(v, out)


def strip(node):
    """Descriptions and the generator's x- annotations are documentation, not shape."""
    if isinstance(node, dict):
        for k in [k for k in node if k == "description" or k.startswith("x-")]:
            del node[k]
        for v in node.values():
            strip(v)
    elif isinstance(node, list):
        for v in node:
            strip(v)


def main():
    api = yaml.safe_load(open(sys.argv[1]))
    assert api["info"]["version"] == "1.61.0", api["info"]["version"]
    schemas = api["components"]["schemas"]
    kept = {}
    todo = list(ROOTS)
    while todo:
        name = todo.pop()
        if name in kept:
            continue
        s = json.loads(json.dumps(schemas[name]))
        if name in KEEP:
            s["properties"] = {k: v for k, v in s["properties"].items() if k in KEEP[name]}
        if name in OPAQUE:
            for k, v in s["properties"].items():
                if k != "choice" and k not in OPAQUE[name]:
                    s["properties"][k] = {"type": "object"}
        strip(s)
        if name in CHOICES:
            s["properties"]["choice"]["enum"] = CHOICES[name]
            s["properties"]["choice"].pop("x-enum", None)
        kept[name] = s
        found = set()
        refs(s, found)
        todo.extend(sorted(found - set(kept)))
    doc = {
        "$comment": "Open Traffic Generator models v1.61.0 (github.com/open-traffic-generator/models, "
        "artifacts/openapi.yaml, MIT licence, (c) the OTG authors): the schemas of the bodies xdpperf's "
        "OTG API takes and gives, made by tests/otg/make_schema.py; Config cut to ports and flows, the "
        "choices to the traffic subset.",
        "version": api["info"]["version"],
        "paths": {p: sorted(m for m in api["paths"][p] if m in ("get", "post"))
                  for p in ("/config", "/control/state", "/monitor/metrics", "/capabilities/version")},
        "schemas": dict(sorted(kept.items())),
    }
    json.dump(doc, sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")


main()
