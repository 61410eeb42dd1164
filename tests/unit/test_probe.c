/*
 * --probe without root: its command-line rules, the shape of its text and
 * JSON reports (json-c parses what it prints), and the netdev netlink query
 * on loopback. What it finds on real veths is tests/e2e/65_probe.sh's.
 */
#include <errno.h>
#include <json-c/json.h>
#include <net/if.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cli/opts.h"
#include "probe/probe.h"
#include "net/xdp_features.h"

static int parse(const char *line, struct xp_opts *o, char *err, size_t errlen)
{
	char buf[256], *argv[16];
	int argc = 0;
	snprintf(buf, sizeof(buf), "%s", line);
	for (char *t = strtok(buf, " "); t && argc < 15; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	return xp_opts_parse(argc, argv, o, err, errlen);
}

static void test_cli_rules(void **state)
{
	static struct xp_opts o;
	char err[256];
	assert_int_equal(parse("xdpperf --probe", &o, err, sizeof(err)), 0);
	assert_int_equal(o.role, XP_ROLE_PROBE);
	assert_int_equal(parse("xdpperf --probe --dev eth1 -J -d", &o, err, sizeof(err)), 0);
	assert_string_equal(o.spec.dev, "eth1");
	assert_true(o.json);
	static const struct {
		const char *line, *msg;
	} bad[] = {
		{ "xdpperf --probe -t 3", "--probe takes only --dev, -J and -d, not -t" },
		{ "xdpperf --probe --engine xsk", "not --engine" },
		{ "xdpperf --probe -4", "not -4" },
		{ "xdpperf --probe -s", "exclude each other" },
		{ "xdpperf -c 198.18.0.1 --probe", "exclude each other" },
		{ "xdpperf --probe --dev", "needs a value" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		int r = parse(bad[i].line, &o, err, sizeof(err));
		if (r != 2 || !strstr(err, bad[i].msg))
			fail_msg("'%s': result %d, message '%s' (want 2 and '%s')", bad[i].line, r, err, bad[i].msg);
	}
}

/* A probe result as the checks would fill it: one of each state. */
static void sample(struct xp_probe_kernel *k, struct xp_probe_iface *p)
{
	memset(k, 0, sizeof(*k));
	memset(p, 0, sizeof(*p));
	snprintf(k->release, sizeof(k->release), "6.18.0-test");
	static const char *const kkeys[XP_PK_N] = { "btf", "privileges", "live_frames", "multi_buffer",
						    "rx_timestamp_kfunc" };
	for (int i = 0; i < XP_PK_N; i++) {
		k->item[i].title = kkeys[i];
		xp_probe_set(&k->item[i], kkeys[i], i == 1 ? XP_PROBE_NO : XP_PROBE_YES, "kernel reason %d", i);
	}
	static const char *const ikeys[XP_PI_N] = { "native_xdp", "live_frames", "xsk_zerocopy", "multi_buffer",
						    "rx_timestamp" };
	for (int i = 0; i < XP_PI_N; i++) {
		p->item[i].title = ikeys[i];
		xp_probe_set(&p->item[i], ikeys[i], (enum xp_probe_state)(i % 3), "iface reason %d \"quoted\"", i);
	}
	snprintf(p->name, sizeof(p->name), "xpt0");
	snprintf(p->driver, sizeof(p->driver), "veth");
	p->ifindex = 7;
	p->mtu = 1500;
	p->rx_queues = p->tx_queues = 2;
	p->up = p->carrier = true;
	snprintf(p->auto_engine, sizeof(p->auto_engine), "xsk");
	snprintf(p->auto_reason, sizeof(p->auto_reason), "live passed over: test");
}

static char *capture_json(const struct xp_probe_kernel *k, const struct xp_probe_iface *p, unsigned n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(xp_probe_print_json(f, k, p, n), 0);
	fclose(f);
	return buf;
}

static void test_json_report(void **state)
{
	struct xp_probe_kernel k;
	struct xp_probe_iface p;
	sample(&k, &p);
	char *s = capture_json(&k, &p, 1);
	json_object *root = json_tokener_parse(s), *v, *c;
	assert_non_null(root);
	assert_true(json_object_object_get_ex(root, "kernel", &v));
	assert_true(json_object_object_get_ex(v, "checks", &c));
	assert_int_equal(json_object_object_length(c), XP_PK_N);
	json_object *priv = json_object_object_get(c, "privileges");
	assert_false(json_object_get_boolean(json_object_object_get(priv, "supported")));
	assert_string_equal(json_object_get_string(json_object_object_get(priv, "reason")), "kernel reason 1");
	assert_true(json_object_object_get_ex(root, "interfaces", &v));
	assert_int_equal(json_object_array_length(v), 1);
	json_object *i0 = json_object_array_get_idx(v, 0);
	assert_string_equal(json_object_get_string(json_object_object_get(i0, "name")), "xpt0");
	assert_string_equal(json_object_get_string(json_object_object_get(i0, "auto_engine")), "xsk");
	c = json_object_object_get(i0, "checks");
	assert_int_equal(json_object_object_length(c), XP_PI_N);
	/* no -> false, yes -> true, unknown -> null */
	json_object *sup;
	assert_true(json_object_object_get_ex(json_object_object_get(c, "native_xdp"), "supported", &sup));
	assert_int_equal(json_object_get_type(sup), json_type_boolean);
	assert_false(json_object_get_boolean(sup));
	assert_true(json_object_get_boolean(json_object_object_get(json_object_object_get(c, "live_frames"), "supported")));
	assert_true(json_object_object_get_ex(json_object_object_get(c, "xsk_zerocopy"), "supported", &sup));
	assert_null(sup);
	assert_string_equal(json_object_get_string(json_object_object_get(json_object_object_get(c, "xsk_zerocopy"),
									      "reason")),
			    "iface reason 2 \"quoted\"");
	json_object_put(root);
	free(s);
	/* No interface: an empty list, still one document. */
	s = capture_json(&k, NULL, 0);
	root = json_tokener_parse(s);
	assert_non_null(root);
	assert_int_equal(json_object_array_length(json_object_object_get(root, "interfaces")), 0);
	json_object_put(root);
	free(s);
}

static void test_text_report(void **state)
{
	struct xp_probe_kernel k;
	struct xp_probe_iface p;
	sample(&k, &p);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	xp_probe_print_text(f, &k, &p, 1);
	fclose(f);
	assert_non_null(strstr(buf, "kernel 6.18.0-test\n"));
	assert_non_null(strstr(buf, "interface xpt0 (driver veth, ifindex 7, mtu 1500, 2 rx / 2 tx queues, up)\n"));
	assert_non_null(strstr(buf, "  privileges                 no       kernel reason 1\n"));
	assert_non_null(strstr(buf, "  xsk_zerocopy               unknown  iface reason 2"));
	assert_non_null(strstr(buf, "  engine auto picks          xsk      live passed over: test\n"));
	free(buf);
}

/* The netdev family on loopback: answered (Linux 6.3+) with no native XDP, or not there at all. */
static void test_features_of_loopback(void **state)
{
	struct xp_xdp_features f;
	char err[256] = "";
	int lo = (int)if_nametoindex("lo");
	assert_true(lo > 0);
	assert_int_equal(xp_xdp_features_get(lo, &f, err, sizeof(err)), 0);
	if (!f.known) {
		print_message("this kernel has no netdev netlink family\n");
		return;
	}
	assert_int_equal(f.xdp & XP_XDP_ACT_BASIC, 0);
	assert_int_equal(f.xdp & XP_XDP_ACT_XSK_ZEROCOPY, 0);
	/* An ifindex nobody has: the kernel's error, with a message. */
	assert_int_equal(xp_xdp_features_get(0x7ffffff0, &f, err, sizeof(err)), -ENODEV);
	assert_false(f.known);
	assert_non_null(strstr(err, "no answer"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cli_rules),
		cmocka_unit_test(test_json_report),
		cmocka_unit_test(test_text_report),
		cmocka_unit_test(test_features_of_loopback),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
