/*
 * The RFC 2544 suite with a flow file as its traffic (user/client/trial.c's
 * scaling, user/rfc2544/flows.c's figures): each flow keeps its share of the
 * aggregate whatever the trial's rate, whatever its rate's unit and sizes;
 * the one pass's size; each trial's per-flow figures from the server's
 * per-flow counts; the per-flow table and -J of a made-up run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "rfc2544/rfc2544.h"
#include "spec/otg_flows.h"
#include "frame/mix.h"
#include "bpf/lib/stamp.h"

static struct xp_spec S; /* megabytes: not on the stack */

/* Three flows: "ef" 1000 frames/s of 128 bytes, "be" 24 Mbit/s (L2) of 1000-byte frames (3000 frames/s),
 * "mix" 10 % of a 1 Gbit/s line (L1) in IMIX. */
static const char FLOWS[] =
	"{\"flows\":["
	"{\"name\":\"ef\",\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"ipv4\"},{\"choice\":\"udp\"}],"
	"\"size\":{\"choice\":\"fixed\",\"fixed\":128},\"rate\":{\"choice\":\"pps\",\"pps\":1000},"
	"\"metrics\":{\"enable\":true}},"
	"{\"name\":\"be\",\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"ipv4\"},{\"choice\":\"udp\"}],"
	"\"size\":{\"choice\":\"fixed\",\"fixed\":1000},\"rate\":{\"choice\":\"mbps\",\"mbps\":24},"
	"\"metrics\":{\"enable\":true}},"
	"{\"name\":\"mix\",\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"ipv4\"},{\"choice\":\"udp\"}],"
	"\"size\":{\"choice\":\"weight_pairs\"},\"rate\":{\"choice\":\"percentage\",\"percentage\":10},"
	"\"metrics\":{\"enable\":true}}]}";

static void load(const char *text)
{
	char err[256] = "";
	struct json_object *j = json_tokener_parse(text);
	assert_non_null(j);
	xp_spec_default(&S);
	snprintf(S.host, sizeof(S.host), "198.18.1.1");
	int rc = xp_otg_flows_parse(j, "f.json", 1e9, &S, err, sizeof(err));
	json_object_put(j);
	if (rc)
		fail_msg("%s", err);
}

static void test_shares_and_scaling(void **state)
{
	(void)state;
	load(FLOWS);
	assert_int_equal(S.ntraffic, 3);
	struct xp_mix imix;
	char err[200];
	assert_int_equal(xp_mix_parse("imix", &imix, err, sizeof(err)), 0);
	double im = xp_mix_mean(&imix);
	double pps[3] = { 1000, 24e6 / (1000 * 8), 1e8 / ((im + 20) * 8) }; /* bps is L2, percentage L1 */
	double sum = pps[0] + pps[1] + pps[2];
	double share[3], mean[3];
	double agg = xp_trial_flow_shares(&S, share, mean);
	assert_true(fabs(mean[0] - 128) < 1e-9 && fabs(mean[1] - 1000) < 1e-9 && fabs(mean[2] - im) < 1e-9);
	for (int i = 0; i < 3; i++)
		assert_true(fabs(share[i] - pps[i] / sum) < 1e-12);
	assert_true(fabs(agg - (share[0] * 128 + share[1] * 1000 + share[2] * im)) < 1e-9);
	/* A trial at 40 000 frames/s: each flow at its share, in frames/s; they add up to the trial's rate. */
	static struct xp_spec T;
	T = S;
	xp_trial_flow_rates(&T, 40000);
	double got = 0;
	for (int i = 0; i < 3; i++) {
		assert_int_equal(T.traffic[i].rate.unit, XP_RATE_PPS);
		assert_true(fabs(T.traffic[i].rate.value - 40000 * pps[i] / sum) < 1e-6);
		assert_true(T.traffic[i].rate_pct == 0);
		got += xp_rate_to_pps(&T.traffic[i].rate, mean[i]);
	}
	assert_true(fabs(got - 40000) < 1e-6);
	/* The ratio of any two flows is the file's, at any rate. */
	assert_true(fabs(T.traffic[1].rate.value / T.traffic[0].rate.value - 3) < 1e-9);
	/* Scaling the scaled spec again keeps the shares (a trial starts from the base each time, but it need not). */
	xp_trial_flow_rates(&T, 1000);
	assert_true(fabs(T.traffic[1].rate.value / T.traffic[0].rate.value - 3) < 1e-9);
	/* Unpaced: every flow without a rate (an equal share of as fast as the sender goes). */
	xp_trial_flow_rates(&T, 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(T.traffic[i].rate.unit, XP_RATE_NONE);
	/* Flows without rates share equally. */
	assert_true(fabs(xp_trial_flow_shares(&T, share, NULL) - (128 + 1000 + im) / 3) < 1e-9);
	for (int i = 0; i < 3; i++)
		assert_true(fabs(share[i] - 1.0 / 3) < 1e-12);

	/* The suite's one pass: labelled "flows", its largest frame, the aggregate's mean; shares and names. */
	struct xp_rfc_size z = { 0 };
	assert_int_equal(xp_rfc_flows_setup(&S, &z), 0);
	assert_string_equal(z.label, "flows");
	assert_int_equal(z.len, 1518);
	assert_true(fabs(z.mean - agg) < 1e-9);
	assert_true(xp_rfc_named(&z));
	assert_true(fabs(xp_rfc_mean(&z) - agg) < 1e-9);
	assert_int_equal(z.nflows, 3);
	assert_string_equal(z.flow[1].name, "be");
	assert_true(fabs(z.flow[2].share - pps[2] / sum) < 1e-12);
	/* The line rate's frame rate at the aggregate's mean is the flows' at 100 % of the line. */
	double line = xp_rfc_line_pps(1e9, z.mean);
	double l1 = 0;
	for (int i = 0; i < 3; i++)
		l1 += line * z.flow[i].share * (z.flow[i].mean + 20) * 8;
	assert_true(fabs(l1 - 1e9) < 1e-3);
	free(z.flow);
}

/* A made-up trial's per-flow figures, as the server counts them. */
static void flow_res(struct xp_flow_result *f, uint64_t sent, uint64_t recv, uint64_t lat_ticks)
{
	memset(f, 0, sizeof(*f));
	f->tx_frames = sent;
	f->rx_known = true;
	f->rx.recv = recv;
	f->rx.frames = recv;
	if (lat_ticks) {
		f->rx.lat_n = recv;
		f->rx.lat_sum = recv * lat_ticks;
		f->rx.lat_nmin = ~lat_ticks;
		f->rx.lat_max = lat_ticks;
		f->rx.hist[xp_lat_bucket((uint32_t)lat_ticks) >> XP_FLOW_LAT_SHIFT] = (uint32_t)recv;
	}
}

static struct json_object *jget(struct json_object *o, const char *path)
{
	char buf[256], *save = NULL;
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *k = strtok_r(buf, ".", &save); k && o; k = strtok_r(NULL, ".", &save)) {
		if (json_object_is_type(o, json_type_array))
			o = json_object_array_get_idx(o, (size_t)atoi(k));
		else if (!json_object_object_get_ex(o, k, &o))
			return NULL;
	}
	return o;
}

