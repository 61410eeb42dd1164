/*
 * The server's per-flow counting wired to tests (issue 26): the start
 * request's "flows" (strict), the first-fit pool of flow_acct's 1024 entries
 * shared by concurrent tests (a refusal when too few are free, entries back
 * on release), and the streams -> entries map every stream of a flow lands in.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "proto/messages.h"
#include "server/state.h"
#include "bpf/lib/stamp.h"
#include "frame/flow_streams.h"
#include "meas/flow_pool.h"
#include "proto/flow_figs.h"
#include "report/report.h"

static int decode(const char *line, struct xp_test *t, char *err, size_t errlen)
{
	struct json_object *o = json_tokener_parse(line);
	assert_non_null(o);
	err[0] = '\0';
	int r = xp_test_from_json(o, t, err, errlen);
	json_object_put(o);
	xp_test_release(t);
	return r;
}

#define START "{\"op\":\"start\",\"version\":1,\"port_lo\":63000,\"port_hi\":63015"

static void test_request_flows(void **state)
{
	(void)state;
	struct xp_test t = { .version = 1, .kind = XP_TEST_STREAM, .engine = "xsk", .family = AF_INET,
			     .port_lo = 7000, .port_hi = 7000, .duration = 2, .frame_size = 64,
			     .flows = { .nflows = 3, .threads = 2 } }, u;
	char err[256];
	struct json_object *o = xp_test_to_json(&t);
	assert_int_equal(xp_test_from_json(o, &u, err, sizeof(err)), 0);
	json_object_put(o);
	assert_int_equal(u.flows.nflows, 3);
	assert_int_equal(u.flows.threads, 2);
	/* Without flows the request has no member at all (as before). */
	t.flows.nflows = 0;
	o = xp_test_to_json(&t);
	assert_false(json_object_object_get_ex(o, "flows", NULL));
	json_object_put(o);
	assert_int_equal(decode(START "}", &u, err, sizeof(err)), 0);
	assert_int_equal(u.flows.nflows, 0);
	assert_int_equal(decode(START ",\"flows\":{\"nflows\":256,\"threads\":4}}", &u, err, sizeof(err)), 0);
	assert_int_equal(u.flows.nflows, 256);
	/* Strict: out of range, wrong types, missing or unknown members. */
	const char *bad[] = {
		START ",\"flows\":{\"nflows\":257,\"threads\":1}}", START ",\"flows\":{\"nflows\":0,\"threads\":1}}",
		START ",\"flows\":{\"nflows\":2}}",                 START ",\"flows\":{\"nflows\":2,\"threads\":0}}",
		START ",\"flows\":{\"nflows\":2.5,\"threads\":1}}", START ",\"flows\":{\"nflows\":\"2\",\"threads\":1}}",
		START ",\"flows\":[2,1]}",                          START ",\"flows\":{\"nflows\":2,\"threads\":1,\"x\":1}}",
		START ",\"flows\":{\"nflows\":-1,\"threads\":1}}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(decode(bad[i], &u, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "flows") ? err : strstr(err, "nflows") ? err : strstr(err, "threads"));
		assert_null(strchr(err, '\n'));
	}
}

/* The key of flows without stamps in the start request: written and read
 * back; read strictly (names once, every key exactly "flow" and the named
 * fields, in range, below nflows; both members or neither). */
