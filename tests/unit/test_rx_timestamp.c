/*
 * --rx-timestamp (issue 10, item 5): the option, the client's choice and
 * what it asks the server, its reading of the server's answer (refusing
 * hw that the server did not take up), the end's verdict, and the report
 * naming the clock and saying the fallback, in text and -J. The server's
 * side on a real veth is tests/e2e/84_rx_timestamp.sh; the BPF side (a
 * frame without a NIC time counted, not timed) tests/bpf/test_measure.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "cli/options.h"
#include "tests/unit/cli_parse.h"
#include "client/measure.h"
#include "report/report.h"


static void test_option(void **state)
{
	static struct xp_opts o;
	char err[256];
	assert_int_equal(parse("xdpperf -c 198.18.0.2", &o, err, sizeof(err)), 0);
	assert_int_equal(o.spec.rx_ts, XP_RXTS_SW);
	assert_false(o.spec.rx_ts_set);
	assert_int_equal(parse("xdpperf -c 198.18.0.2 --clock tai --rx-timestamp hw", &o, err, sizeof(err)), 0);
	assert_int_equal(o.spec.rx_ts, XP_RXTS_HW);
	assert_int_equal(parse("xdpperf -c 198.18.0.2 --clock tai --rx-timestamp auto", &o, err, sizeof(err)), 0);
	assert_int_equal(o.spec.rx_ts, XP_RXTS_AUTO);
	assert_int_equal(parse("xdpperf -c 198.18.0.2 --rx-timestamp sw", &o, err, sizeof(err)), 0);
	assert_int_equal(o.spec.rx_ts, XP_RXTS_SW);
	assert_true(o.spec.rx_ts_set);
	/* A word it does not know: usage, naming the three. */
	assert_int_equal(parse("xdpperf -c 198.18.0.2 --rx-timestamp ptp", &o, err, sizeof(err)), XP_EXIT_USAGE);
	assert_non_null(strstr(err, "'ptp'"));
	assert_non_null(strstr(err, "auto"));
	assert_null(strchr(err, '\n'));
	/* The server has no use for it (the client asks, per test). */
	assert_int_equal(parse("xdpperf -s --rx-timestamp hw", &o, err, sizeof(err)), XP_EXIT_USAGE);
}

static void setup_cfg(struct xp_engine_cfg *ec)
{
	memset(ec, 0, sizeof(*ec));
	struct frame_spec *s = &ec->frames.tmpl;
	assert_int_equal(xp_addr_parse("198.18.0.1", &s->src), 0);
	assert_int_equal(xp_addr_parse("198.18.0.2", &s->dst), 0);
	s->l4_proto = IPPROTO_UDP;
	s->sport = 10000;
	s->dport = 63000;
	s->frame_size = 64;
}

/* The client's choice: hw and auto only with TAI stamps, never with --rtt;
 * what the request then carries. */
static void test_choice(void **state)
{
	static struct xp_opts o;
	struct xp_engine_cfg ec;
	struct xp_cmeas m;
	struct xp_test_stamp st;
	char err[256];

	assert_int_equal(parse("xdpperf -c 198.18.0.2 --rx-timestamp hw", &o, err, sizeof(err)), 0);
	setup_cfg(&ec);
	assert_int_equal(xp_cmeas_setup(&m, &o.spec, &ec, err, sizeof(err)), XP_EXIT_USAGE);
	assert_non_null(strstr(err, "--clock tai"));
	xp_cmeas_free(&m);

	assert_int_equal(parse("xdpperf -c 198.18.0.2 --clock tai --rtt --rx-timestamp auto", &o, err, sizeof(err)), 0);
	setup_cfg(&ec);
	assert_int_equal(xp_cmeas_setup(&m, &o.spec, &ec, err, sizeof(err)), XP_EXIT_USAGE);
	assert_non_null(strstr(err, "--rtt"));
	xp_cmeas_free(&m);

	static const struct { const char *mode; bool hwts, only; } cases[] = {
		{ "sw", false, false }, { "auto", true, false }, { "hw", true, true },
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		char line[128];
		snprintf(line, sizeof(line), "xdpperf -c 198.18.0.2 --clock tai --rx-timestamp %s", cases[k].mode);
		assert_int_equal(parse(line, &o, err, sizeof(err)), 0);
		setup_cfg(&ec);
		assert_int_equal(xp_cmeas_setup(&m, &o.spec, &ec, err, sizeof(err)), 0);
		assert_true(m.on);
		xp_cmeas_request(&m, &st);
		assert_int_equal(st.hwts, cases[k].hwts);
		assert_int_equal(st.hwts_only, cases[k].only);
		assert_true(st.tai);
		/* Over the control channel and back. */
		struct xp_test t = { .version = 1, .kind = XP_TEST_STREAM, .engine = "live", .family = AF_INET,
				     .udp = true, .port_lo = 63000, .port_hi = 63000, .duration = 1, .frame_size = 64,
				     .stamp = st }, back;
		struct json_object *j = xp_test_to_json(&t);
		assert_int_equal(xp_test_from_json(j, &back, err, sizeof(err)), 0);
		assert_int_equal(back.stamp.hwts, cases[k].hwts);
		assert_int_equal(back.stamp.hwts_only, cases[k].only);
		json_object_put(j);
		xp_cmeas_free(&m);
	}
}