static void test_report(void **state)
{
	(void)state;
	load(FLOWS);
	S.ntraffic = 2; /* ef and be: shares 1/4 and 3/4 */
	struct xp_rfc_job o = { .spec = &S };
	xp_rfc2544_cfg_default(&o.rfc);
	o.rfc.trial_s = 1;
	o.rfc.lat_trials = 1;
	static struct xp_rfc_trial_rec recs[4];
	memset(recs, 0, sizeof(recs));
	struct xp_rfc_run r = { .o = &o, .nsizes = 1, .trials = recs, .ntrials = 4, .settle_s = 1 };
	struct xp_rfc_size *z = &r.sizes[0];
	assert_int_equal(xp_rfc_flows_setup(&S, z), 0);
	assert_true(fabs(z->flow[0].share - 0.25) < 1e-12);
	z->max_pps = 40000;
	z->tp_run = z->lat_run = true;
	z->ndr_pps = z->pdr_pps = 20000;
	z->lat_pps = 20000;
	/* throughput 40 000 (failed: be lost 3000 of 30 000), 20 000 (passed), 30 000 (failed: be lost 150 of
	 * 22 500, ef 10 of 7500); latency at 20 000; loss at the top, 40 000 */
	static const struct { const char *test; double pps; enum xp_rfc_verdict v; uint64_t s0, r0, s1, r1; } tr[4] = {
		{ "throughput", 40000, XP_RFC_LOSS, 10000, 10000, 30000, 27000 },
		{ "throughput", 20000, XP_RFC_PASS, 5000, 5000, 15000, 15000 },
		{ "throughput", 30000, XP_RFC_LOSS, 7500, 7490, 22500, 22350 },
		{ "latency", 20000, XP_RFC_PASS, 5000, 5000, 15000, 15000 },
	};
	struct xp_flow_result fr[2];
	for (int i = 0; i < 4; i++) {
		struct xp_rfc_trial_rec *rec = &recs[i];
		rec->z = z;
		rec->len = z->len;
		rec->test = tr[i].test;
		rec->v = tr[i].v;
		rec->t.target_pps = tr[i].pps;
		rec->t.sent = tr[i].s0 + tr[i].s1;
		rec->t.received = tr[i].r0 + tr[i].r1;
		flow_res(&fr[0], tr[i].s0, tr[i].r0, 2000);   /* 2000 ticks */
		flow_res(&fr[1], tr[i].s1, tr[i].r1, 20000);
		struct xp_trial_out out = { .lat_known = true, .flows = fr, .nflows = 2 };
		xp_rfc_flows_trial(z, rec, &out);
		assert_int_equal(rec->nflows, 2);
	}
	/* A trial without one-way times: counts, no latency. */
	assert_true(recs[0].flows[1].lat.known);
	assert_int_equal(recs[2].flows[0].received, 7490);
	assert_true(fabs(xp_rfc_flow_loss_pct(&recs[0].flows[1]) - 10) < 1e-12);
	/* Only the latency trial's frames make each flow's latency. */
	assert_int_equal(z->flow[0].lat_n, 1);
	assert_int_equal(z->flow[0].lat_hist.n, 5000);
	assert_int_equal(z->flow[1].lat_hist.n, 15000);
	recs[3].test = "loss"; /* and now the last one counts as the frame loss test's 100 % step */
	recs[3].t.target_pps = 40000;

	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	xp_rfc_report_json(f, &r);
	fclose(f);
	struct json_object *doc = json_tokener_parse(buf);
	assert_non_null(doc);
	assert_string_equal(json_object_get_string(jget(doc, "sizes.0.frame_bytes")), "flows");
	assert_string_equal(json_object_get_string(jget(doc, "sizes.0.flows.1.name")), "be");
	assert_true(fabs(json_object_get_double(jget(doc, "sizes.0.flows.0.share")) - 0.25) < 1e-12);
	assert_true(fabs(json_object_get_double(jget(doc, "sizes.0.flows.1.ndr_frames_per_second")) - 15000) < 1e-6);
	/* Above the NDR: the lowest failing rate, 30 000, not 40 000. */
	assert_true(fabs(json_object_get_double(jget(doc, "sizes.0.flows.1.above_ndr.target_frames_per_second")) -
			 30000) < 1e-6);
	assert_int_equal(json_object_get_int64(jget(doc, "sizes.0.flows.1.above_ndr.received")), 22350);
	assert_true(fabs(json_object_get_double(jget(doc, "sizes.0.flows.0.above_ndr.loss_percent")) -
			 100.0 * 10 / 7500) < 1e-9);
	assert_int_equal(json_object_get_int64(jget(doc, "sizes.0.flows.0.loss_at_top.sent")), 5000);
	assert_int_equal(json_object_get_int64(jget(doc, "sizes.0.flows.1.latency.frames_timed")), 15000);
	assert_int_equal(json_object_get_int(jget(doc, "sizes.0.flows.1.latency.trials")), 1);
	/* 20 000 ticks every frame: min and max exact, the quantiles within the flow histogram's bucket (~9 %). */
	double tick_us = XP_STAMP_TICK_NS / 1e3;
	assert_true(fabs(json_object_get_double(jget(doc, "sizes.0.flows.1.latency.max_us")) - 20000 * tick_us) < 1e-9);
	assert_true(fabs(json_object_get_double(jget(doc, "sizes.0.flows.1.latency.min_us")) - 20000 * tick_us) < 1e-9);
	double p50 = json_object_get_double(jget(doc, "sizes.0.flows.1.latency.p50_us"));
	assert_true(p50 > 20000 * tick_us * 0.85 && p50 < 20000 * tick_us * 1.15);
	/* Every trial has each flow's figures. */
	assert_int_equal(json_object_get_int64(jget(doc, "trials.0.flows.1.received")), 27000);
	assert_string_equal(json_object_get_string(jget(doc, "trials.0.flows.0.name")), "ef");
	assert_string_equal(json_object_get_string(jget(doc, "trials.0.frame_bytes")), "flows");
	assert_true(fabs(json_object_get_double(jget(doc, "trials.0.flows.1.loss_percent")) - 10) < 1e-12);
	json_object_put(doc);
	free(buf);

	buf = NULL;
	f = open_memstream(&buf, &len);
	xp_rfc_report_text(f, &r);
	fclose(f);
	assert_non_null(strstr(buf, "\nFlows: each at its share of every trial's rate"));
	assert_non_null(strstr(buf, "loss above the NDR: in the throughput trial at 30000 fps, the lowest rate that failed"));
	/* ef: 25 %, 128 bytes, 5000 fps at the NDR, 10 of 7500 lost above it, none at the top. */
	char row[256];
	snprintf(row, sizeof(row), "\n%-24s %7.2f %8.1f %12s %12s %12s", "ef", 25.0, 128.0, "5000", "0.1333", "0.0000");
	if (!strstr(buf, row))
		fail_msg("no row '%s' in\n%s", row + 1, buf);
	snprintf(row, sizeof(row), "\n%-24s %7.2f %8.1f %12s %12s %12s", "be", 75.0, 1000.0, "15000", "0.6667", "0.0000");
	assert_non_null(strstr(buf, row));
	free(buf);
	xp_rfc_flows_free(&r);
	assert_null(z->flow);
	assert_null(recs[0].flows);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shares_and_scaling),
		cmocka_unit_test(test_report),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
