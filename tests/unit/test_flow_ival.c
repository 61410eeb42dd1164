/*
 * Per-flow figures per interval (issue 26 point 5): the compact form an
 * interval sample's reply carries (round trip, strict refusals), the
 * differences of two cumulative readings and their sum over intervals (the
 * end's figures), the worst case's size against the channel's limit (and a
 * line that long through the channel), and the interval's report: JSON with
 * every flow, text with the most loss first and the rest summed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/types.h>

#include "bpf/lib/stamp.h"
#include "proto/channel.h"
#include "proto/flow_figs.h"
#include "report/report.h"

static void fill(struct xp_flow_acct *f, uint64_t k)
{
	memset(f, 0, sizeof(*f));
	f->frames = 100 * k + 3, f->bytes = 6400 * k + 192, f->recv = 100 * k, f->dup = 3, f->reordered = k;
	f->lat_n = 90 * k, f->lat_sum = 90 * k * 1000, f->lat_max = 4000 + k;
	f->hist[10] = (__u32)(40 * k), f->hist[50] = (__u32)(50 * k);
}

static void test_compact_round_trip(void **state)
{
	(void)state;
	static struct xp_flow_acct a[3], b[3];
	char err[200];
	for (unsigned i = 0; i < 3; i++)
		fill(&a[i], i + 1);
	struct json_object *j = xp_flow_acct_to_compact(a, 3);
	/* Through text, as on the wire. */
	struct json_object *o = json_tokener_parse(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
	assert_int_equal(xp_flow_acct_from_compact(o, b, 3, err, sizeof(err)), 0);
	for (unsigned i = 0; i < 3; i++) {
		assert_int_equal(b[i].frames, a[i].frames);
		assert_int_equal(b[i].bytes, a[i].bytes);
		assert_int_equal(b[i].recv, a[i].recv);
		assert_int_equal(b[i].dup, a[i].dup);
		assert_int_equal(b[i].reordered, a[i].reordered);
		assert_int_equal(b[i].lat_n, a[i].lat_n);
		assert_int_equal(b[i].lat_sum, a[i].lat_sum);
		assert_int_equal(b[i].lat_max, a[i].lat_max);
		assert_memory_equal(b[i].hist, a[i].hist, sizeof(a[i].hist));
	}
	/* A count other than asked for. */
	assert_int_equal(xp_flow_acct_from_compact(o, b, 2, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not 2 flows"));
	json_object_put(o);
	json_object_put(j);
	/* Malformed flows: each refused with the flow's number. */
	static const char *const bad[] = {
		"[{}]",                                   /* not an array */
		"[[1,1,1,0,0,0,0]]",                      /* too few counts */
		"[[1,1,1,0,0,0,0,0,5]]",                  /* a bucket without its count */
		"[[1,1,2,0,0,0,0,0]]",                    /* received more than arrived */
		"[[5,1,2,0,0,3,0,0]]",                    /* timed more than received */
		"[[5,1,2,0,0,1,0,-1]]",                   /* negative */
		"[[5,1,2,0,0,1,0,1.5]]",                  /* not an integer */
		"[[5,1,2,0,0,1,0,1,\"3\",1]]",            /* a bucket as a string */
		"[[5,1,2,0,0,1,0,1,224,1]]",              /* bucket out of range */
		"[[5,1,2,0,0,1,0,1,7,1,7,1]]",            /* buckets not ascending */
		"[[5,1,2,0,0,1,0,1,7,0]]",                /* an empty bucket sent */
		"[[5,1,2,0,0,1,0,1,7,4294967296]]",       /* a count beyond a bucket's */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		o = json_tokener_parse(bad[i]);
		assert_non_null(o);
		err[0] = '\0';
		assert_int_equal(xp_flow_acct_from_compact(o, b, 1, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "flow 0"));
		json_object_put(o);
	}
}

/* Differences of cumulative readings sum to the last reading: the intervals to the end. */
static void test_delta_sums(void **state)
{
	(void)state;
	static struct xp_flow_acct r[4], d, sum;
	memset(&r[0], 0, sizeof(r[0]));
	for (unsigned k = 1; k < 4; k++)
		fill(&r[k], k * k);
	memset(&sum, 0, sizeof(sum));
	for (unsigned k = 1; k < 4; k++) {
		xp_flow_acct_delta(&r[k], &r[k - 1], &d);
		assert_int_equal(d.lat_nmin, 0);            /* no interval minimum */
		assert_int_equal(d.lat_max, r[k].lat_max);  /* the cumulative maximum, a bound */
		xp_flow_acct_add(&sum, &d);
	}
	assert_int_equal(sum.frames, r[3].frames);
	assert_int_equal(sum.bytes, r[3].bytes);
	assert_int_equal(sum.recv, r[3].recv);
	assert_int_equal(sum.lat_n, r[3].lat_n);
	assert_int_equal(sum.lat_sum, r[3].lat_sum);
	assert_int_equal(sum.hist[10], r[3].hist[10]);
	assert_int_equal(sum.hist[50], r[3].hist[50]);
	/* The second interval: 4 - 1 = 3 times the unit. */
	xp_flow_acct_delta(&r[2], &r[1], &d);
	assert_int_equal(d.recv, 300);
	assert_int_equal(d.frames, 300);
	assert_int_equal(d.dup, 0);
	assert_int_equal(d.hist[10], 120);
	/* A count that went backwards (never from a server, but a hostile one): 0, not a wrap. */
	xp_flow_acct_delta(&r[1], &r[2], &d);
	assert_int_equal(d.frames, 0);
	assert_int_equal(d.hist[50], 0);
}

/* 256 flows with every count at its largest and every bucket used: the reply still fits the channel. */
static void test_worst_case_fits(void **state)
{
	(void)state;
	unsigned n = 256;
	struct xp_flow_acct *f = calloc(n, sizeof(*f));
	assert_non_null(f);
	for (unsigned i = 0; i < n; i++) {
		f[i].frames = f[i].bytes = f[i].recv = f[i].dup = f[i].reordered = INT64_MAX;
		f[i].expected = f[i].lat_n = f[i].lat_sum = f[i].lat_max = INT64_MAX;
		f[i].lat_nmin = ~1ull;
		for (unsigned b = 0; b < XP_FLOW_LAT_BUCKETS; b++)
			f[i].hist[b] = UINT32_MAX;
	}
	struct json_object *c = xp_flow_acct_to_compact(f, n), *s = xp_flow_acct_to_json(f, n);
	size_t lc = strlen(json_object_to_json_string_ext(c, JSON_C_TO_STRING_PLAIN));
	size_t ls = strlen(json_object_to_json_string_ext(s, JSON_C_TO_STRING_PLAIN));
	printf("256 flows, worst case: compact %zu bytes, named (stop reply) %zu bytes, limit %u\n", lc, ls,
	       XP_CTRL_MAX_REPLY);
	/* Room besides them for the rest of a reply (counters, 256 streams' figures, an interval). */
	assert_true(lc + 256 * 1024 < XP_CTRL_MAX_REPLY);
	assert_true(ls + 256 * 1024 < XP_CTRL_MAX_REPLY);
	assert_true(lc < XP_CTRL_MAX_MSG * 16); /* and the compact form is compact */
	assert_true(lc < ls);
	json_object_put(c);
	json_object_put(s);
	free(f);
}

/* A line of a megabyte: sent in blocking mode, taken by a reader whose limit is the client's. */
static void test_long_line_through_channel(void **state)
{
	(void)state;
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	size_t n = 1u << 20;
	char *line = malloc(n + 1);
	assert_non_null(line);
	memset(line, ' ', n);
	memcpy(line, "{\"op\":\"result\",\"x\":\"", 20);
	memset(line + 20, 'a', n - 20 - 2);
	memcpy(line + n - 2, "\"}", 2);
	line[n] = '\0';
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct xp_ctrl w;
		close(sv[0]); /* the reader's end is the parent's alone: its close ends a send that waits */
		xp_ctrl_init(&w, sv[1]);
		_exit(xp_ctrl_send_line(&w, line) ? 1 : 0);
	}
	struct xp_ctrl c;
	struct json_object *m = NULL;
	xp_ctrl_init(&c, sv[0]);
	xp_ctrl_set_max_msg(&c, XP_CTRL_MAX_REPLY);
	assert_int_equal(xp_ctrl_recv(&c, 5000, &m), 1);
	assert_string_equal(xp_json_str(m, "op", ""), "result");
	assert_int_equal(strlen(xp_json_str(m, "x", "")), n - 22);
	json_object_put(m);
	int st = -1;
	waitpid(pid, &st, 0);
	assert_int_equal(st, 0);
	xp_ctrl_free(&c);
	/* The same line to a reader with the default (a server's) limit: refused, not buffered on. */
	pid = fork();
	if (pid == 0) {
		struct xp_ctrl w;
		close(sv[0]); /* the reader's end is the parent's alone: its close ends a send that waits */
		xp_ctrl_init(&w, sv[1]);
		_exit(xp_ctrl_send_line(&w, line) ? 1 : 0);
	}
	xp_ctrl_init(&c, sv[0]);
	assert_int_equal(xp_ctrl_recv(&c, 5000, &m), -EPROTO);
	assert_true(c.cap <= XP_CTRL_MAX_MSG);
	xp_ctrl_free(&c);
	close(sv[0]);
	close(sv[1]);
	waitpid(pid, &st, 0);
	free(line);
}

static struct xp_flow_ival iv[3];

static void three_flows(struct xp_period *p)
{
	memset(iv, 0, sizeof(iv));
	memset(p, 0, sizeof(*p));
	strcpy(iv[0].name, "ef");
	iv[0].tx_frames = 1000, iv[0].tx_bytes = 64000, iv[0].rx_known = true;
	iv[0].rx = (struct xp_flow_acct){ .frames = 1000, .bytes = 64000, .recv = 1000, .lat_n = 2, .lat_sum = 60,
					  .lat_max = 400 };
	iv[0].rx.hist[4] = 1, iv[0].rx.hist[9] = 1;
	strcpy(iv[1].name, "be");
	iv[1].tx_frames = 1000, iv[1].rx_known = true;
	iv[1].rx = (struct xp_flow_acct){ .frames = 700, .recv = 700 };
	iv[2].tx_frames = 500, iv[2].rx_known = true; /* unnamed; frames of the last interval arrived in this one */
	iv[2].rx = (struct xp_flow_acct){ .frames = 510, .recv = 510 };
	p->flows = iv;
	p->nflows = 3;
	p->flow_top = 1;
	p->figures = XP_FIGS_FRAMES;
	p->interval = true;
	p->t1 = 1;
}

static void test_ival_report(void **state)
{
	(void)state;
	struct xp_period p;
	three_flows(&p);
	struct json_object *o = xp_period_json(&p), *a, *f, *v, *l;
	assert_true(json_object_object_get_ex(o, "flows", &a));
	assert_int_equal(json_object_array_length(a), 3);
	f = json_object_array_get_idx(a, 1);
	assert_true(json_object_object_get_ex(f, "name", &v));
	assert_string_equal(json_object_get_string(v), "be");
	assert_true(json_object_object_get_ex(f, "loss", &v));
	assert_int_equal(json_object_get_int64(v), 300);
	assert_true(json_object_object_get_ex(f, "frames_tx", &v));
	assert_int_equal(json_object_get_int64(v), 1000);
	assert_false(json_object_object_get_ex(f, "latency", NULL));
	f = json_object_array_get_idx(a, 2);
	assert_true(json_object_object_get_ex(f, "name", &v));
	assert_string_equal(json_object_get_string(v), "flow 3");
	assert_true(json_object_object_get_ex(f, "loss", &v));
	assert_int_equal(json_object_get_int64(v), -10); /* in flight at the last edge: below 0, said as it is */
	f = json_object_array_get_idx(a, 0);
	assert_true(json_object_object_get_ex(f, "latency", &l));
	assert_true(json_object_object_get_ex(l, "timed", &v));
	assert_int_equal(json_object_get_int64(v), 2);
	assert_true(json_object_object_get_ex(l, "average_ns", &v));
	assert_true(json_object_get_double(v) == 30.0 * XP_STAMP_TICK_NS);
	assert_true(json_object_object_get_ex(l, "p50_ns", &v));
	assert_true(json_object_get_double(v) > 0);
	assert_false(json_object_object_get_ex(l, "minimum_ns", NULL)); /* not known of an interval */
	json_object_put(o);

	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct xp_report r = { .out = out };
	xp_report_flows_ival_text(&r, &p);
	fclose(out);
	/* "be" (300 lost) alone; ef and flow 3 summed: 1500 sent, 1510 received, -10 lost. */
	assert_non_null(strstr(buf, "flow (most loss)"));
	assert_non_null(strstr(buf, "be"));
	assert_null(strstr(buf, "ef "));
	char *rest = strstr(buf, "(2 others)");
	assert_non_null(rest);
	unsigned long tx, rx;
	long lost;
	assert_int_equal(sscanf(rest + strlen("(2 others)"), "%lu %lu %ld", &tx, &rx, &lost), 3);
	assert_int_equal(tx, 1500);
	assert_int_equal(rx, 1510);
	assert_int_equal(lost, -10);
	free(buf);

	/* Without flows: no "flows", no table (a test without flows reports as before). */
	p.flows = NULL;
	p.nflows = 0;
	o = xp_period_json(&p);
	assert_false(json_object_object_get_ex(o, "flows", NULL));
	json_object_put(o);
	buf = NULL;
	out = open_memstream(&buf, &len);
	r.out = out;
	xp_report_flows_ival_text(&r, &p);
	fclose(out);
	assert_int_equal(len, 0);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compact_round_trip),
		cmocka_unit_test(test_delta_sums),
		cmocka_unit_test(test_worst_case_fits),
		cmocka_unit_test(test_long_line_through_channel),
		cmocka_unit_test(test_ival_report),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
