/*
 * libFuzzer harness: the flow file's reader (user/spec/otg_flows.c, --flows
 * FILE) on any JSON text. Promises: a file it takes has 1..256 flows, each
 * with headers, and its spec goes through the JSON form and back unchanged;
 * a file it refuses gets -1 and one non-empty line that starts with
 * "--flows f.json: ". The spec's rules (xp_spec_validate) run on what it
 * takes and must answer 0 or one line. A broken promise aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "spec/otg_flows.h"
#include "spec/spec.h"

#define PROMISE(cond) do { if (!(cond)) { fprintf(stderr, "broken promise: %s\n", #cond); abort(); } } while (0)

static struct xp_spec s, back;

static void one_line(const char *err, size_t errlen)
{
	PROMISE(err[0]);
	PROMISE(strlen(err) < errlen);
	PROMISE(!strchr(err, '\n'));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512], e2[512];
	struct json_tokener *tok = json_tokener_new();

	if (!tok)
		return 0;
	struct json_object *j = json_tokener_parse_ex(tok, (const char *)data, (int)(size > 1 << 20 ? 1 << 20 : size));
	json_tokener_free(tok);
	if (!j)
		return 0;
	xp_spec_default(&s);
	snprintf(s.host, sizeof(s.host), "198.18.1.1");
	err[0] = '\0';
	if (xp_otg_flows_parse(j, "f.json", (data[0] & 1) ? 10e9 : 0, &s, err, sizeof(err))) {
		one_line(err, sizeof(err));
		PROMISE(!strncmp(err, "--flows f.json: ", 16));
		json_object_put(j);
		return 0;
	}
	json_object_put(j);
	PROMISE(s.ntraffic >= 1 && s.ntraffic <= XP_SPEC_MAX_STREAMS);
	for (unsigned i = 0; i < s.ntraffic; i++)
		PROMISE(s.traffic[i].has_hdr);
	e2[0] = '\0';
	if (xp_spec_validate(&s, e2, sizeof(e2)))
		one_line(e2, sizeof(e2));
	/* Through the spec's JSON form and back: the same text. */
	struct json_object *a = xp_spec_to_json(&s);
	PROMISE(a);
	struct json_object *a2 = json_tokener_parse(json_object_to_json_string(a));
	PROMISE(a2);
	PROMISE(!xp_spec_from_json(a2, &back, err, sizeof(err)));
	struct json_object *b = xp_spec_to_json(&back);
	PROMISE(!strcmp(json_object_to_json_string(a), json_object_to_json_string(b)));
	json_object_put(a);
	json_object_put(a2);
	json_object_put(b);
	return 0;
}
