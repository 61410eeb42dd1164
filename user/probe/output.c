/* --probe's reports: aligned lines for people, one JSON document for -J (json-c). */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "probe/probe.h"
#include "util/privdrop.h"

static const char *state_word(enum xp_probe_state s)
{
	return s == XP_PROBE_YES ? "yes" : s == XP_PROBE_NO ? "no" : "unknown";
}

static void line(FILE *f, const char *title, const char *value, const char *reason)
{
	fprintf(f, "  %-26s %-8s %s\n", title, value, reason);
}

/* What a server keeps after setup, and whether this process has it (issue 28 point 13). */
static void server_caps_text(FILE *f, const struct xp_probe_kernel *k)
{
	char keep[256], lack[256], why[640];
	xp_caps_names(k->server_caps, keep, sizeof(keep));
	xp_caps_names(k->server_caps & ~k->server_caps_have, lack, sizeof(lack));
	snprintf(why, sizeof(why), "a server keeps %s after setup and drops the rest (docs/privileges.md); %s%s", keep,
		 *lack ? "this process lacks " : "this process has them all", lack);
	line(f, "server capabilities", *lack ? "no" : "yes", why);
}

static json_object *caps_json(uint64_t set)
{
	char names[512];
	json_object *a = json_object_new_array();
	xp_caps_names(set, names, sizeof(names));
	for (char *save = NULL, *t = strtok_r(names, " ", &save); t; t = strtok_r(NULL, " ", &save))
		json_object_array_add(a, json_object_new_string(t));
	return a;
}

void xp_probe_print_text(FILE *f, const struct xp_probe_kernel *k, const struct xp_probe_iface *ifs, unsigned n)
{
	fprintf(f, "kernel %s\n", k->release);
	for (int i = 0; i < XP_PK_N; i++)
		line(f, k->item[i].title, state_word(k->item[i].state), k->item[i].reason);
	server_caps_text(f, k);
	for (unsigned j = 0; j < n; j++) {
		const struct xp_probe_iface *p = &ifs[j];
		fprintf(f, "interface %s (driver %s, ifindex %d, mtu %u, %u rx / %u tx queues, %s)\n", p->name,
			*p->driver ? p->driver : "-", p->ifindex, p->mtu, p->rx_queues, p->tx_queues,
			!p->up ? "down" : p->carrier ? "up" : "up, no carrier");
		for (int i = 0; i < XP_PI_N; i++)
			line(f, p->item[i].title, state_word(p->item[i].state), p->item[i].reason);
		line(f, "engine auto picks", p->auto_engine, p->auto_reason);
	}
	if (!n)
		fprintf(f, "no interface that is up (give one with --dev IF)\n");
}

static json_object *items_json(const struct xp_probe_item *it, int n)
{
	json_object *o = json_object_new_object();
	for (int i = 0; i < n; i++) {
		json_object *c = json_object_new_object();
		json_object_object_add(c, "supported",
				       it[i].state == XP_PROBE_UNKNOWN ? NULL
								       : json_object_new_boolean(it[i].state == XP_PROBE_YES));
		json_object_object_add(c, "reason", json_object_new_string(it[i].reason));
		json_object_object_add(o, it[i].key, c);
	}
	return o;
}

int xp_probe_print_json(FILE *f, const struct xp_probe_kernel *k, const struct xp_probe_iface *ifs, unsigned n)
{
	json_object *root = json_object_new_object(), *kern = json_object_new_object(), *arr = json_object_new_array();
	json_object_object_add(kern, "release", json_object_new_string(k->release));
	json_object_object_add(kern, "checks", items_json(k->item, XP_PK_N));
	/* keeps: exactly what /proc/PID/status of a running server shows (tests/e2e/91_caps.sh) */
	json_object *sc = json_object_new_object();
	json_object_object_add(sc, "keeps", caps_json(k->server_caps));
	json_object_object_add(sc, "lacking", caps_json(k->server_caps & ~k->server_caps_have));
	json_object_object_add(kern, "server_capabilities", sc);
	json_object_object_add(root, "kernel", kern);
	for (unsigned j = 0; j < n; j++) {
		const struct xp_probe_iface *p = &ifs[j];
		json_object *o = json_object_new_object();
		json_object_object_add(o, "name", json_object_new_string(p->name));
		json_object_object_add(o, "ifindex", json_object_new_int(p->ifindex));
		json_object_object_add(o, "driver", json_object_new_string(p->driver));
		json_object_object_add(o, "mtu", json_object_new_int((int)p->mtu));
		json_object_object_add(o, "rx_queues", json_object_new_int((int)p->rx_queues));
		json_object_object_add(o, "tx_queues", json_object_new_int((int)p->tx_queues));
		json_object_object_add(o, "up", json_object_new_boolean(p->up));
		json_object_object_add(o, "carrier", json_object_new_boolean(p->carrier));
		json_object_object_add(o, "checks", items_json(p->item, XP_PI_N));
		json_object_object_add(o, "auto_engine", json_object_new_string(p->auto_engine));
		json_object_object_add(o, "auto_reason", json_object_new_string(p->auto_reason));
		json_object_array_add(arr, o);
	}
	json_object_object_add(root, "interfaces", arr);
	int r = fprintf(f, "%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE)) < 0 ? -1 : 0;
	json_object_put(root);
	return r;
}
