#!/usr/bin/env python3
"""Check an OTG API body against the models' schemas (tests/otg/otg-1.61.0.json).

    otg_check.py request METHOD PATH FILE          a request's body
    otg_check.py response METHOD PATH STATUS FILE  a response's body

Which schema a body has is the OpenAPI's: POST /config takes a Config and
gives a Warning, GET /config gives a Config, POST /control/state takes a
Control.State and gives a Warning, POST /monitor/metrics takes a
Metrics.Request and gives a Metrics.Response, GET /capabilities/version gives
a Version; any status other than 200 gives an Error whose code is that
status. Stricter than the schema in one way: an object may hold only the
members its schema names (xdpperf's own bodies must not invent members).
Exit 0 when it conforms, 1 with one line per fault, 2 on a usage error.
"""
import json
import os
import sys

import jsonschema

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMAS = os.path.join(HERE, "otg-1.61.0.json")

REQUESTS = {("POST", "/config"): "Config", ("POST", "/control/state"): "Control.State",
            ("POST", "/monitor/metrics"): "Metrics.Request"}
RESPONSES = {("POST", "/config"): "Warning", ("GET", "/config"): "Config",
             ("POST", "/control/state"): "Warning", ("POST", "/monitor/metrics"): "Metrics.Response",
             ("GET", "/capabilities/version"): "Version"}


def closed(node):
    """Every object schema with properties takes no other member."""
    if isinstance(node, dict):
        if node.get("type") == "object" and "properties" in node:
            node.setdefault("additionalProperties", False)
        for v in node.values():
            closed(v)
    elif isinstance(node, list):
        for v in node:
            closed(v)


def check(schema_name, body):
    doc = json.load(open(SCHEMAS))
    schemas = doc["schemas"]
    closed(schemas)
    root = {"components": {"schemas": schemas}, "$ref": "#/components/schemas/" + schema_name}
    # OpenAPI 3.0's schema objects are JSON Schema draft 4's, extended.
    v = jsonschema.Draft4Validator(root)
    return ["%s: %s at %s" % (schema_name, e.message, "/".join(str(p) for p in e.absolute_path) or "(top)")
            for e in sorted(v.iter_errors(body), key=lambda e: list(map(str, e.absolute_path)))]


def main(argv):
    if len(argv) < 5 or argv[1] not in ("request", "response") or (argv[1] == "response" and len(argv) != 6) \
            or (argv[1] == "request" and len(argv) != 5):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    method, path = argv[2].upper(), argv[3]
    src = argv[-1]
    text = sys.stdin.read() if src == "-" else open(src).read()
    try:
        body = json.loads(text)
    except ValueError as e:
        print("%s %s: the body is not JSON: %s" % (method, path, e))
        return 1
    if argv[1] == "request":
        name = REQUESTS.get((method, path))
        status = None
    else:
        status = int(argv[4])
        name = "Error" if status != 200 else RESPONSES.get((method, path))
    if not name:
        print("%s %s: no such operation in xdpperf's OTG API" % (method, path))
        return 1
    faults = check(name, body)
    if status and status != 200 and isinstance(body, dict) and body.get("code") != status:
        faults.append("Error: code %r is not the HTTP status %d" % (body.get("code"), status))
    for f in faults:
        print("%s %s: %s" % (method, path, f))
    return 1 if faults else 0


sys.exit(main(sys.argv))