/* A "started" reply with the server's stamp answer. */
static struct json_object *started(const char *rx_timestamp, const char *clock, const char *note)
{
	char bid[40];
	struct json_object *r = json_object_new_object(), *p = json_object_new_object();
	json_object_object_add(p, "read", json_object_new_boolean(true));
	json_object_object_add(p, "oneway", json_object_new_boolean(true));
	json_object_object_add(p, "rx_clock", json_object_new_string(clock));
	if (rx_timestamp)
		json_object_object_add(p, "rx_timestamp", json_object_new_string(rx_timestamp));
	if (note)
		json_object_object_add(p, "rx_note", json_object_new_string(note));
	json_object_object_add(r, "stamps", p);
	xp_boot_id(bid, sizeof(bid));
	json_object_object_add(r, "boot_id", json_object_new_string(bid));
	return r;
}

static void mk(struct xp_cmeas *m, const char *mode)
{
	static struct xp_opts o;
	struct xp_engine_cfg ec;
	char err[256], line[128];
	snprintf(line, sizeof(line), "xdpperf -c 198.18.0.2 --clock tai --rx-timestamp %s", mode);
	assert_int_equal(parse(line, &o, err, sizeof(err)), 0);
	setup_cfg(&ec);
	assert_int_equal(xp_cmeas_setup(m, &o.spec, &ec, err, sizeof(err)), 0);
}

/* hw: a server that did not take it up (an older one: no rx_timestamp;
 * or "sw") means no run; auto takes the fallback and keeps its note. */
static void test_started(void **state)
{
	static struct xp_opts o;
	struct xp_cmeas m;
	char err[256];
	struct json_object *r;

	assert_int_equal(parse("xdpperf -c 198.18.0.2 --clock tai --rx-timestamp hw", &o, err, sizeof(err)), 0);
	mk(&m, "hw");
	r = started(NULL, "CLOCK_TAI (bpf_ktime_get_tai_ns)", NULL);
	assert_int_equal(xp_cmeas_started(&m, &o.spec, r, err, sizeof(err)), 1);
	assert_non_null(strstr(err, "--rx-timestamp hw"));
	assert_non_null(strstr(err, "auto"));
	json_object_put(r);
	xp_cmeas_free(&m);

	mk(&m, "hw");
	r = started("hw", "NIC hardware clock (bpf_xdp_metadata_rx_timestamp)", "the NIC's time or none");
	assert_int_equal(xp_cmeas_started(&m, &o.spec, r, err, sizeof(err)), 0);
	assert_string_equal(m.rx_clock, "NIC hardware clock (bpf_xdp_metadata_rx_timestamp)");
	json_object_put(r);
	/* The end: the NIC timed none of them, so the run failed as asked. */
	m.rx_counts = true;
	m.rx_stamped = 1000;
	m.rx_nic = 0;
	assert_int_equal(xp_cmeas_verdict(&m, err, sizeof(err)), 1);
	assert_non_null(strstr(err, "none of the 1000 frames"));
	m.rx_nic = 1;
	assert_int_equal(xp_cmeas_verdict(&m, err, sizeof(err)), 0);
	xp_cmeas_free(&m);

	assert_int_equal(parse("xdpperf -c 198.18.0.2 --clock tai --rx-timestamp auto", &o, err, sizeof(err)), 0);
	mk(&m, "auto");
	r = started("sw", "CLOCK_TAI (bpf_ktime_get_tai_ns)",
		    "NIC timestamps asked for, not available: the driver has none; falling back");
	assert_int_equal(xp_cmeas_started(&m, &o.spec, r, err, sizeof(err)), 0);
	assert_non_null(strstr(m.rx_note, "falling back"));
	m.rx_counts = true;
	m.rx_stamped = 1000;
	assert_int_equal(xp_cmeas_verdict(&m, err, sizeof(err)), 0); /* auto: never a failure */
	json_object_put(r);
	xp_cmeas_free(&m);
}