static void test_request_keys(void **state)
{
	(void)state;
	struct xp_test_key k[2] = { { .flow = 0, .dscp = 0, .sport = 30000 }, { .flow = 1, .dscp = 46, .sport = 30000 } };
	struct xp_test t = { .version = 1, .kind = XP_TEST_STREAM, .engine = "xsk", .family = AF_INET,
			     .port_lo = 7000, .port_hi = 7000, .duration = 2, .frame_size = 64 }, u;
	char err[256];
	t.flows.nflows = 2;
	t.flows.threads = 1;
	t.flows.key_mask = XP_KEY_ON | XP_KEY_DSCP | XP_KEY_SPORT;
	t.flows.nkeys = 2;
	t.flows.keys = k;
	struct json_object *o = xp_test_to_json(&t);
	assert_int_equal(xp_test_from_json(o, &u, err, sizeof(err)), 0);
	json_object_put(o);
	assert_int_equal(u.flows.key_mask, t.flows.key_mask);
	assert_int_equal(u.flows.nkeys, 2);
	assert_memory_equal(u.flows.keys, k, sizeof(k));
	xp_test_release(&u);
	assert_null(u.flows.keys);
	/* No field, one flow: XP_KEY_ON alone; src as a 32-bit number. */
	assert_int_equal(decode(START ",\"flows\":{\"nflows\":1,\"threads\":1,\"key\":[],\"keys\":[{\"flow\":0}]}}", &u,
			    err, sizeof(err)), 0);
	assert_int_equal(decode(START ",\"flows\":{\"nflows\":1,\"threads\":1,\"key\":[\"src\"],\"keys\":"
				      "[{\"flow\":0,\"src\":4294967295}]}}", &u, err, sizeof(err)), 0);
#define F(x) START ",\"flows\":{\"nflows\":2,\"threads\":1," x "}}"
	const char *bad[] = {
		F("\"key\":[\"dscp\"]"),                                         /* keys missing */
		F("\"key\":[\"dscp\",\"dscp\"],\"keys\":[{\"flow\":0,\"dscp\":1}]"),  /* a name twice */
		F("\"key\":[\"ttl\"],\"keys\":[{\"flow\":0,\"ttl\":1}]"),         /* not a key field */
		F("\"key\":[\"dscp\"],\"keys\":[{\"flow\":0,\"dscp\":64}]"),      /* out of range */
		F("\"key\":[\"dscp\"],\"keys\":[{\"flow\":2,\"dscp\":1}]"),       /* no such flow */
		F("\"key\":[\"dscp\"],\"keys\":[{\"flow\":0}]"),                  /* a field missing */
		F("\"key\":[\"dscp\"],\"keys\":[{\"flow\":0,\"dscp\":1,\"sport\":2}]"), /* one not named */
		F("\"key\":[\"dscp\"],\"keys\":[]"),                               /* none */
		F("\"key\":[\"sport\"],\"keys\":[{\"flow\":0,\"sport\":65536}]"),
		F("\"key\":\"dscp\",\"keys\":[{\"flow\":0,\"dscp\":1}]"),          /* not an array */
	};
#undef F
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(decode(bad[i], &u, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "flows") ? err : strstr(err, "field") ? err : NULL);
		assert_null(strchr(err, '\n'));
	}
}

static void test_pool_first_fit(void **state)
{
	(void)state;
	static struct xp_flow_pool p;
	memset(&p, 0, sizeof(p));
	assert_int_equal(xp_flow_pool_nfree(&p), XP_FLOW_POOL_SIZE);
	assert_int_equal(xp_flow_pool_alloc(&p, 0), -1);
	assert_int_equal(xp_flow_pool_alloc(&p, XP_FLOW_POOL_SIZE + 1), -1);
	int a = xp_flow_pool_alloc(&p, 256), b = xp_flow_pool_alloc(&p, 256), c = xp_flow_pool_alloc(&p, 256);
	int d = xp_flow_pool_alloc(&p, 200);
	assert_int_equal(a, 0);
	assert_int_equal(b, 256);
	assert_int_equal(c, 512);
	assert_int_equal(d, 768);
	/* 56 left: a 57-flow test is refused, a 56-flow one fits. */
	assert_int_equal(xp_flow_pool_nfree(&p), 56);
	assert_int_equal(xp_flow_pool_alloc(&p, 57), -1);
	/* Freeing b leaves a hole of 256 the next test takes first (first fit). */
	xp_flow_pool_free(&p, (unsigned)b, 256);
	assert_int_equal(xp_flow_pool_largest(&p), 256);
	assert_int_equal(xp_flow_pool_alloc(&p, 10), 256);
	assert_int_equal(xp_flow_pool_alloc(&p, 246), 266);
	assert_int_equal(xp_flow_pool_alloc(&p, 57), -1);
	assert_int_equal(xp_flow_pool_alloc(&p, 56), 968);
	assert_int_equal(xp_flow_pool_nfree(&p), 0);
	/* Fragmented: 2 + 2 free, not in one run: 3 is refused. */
	xp_flow_pool_free(&p, 0, 2);
	xp_flow_pool_free(&p, 300, 2);
	assert_int_equal(xp_flow_pool_nfree(&p), 4);
	assert_int_equal(xp_flow_pool_largest(&p), 2);
	assert_int_equal(xp_flow_pool_alloc(&p, 3), -1);
	/* Freeing past the end is clipped, not a write out of bounds. */
	xp_flow_pool_free(&p, 1000, 500);
	assert_int_equal(xp_flow_pool_nfree(&p), 4 + 24);
	xp_flow_pool_free(&p, 5000, 1);
}

