/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A simulated device under test for the RFC 2544 search tests
 * (test_rfc2544.c, test_rfc2544_bidir.c): one direction of it, with a
 * forwarding capacity, a sender that offers at most sender_max, and what it
 * does above its capacity. The searches see only the trials it makes.
 */
#ifndef XDPPERF_TESTS_RFC2544_DUT_H
#define XDPPERF_TESTS_RFC2544_DUT_H

#include <math.h>
#include <stdint.h>

#include "rfc2544/rfc2544.h"

enum dut_kind {
	DROPS,        /* loses what it cannot forward */
	PUSHES_BACK,  /* slows the sender to its capacity instead (veth) */
	LOSES_LITTLE, /* above its capacity, loses 0.05 % of what it is sent */
};

struct dut {
	enum dut_kind kind;
	double capacity;   /* frames/s it forwards (in this direction) */
	double sender_max; /* the most the (this direction's) sender offers */
};

/* One simulated 10-s trial (or direction of one) at `rate`, with the
 * client's 2 % rate tolerance. */
static inline struct xp_rfc_trial dut_trial(const struct dut *d, double rate)
{
	struct xp_rfc_trial t = { .target_pps = rate, .seconds = 10 };
	double offered = rate;
	if (offered > d->sender_max) {
		offered = d->sender_max;
		t.held_back_by = "sender";
	}
	if (d->kind == PUSHES_BACK && offered > d->capacity) {
		offered = d->capacity;
		t.held_back_by = "path";
	}
	t.offered_pps = offered;
	t.short_of_target = offered < rate * 0.98;
	t.sent = (uint64_t)(offered * t.seconds);
	t.received = t.sent;
	if (offered > d->capacity) {
		double lost = d->kind == LOSES_LITTLE ? t.sent * 0.0005 : (offered - d->capacity) * t.seconds;
		t.received = t.sent - (uint64_t)ceil(lost);
	}
	return t;
}

#endif
