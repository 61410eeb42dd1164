/*
 * Unit tests for the client's flows (client/flows.c): the spec's streams
 * become the engine's flows with every field the path gives filled in
 * (next hop and interface MACs, route source, server, first ports), sizes
 * and rates resolved; a flow that cannot be sent, an engine without flows, a
 * mix of paced and unpaced flows and periods beyond the engine's hold are
 * refused with exit 2.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <linux/types.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/lib/stamp.h"
#include "client/session.h"
#include "engine/flow_table.h"
#include "report/report.h"

static const struct xp_run_opts quiet = { .quiet = true };

/* A client on a 1500-byte interface, path resolved as path.c would; spec with two streams. */
static struct client *client_new(struct xp_spec **spp)
{
	struct xp_spec *sp = calloc(1, sizeof(*sp));
	struct client *c = calloc(1, sizeof(*c));
	assert_non_null(sp);
	assert_non_null(c);
	xp_spec_default(sp);
	sp->ntraffic = 2;
	sp->traffic[1] = sp->traffic[0];
	sp->traffic[0].port_lo = 7000, sp->traffic[0].port_hi = 7009; /* granted */
	sp->traffic[0].frame_size = 64;
	sp->traffic[0].udp = true;
	c->spec = sp;
	c->ro = &quiet;
	xp_report_init(&c->rep, XP_REPORT_MEMORY, NULL); /* errors go to the report too */
	c->ops = &xp_engine_xsk;
	memcpy(c->link.mac, (uint8_t[]){ 2, 0x58, 0x50, 0, 0, 1 }, 6);
	memcpy(c->nh_mac, (uint8_t[]){ 2, 0x58, 0x50, 0, 0, 2 }, 6);
	c->link.mtu = 1500;
	strcpy(c->link.name, "xpc0");
	assert_int_equal(xp_addr_parse("198.18.1.2", &c->local), 0);
	assert_int_equal(xp_addr_parse("198.19.1.2", &c->server), 0);
	c->ec.kind = XP_TEST_STREAM;
	c->ec.frames.queues = 2;
	*spp = sp;
	return c;
}

static void client_free(struct client *c, struct xp_spec *sp)
{
	xp_report_free(&c->rep);
	free(c->flows);
	free(c->flow_res);
	free(c->keys);
	free(c);
	free(sp);
}

static void test_resolved(void **state)
{
	(void)state;
	struct xp_spec *sp;
	struct client *c = client_new(&sp);
	/* Stream 1: a flow of its own: VID 100, DSCP 46, destination incrementing over 10, the rest auto; 1000 frames/s. */
	struct xp_stream *st = &sp->traffic[1];
	struct xp_flow_hdr h = { .l4_proto = IPPROTO_UDP, .nvlan = 1, .dscp = 46,
				 .vlan = { { .tpid = XP_TPID_8021Q, .vid = 100 } } };
	assert_int_equal(xp_addr_parse("198.18.2.0", &h.dst), 0);
	h.src.family = AF_INET;
	st->has_hdr = true;
	st->hdr_auto = XP_HDR_AUTO_DST_MAC | XP_HDR_AUTO_SRC_MAC | XP_HDR_AUTO_SRC | XP_HDR_AUTO_SPORT | XP_HDR_AUTO_DPORT;
	xp_flow_pat_init(&st->hdr, &h);
	st->hdr.f[XP_FF_DST] = (struct xp_pattern){ .kind = XP_PAT_INCREMENT, .width = 32, .value = 0xc6120200u,
						    .step = 1, .count = 10 };
	st->udp = true;
	st->cport_lo = 40000, st->cport_hi = 40099;
	st->frame_size_set = false;
	st->rate = (struct xp_rate){ .unit = XP_RATE_PPS, .value = 1000 };
	st->frames = 5000;
	sp->traffic[0].rate = (struct xp_rate){ .unit = XP_RATE_PPS, .value = 3000 };
	assert_int_equal(xp_client_flows(c, sp), 0);
	assert_int_equal(c->ec.frames.nflows, 2);
	assert_ptr_equal(c->ec.frames.flows, c->flows);
	const struct xp_engine_flow *f0 = &c->flows[0], *f1 = &c->flows[1];
	/* Stream 0 without headers: today's frame from the path, first ports. */
	assert_memory_equal(f0->hdr.base.dst_mac, c->nh_mac, 6);
	assert_memory_equal(f0->hdr.base.src_mac, c->link.mac, 6);
	assert_int_equal(f0->hdr.base.sport, sp->traffic[0].cport_lo);
	assert_int_equal(f0->hdr.base.dport, 7000);
	assert_int_equal(f0->hdr.base.l4_proto, IPPROTO_UDP);
	assert_int_equal(f0->frame_size, 64);
	assert_true(f0->stamps);
	/* Stream 1: its own fields kept, the auto ones from the path, the granted port (no -p of its own). */
	struct xp_flow_hdr r;
	xp_flow_pat_at(&f1->hdr, 7, &r);
	assert_memory_equal(r.dst_mac, c->nh_mac, 6);
	assert_memory_equal(r.src_mac, c->link.mac, 6);
	assert_memory_equal(&r.src.v4, &c->local.v4, 4);
	assert_int_equal(ntohl(r.dst.v4.s_addr), 0xc6120207u);
	assert_int_equal(r.vlan[0].vid, 100);
	assert_int_equal(r.dscp, 46);
	assert_int_equal(r.sport, 40000);
	assert_int_equal(r.dport, 7000);
	/* Its size: the smallest with a stamp, the tag's 4 bytes counted (64 + 4 would do; 64 has room too). */
	struct frame_layout lay;
	assert_int_equal(frame_layout_hdr(&f1->hdr.base, f1->frame_size, false, &lay, NULL), 0);
	assert_true(lay.payload_len >= XP_STAMP_BYTES);
	assert_int_equal(f1->frames, 5000);
	assert_true(f1->pps > 999.9 && f1->pps < 1000.1);
	assert_true(c->ec.pps > 3999.9 && c->ec.pps < 4000.1);
	client_free(c, sp);
}