/* Every stream of the test maps to base + its flow + 1, per flow_streams.h's rule. */
static void test_stream_map(void **state)
{
	(void)state;
	struct { unsigned nflows, threads; } cases[] = { { 2, 1 }, { 2, 4 }, { 100, 2 }, { 200, 2 }, { 256, 8 }, { 1, 1 } };
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		unsigned n = cases[k].nflows, T = cases[k].threads, base = 700 - n;
		__u32 se[XP_STAMP_MAX_STREAMS] = { 0 };
		unsigned per[256] = { 0 };
		srv_meas_flow_map(base, n, T, se);
		unsigned ns = xp_flow_nstreams(n, T);
		for (unsigned st = 0; st < XP_STAMP_MAX_STREAMS; st++) {
			if (st >= ns) {
				assert_int_equal(se[st], 0);
				continue;
			}
			assert_in_range(se[st], base + 1, base + n);
			per[se[st] - base - 1]++;
		}
		/* Each (flow, thread) a sender stamps with lands in that flow. */
		for (unsigned f = 0; f < n; f++)
			for (unsigned t = 0; t < T; t++) {
				unsigned st = xp_flow_stream_of(f, t, n, T);
				if (st != XP_FLOW_NO_STREAM)
					assert_int_equal(se[st], base + f + 1);
			}
		for (unsigned f = 0; f < n; f++)
			assert_int_equal(per[f], n * T <= 256 ? T : 1);
	}
}

/* The stop reply's per-flow figures: a round trip keeps every count, the
 * histogram as non-zero buckets; a hostile reply is refused in one line. */
static void test_flow_figs_json(void **state)
{
	(void)state;
	static struct xp_flow_acct f[2], g[2];
	memset(f, 0, sizeof(f));
	f[0] = (struct xp_flow_acct){ .frames = 1000, .bytes = 64000, .recv = 990, .dup = 1, .reordered = 2,
				      .expected = 1000, .lat_n = 3, .lat_sum = 300, .lat_nmin = ~50ull, .lat_max = 150 };
	f[0].hist[4] = 1;
	f[0].hist[9] = 2;
	struct json_object *a = xp_flow_acct_to_json(f, 2);
	char err[256];
	assert_int_equal(xp_flow_acct_from_json(a, g, 2, err, sizeof(err)), 0);
	assert_memory_equal(&f[0], &g[0], sizeof(f[0]));
	assert_memory_equal(&f[1], &g[1], sizeof(f[1]));
	struct json_object *h;
	json_object_object_get_ex(json_object_array_get_idx(a, 0), "hist", &h);
	assert_int_equal(json_object_array_length(h), 2); /* non-zero buckets only */
	/* p50 from the flow's buckets: bucket 9 spans slot buckets 36..39, its top edge (ticks < 64 are exact). */
	static struct xp_lat_hist lh;
	xp_flow_acct_hist(&g[0], &lh);
	assert_int_equal(lh.n, 3);
	assert_true(xp_lat_quantile_ns(&lh, 0.5) == 40 * XP_STAMP_TICK_NS);
	assert_true(xp_lat_quantile_ns(&lh, 0.01) == 20 * XP_STAMP_TICK_NS);
	/* The wrong count, then malformed members. */
	assert_int_equal(xp_flow_acct_from_json(a, g, 3, err, sizeof(err)), -1);
	assert_null(strchr(err, '\n'));
	json_object_put(a);
	const char *bad[] = {
		"[{\"frames\":1}]",
		"[{\"frames\":1,\"bytes\":1,\"recv\":2,\"dup\":0,\"reordered\":0,\"expected\":0,\"lat_n\":0,\"lat_sum\":0,\"lat_min\":0,\"lat_max\":0,\"hist\":[]}]",
		"[{\"frames\":1,\"bytes\":1,\"recv\":1,\"dup\":0,\"reordered\":0,\"expected\":0,\"lat_n\":0,\"lat_sum\":0,\"lat_min\":0,\"lat_max\":0,\"hist\":[[224,1]]}]",
		"[{\"frames\":1,\"bytes\":1,\"recv\":1,\"dup\":0,\"reordered\":0,\"expected\":0,\"lat_n\":0,\"lat_sum\":0,\"lat_min\":0,\"lat_max\":0,\"hist\":[[3,1],[2,1]]}]",
		"[{\"frames\":-1,\"bytes\":1,\"recv\":0,\"dup\":0,\"reordered\":0,\"expected\":0,\"lat_n\":0,\"lat_sum\":0,\"lat_min\":0,\"lat_max\":0,\"hist\":[]}]",
		"[{\"frames\":1.5,\"bytes\":1,\"recv\":0,\"dup\":0,\"reordered\":0,\"expected\":0,\"lat_n\":0,\"lat_sum\":0,\"lat_min\":0,\"lat_max\":0,\"hist\":[]}]",
		"{}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct json_object *o = json_tokener_parse(bad[i]);
		assert_non_null(o);
		assert_int_equal(xp_flow_acct_from_json(o, g, 1, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "flow"));
		json_object_put(o);
	}
}

