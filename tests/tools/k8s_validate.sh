#!/usr/bin/env bash
# Validates Kubernetes manifests against the OpenAPI schema of a pinned
# Kubernetes version: npm's kubernetes-models (its models carry JSON schemas
# generated from Kubernetes' OpenAPI spec; 5.1.0 = Kubernetes 1.27.1), with
# ajv, through node. Debian has no such validator (kubeconform and kubeval
# are not packaged), hence npm; installed into build/npm on first use.
#
#   tests/tools/k8s_validate.sh FILE.yaml...      (make k8s-validate: deploy/kubernetes/*.yaml)
#
# Every document of every file must be a kind the models know, and valid:
# wrong types, bad enum values and missing required fields fail. Unknown
# (misspelt) fields do NOT: the models' schemas allow extra properties, as
# the API server's non-strict decoding does.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
MODELS=kubernetes-models@5.1.0
NPM_DIR=$ROOT/build/npm
if [[ ! -d $NPM_DIR/node_modules/kubernetes-models ]]; then
	mkdir -p "$NPM_DIR"
	npm install --prefix "$NPM_DIR" --no-audit --no-fund --silent "$MODELS" >/dev/null
fi
python3 -c '
import json, sys, yaml
docs = []
for f in sys.argv[1:]:
    for i, d in enumerate(yaml.safe_load_all(open(f))):
        if d is not None:
            docs.append({"file": f, "index": i, "doc": d})
print(json.dumps(docs))' "$@" |
M=$NPM_DIR/node_modules/kubernetes-models node --input-type=module -e '
const docs = JSON.parse((await import("fs")).readFileSync(0, "utf8"));
let bad = 0;
for (const { file, index, doc } of docs) {
	const [group, version] = doc.apiVersion.includes("/") ? doc.apiVersion.split("/") : [null, doc.apiVersion];
	const path = process.env.M + "/" + (group ? group + "/" : "") + version + "/" + doc.kind + ".js";
	let Model;
	try { Model = (await import(path))[doc.kind]; } catch (e) { console.log(`${file}[${index}]: unknown kind ${doc.apiVersion} ${doc.kind}`); bad++; continue; }
	try {
		new Model(doc).validate();
		console.log(`${file}[${index}]: ${doc.apiVersion} ${doc.kind} ${doc.metadata.name}: valid (Kubernetes 1.27.1 schema)`);
	} catch (e) {
		console.log(`${file}[${index}]: ${doc.kind} ${doc.metadata && doc.metadata.name}: INVALID: ${e.message}`);
		bad++;
	}
}
process.exit(bad ? 1 : 0);'