/* Stream st: headers of its own, UDP from the path's addresses and ports, DSCP dscp, stamps or not. */
static void set_hdr(struct xp_stream *st, uint8_t dscp, bool stamps)
{
	struct xp_flow_hdr h = { .l4_proto = IPPROTO_UDP, .dscp = dscp };
	h.src.family = h.dst.family = AF_INET;
	st->has_hdr = true;
	st->hdr_auto = 0x3f;
	st->udp = true;
	st->no_stamps = !stamps;
	xp_flow_pat_init(&st->hdr, &h);
}

/*
 * Flows without stamps (issue 26): two to the server, DSCP 0 and 46,
 * counted by DSCP (the key in c->keys); a third to another address, not
 * counted (uncountable); a stamped one beside them gets the tag's room by
 * default and is refused without it; two that cannot be told apart refused
 * with one line naming both.
 */
static void test_unstamped(void **state)
{
	(void)state;
	struct xp_spec *sp;
	struct client *c = client_new(&sp);
	sp->ntraffic = 4;
	set_hdr(&sp->traffic[0], 0, false);
	set_hdr(&sp->traffic[1], 46, false);
	set_hdr(&sp->traffic[2], 46, false);
	sp->traffic[2].hdr_auto &= ~XP_HDR_AUTO_DST;
	struct xp_flow_hdr b = sp->traffic[2].hdr.base;
	assert_int_equal(xp_addr_parse("198.19.9.9", &b.dst), 0);
	xp_flow_pat_init(&sp->traffic[2].hdr, &b);
	set_hdr(&sp->traffic[3], 46, true);
	int rc = xp_client_flows(c, sp);
	if (rc)
		fprintf(stderr, "%s\n", xp_client_last_error());
	assert_int_equal(rc, 0);
	assert_non_null(c->keys);
	assert_int_equal(c->keys->mask, XP_KEY_ON | XP_KEY_DSCP);
	assert_int_equal(c->keys->n, 2);
	assert_true(c->flow_res[0].keyed && c->flow_res[1].keyed);
	assert_true(!c->flow_res[2].keyed && c->flow_res[2].uncountable);
	assert_true(!c->flow_res[3].keyed && !c->flow_res[3].uncountable);
	for (unsigned i = 0; i < 2; i++)
		assert_int_equal(c->keys->key[i].dscp, c->keys->flow[i] == 0 ? 0 : 46);
	/* The stamped flow's default size carries the tag. */
	struct frame_layout lay;
	assert_int_equal(frame_layout_hdr(&c->flows[3].hdr.base, c->flows[3].frame_size, false, &lay, NULL), 0);
	assert_true(xp_stamp_tagged(xp_stamp_place_of(0, lay.payload_len), lay.payload_len));
	client_free(c, sp);

	/* The same two DSCPs, the same everything: refused, naming both. */
	c = client_new(&sp);
	set_hdr(&sp->traffic[0], 46, false);
	set_hdr(&sp->traffic[1], 46, false);
	snprintf(sp->traffic[0].name, sizeof(sp->traffic[0].name), "a");
	snprintf(sp->traffic[1].name, sizeof(sp->traffic[1].name), "b");
	assert_int_equal(xp_client_flows(c, sp), 2);
	assert_non_null(strstr(xp_client_last_error(), "--flows: flows \"a\" and \"b\" have the same dscp"));
	client_free(c, sp);

	/* A stamped TCP flow of 64-byte frames (stamp in the IP ID, no tag) beside one without stamps: refused. */
	c = client_new(&sp);
	set_hdr(&sp->traffic[0], 0, false);
	set_hdr(&sp->traffic[1], 46, true);
	b = sp->traffic[1].hdr.base;
	b.l4_proto = IPPROTO_TCP;
	sp->traffic[1].udp = false;
	xp_flow_pat_init(&sp->traffic[1].hdr, &b);
	sp->traffic[1].frame_size_set = true;
	sp->traffic[1].frame_size = 64;
	assert_int_equal(xp_client_flows(c, sp), 2);
	assert_non_null(strstr(xp_client_last_error(), "its 64-byte frames have no room for the stamp's tag"));
	assert_non_null(strstr(xp_client_last_error(), "give it sizes from 70 up"));
	client_free(c, sp);
}