/* The report: -J has every flow with its loss and latency, the text table
 * the flows with most loss first, --flow-top rows, the rest in one row. */
static void test_flow_report(void **state)
{
	(void)state;
	static struct xp_flow_result fr[3];
	memset(fr, 0, sizeof(fr));
	strcpy(fr[0].name, "vlan100");
	fr[0].tx_frames = 1000, fr[0].tx_bytes = 64000, fr[0].rx_known = true;
	fr[0].rx = (struct xp_flow_acct){ .frames = 1000, .bytes = 64000, .recv = 1000, .lat_n = 2, .lat_sum = 60,
					  .lat_nmin = ~20ull, .lat_max = 40 };
	fr[0].rx.hist[4] = 1, fr[0].rx.hist[9] = 1;
	strcpy(fr[1].name, "vlan200");
	fr[1].tx_frames = 1000, fr[1].rx_known = true;
	fr[1].rx = (struct xp_flow_acct){ .frames = 900, .recv = 900 };
	fr[2].tx_frames = 500, fr[2].rx_known = true; /* unnamed: "flow 3" */
	fr[2].rx = (struct xp_flow_acct){ .frames = 480, .recv = 480 };
	struct xp_summary s = { .nflows = 3, .flows = fr, .flow_top = 1 };
	struct json_object *a = xp_flows_json(&s), *o, *v, *l;
	assert_int_equal(json_object_array_length(a), 3);
	o = json_object_array_get_idx(a, 1);
	assert_true(json_object_object_get_ex(o, "name", &v));
	assert_string_equal(json_object_get_string(v), "vlan200");
	assert_true(json_object_object_get_ex(o, "loss", &v));
	assert_int_equal(json_object_get_int64(v), 100);
	assert_true(json_object_object_get_ex(o, "frames_rx", &v));
	assert_int_equal(json_object_get_int64(v), 900);
	assert_false(json_object_object_get_ex(o, "latency", NULL)); /* none timed: no figures, not zeros */
	o = json_object_array_get_idx(a, 0);
	assert_true(json_object_object_get_ex(o, "latency", &l));
	assert_true(json_object_object_get_ex(l, "minimum_ns", &v));
	assert_true(json_object_get_double(v) == 20.0 * XP_STAMP_TICK_NS);
	assert_true(json_object_object_get_ex(l, "average_ns", &v));
	assert_true(json_object_get_double(v) == 30.0 * XP_STAMP_TICK_NS);
	assert_true(json_object_object_get_ex(l, "p99_ns", &v));
	assert_true(json_object_get_double(v) == 40.0 * XP_STAMP_TICK_NS);
	json_object_put(a);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct xp_report r = { .out = f };
	xp_report_flows_text(&r, &s);
	fclose(f);
	/* vlan200 (100 lost) first and alone; vlan100 and flow 3 in the rest's row (20 lost, 1500 sent). */
	assert_non_null(strstr(buf, "vlan200"));
	assert_null(strstr(buf, "vlan100"));
	assert_non_null(strstr(buf, "(2 others)"));
	assert_non_null(strstr(buf, "10.000%"));
	char *rest = strstr(buf, "(2 others)");
	unsigned long tx, rx, lost;
	assert_int_equal(sscanf(rest + strlen("(2 others)"), "%lu %lu %lu", &tx, &rx, &lost), 3);
	assert_int_equal(tx, 1500);
	assert_int_equal(rx, 1480);
	assert_int_equal(lost, 20);
	free(buf);
	/* Two rows: one flow left over, "(1 other)", not "(1 others)". */
	buf = NULL;
	f = open_memstream(&buf, &len);
	r.out = f;
	s.flow_top = 2;
	xp_report_flows_text(&r, &s);
	fclose(f);
	assert_non_null(strstr(buf, "(1 other) "));
	assert_null(strstr(buf, "others"));
	free(buf);
	/* No flows: nothing at all (the report of a test without flows is as before). */
	buf = NULL;
	f = open_memstream(&buf, &len);
	r.out = f;
	s.nflows = 0;
	xp_report_flows_text(&r, &s);
	fclose(f);
	assert_int_equal(len, 0);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_flows),
		cmocka_unit_test(test_request_keys),
		cmocka_unit_test(test_pool_first_fit),
		cmocka_unit_test(test_stream_map),
		cmocka_unit_test(test_flow_figs_json),
		cmocka_unit_test(test_flow_report),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