static char *render(enum xp_report_format fmt, unsigned mode, uint64_t nic)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct xp_report r = { .fmt = fmt, .out = f };
	struct xp_report_info i = { 0 };
	i.stamps = true;
	i.stamp_place = "first 8 payload bytes";
	i.stamp_clock = "CLOCK_TAI";
	i.rx_clock = "CLOCK_TAI (bpf_ktime_get_tai_ns)";
	i.rx_note = "NIC timestamps asked for, not available: no driver; falling back to the kernel's clock at XDP";
	i.oneway = true;
	struct xp_period p = { 0 };
	struct xp_meas_figs *m = &p.meas;
	m->valid = true;
	m->oneway = true;
	m->sent = 100;
	xp_lat_init(&m->lat);
	m->lat.recv = 100;
	m->rx_ts = mode;
	m->rx_counts = true;
	m->rx_stamped = 100;
	m->rx_nic = nic;
	if (fmt == XP_REPORT_TEXT) {
		xp_report_meas_start(&r, &i);
		xp_report_meas_end(&r, &p);
	} else {
		struct json_object *o = json_object_new_object();
		json_object_object_add(o, "start", xp_stamps_info_json(&i));
		json_object_object_add(o, "end", xp_meas_json(m));
		fputs(json_object_to_json_string(o), f);
		json_object_put(o);
	}
	fclose(f);
	return buf;
}

/* The report names the clock and says the fallback, and at the end how
 * many the NIC timed and what became of the rest. */
static void test_report(void **state)
{
	char *s = render(XP_REPORT_TEXT, XP_RXTS_AUTO, 0);
	assert_non_null(strstr(s, "Arrivals timed by the server's CLOCK_TAI (bpf_ktime_get_tai_ns)\n"));
	assert_non_null(strstr(s, "Receive timestamps: NIC timestamps asked for, not available"));
	assert_non_null(strstr(s, "Rx clock  the NIC timed 0 of 100 frames; timed by the server's kernel clock instead"));
	free(s);
	s = render(XP_REPORT_TEXT, XP_RXTS_HW, 0);
	assert_non_null(strstr(s, "Rx clock  the NIC timed 0 of 100 frames; counted, not timed"));
	assert_non_null(strstr(s, "Latency   no frame timed: none had a NIC receive time (--rx-timestamp hw)"));
	free(s);
	s = render(XP_REPORT_JSON, XP_RXTS_AUTO, 40);
	struct json_object *o = json_tokener_parse(s), *v, *x;
	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "start", &v));
	assert_true(json_object_object_get_ex(v, "rx_clock", &x));
	assert_string_equal(json_object_get_string(x), "CLOCK_TAI (bpf_ktime_get_tai_ns)");
	assert_true(json_object_object_get_ex(v, "rx_note", &x));
	assert_true(json_object_object_get_ex(o, "end", &v) && json_object_object_get_ex(v, "rx_timed", &v));
	assert_true(json_object_object_get_ex(v, "mode", &x));
	assert_string_equal(json_object_get_string(x), "auto");
	assert_true(json_object_object_get_ex(v, "nic", &x) && json_object_get_int64(x) == 40);
	assert_true(json_object_object_get_ex(v, "kernel_clock", &x) && json_object_get_int64(x) == 60);
	json_object_put(o);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_option),
		cmocka_unit_test(test_choice),
		cmocka_unit_test(test_started),
		cmocka_unit_test(test_report),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