static void test_refused(void **state)
{
	(void)state;
	struct xp_spec *sp;
	struct client *c;
	/* An engine without flows. */
	c = client_new(&sp);
	c->ops = &xp_engine_socket;
	assert_int_equal(xp_client_flows(c, sp), 2);
	assert_non_null(strstr(xp_client_last_error(), "--flows: the socket engine sends one stream"));
	client_free(c, sp);
	/* One flow paced, one not. */
	c = client_new(&sp);
	sp->traffic[1].rate = (struct xp_rate){ .unit = XP_RATE_PPS, .value = 1000 };
	assert_int_equal(xp_client_flows(c, sp), 2);
	assert_non_null(strstr(xp_client_last_error(), "every flow a rate, or none"));
	client_free(c, sp);
	/* A size over the MTU. */
	c = client_new(&sp);
	sp->traffic[1].frame_size_set = true;
	sp->traffic[1].frame_size = 2000;
	assert_int_equal(xp_client_flows(c, sp), 2);
	assert_non_null(strstr(xp_client_last_error(), "flow 2: frame size 2000 (-l) exceeds the MTU"));
	client_free(c, sp);
	/* A flow file's flow: its size field named, not -l (which --flows refuses). */
	c = client_new(&sp);
	sp->traffic[1].frame_size_set = true;
	sp->traffic[1].frame_size = 2000;
	set_hdr(&sp->traffic[1], 0, 1);
	snprintf(sp->traffic[1].name, sizeof(sp->traffic[1].name), "big");
	assert_int_equal(xp_client_flows(c, sp), 2);
	assert_non_null(strstr(xp_client_last_error(),
			       "flow 2 (big): frame size 2000 (its size, flows[1].size in the flow file) exceeds the MTU"));
	assert_null(strstr(xp_client_last_error(), "-l"));
	client_free(c, sp);
	/* Periods beyond what the xsk engine holds: 40 000 + 40 000 frames. */
	c = client_new(&sp);
	for (unsigned i = 0; i < 2; i++) {
		struct xp_stream *st = &sp->traffic[i];
		struct xp_flow_hdr h = { .l4_proto = IPPROTO_UDP };
		h.src.family = h.dst.family = AF_INET;
		st->has_hdr = true;
		st->hdr_auto = 0x3f & ~XP_HDR_AUTO_SPORT; /* its own source port pattern */
		xp_flow_pat_init(&st->hdr, &h);
		st->hdr.f[XP_FF_SPORT] = (struct xp_pattern){ .kind = XP_PAT_RANDOM, .width = 16, .min = 1, .max = 60000,
							      .seed = 3, .count = 40000 };
	}
	assert_int_equal(xp_client_flows(c, sp), 2);
	assert_non_null(strstr(xp_client_last_error(), "flow 2: the flows' headers and sizes repeat after more than 65536"));
	client_free(c, sp);
	/* One stream without headers: no flows, nothing set. */
	c = client_new(&sp);
	sp->ntraffic = 1;
	assert_int_equal(xp_client_flows(c, sp), 0);
	assert_null(c->ec.frames.flows);
	assert_int_equal(c->ec.frames.nflows, 0);
	client_free(c, sp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resolved),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_unstamped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
