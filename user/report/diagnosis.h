/*
 * Why SYNs went unanswered: a connection test's summary opens with this when
 * more than 1 % of its SYNs never completed a handshake. The cause is decided
 * from counters along the path, each read by someone other than the sender:
 * the server's XDP program (SYNs seen, SYN-ACKs sent), the client's XDP
 * program (SYN-ACKs seen), the client's interface drops, and, with
 * --device-netns, the device's conntrack table and interface drops. It says
 * "likely": counters show where frames went missing, not always why.
 */
#ifndef XP_DIAGNOSIS_H
#define XP_DIAGNOSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "meas/figures.h"

/* What the device in the path reported over the test (deltas, except the gauges). */
struct xp_device_figs {
	bool have;              /* --device-netns was given and could be read */
	uint64_t ct_count;      /* gauge at the end: conntrack entries */
	uint64_t ct_max;        /* gauge: nf_conntrack_max */
	uint64_t ct_peak;       /* the most entries seen at an interval's end */
	uint64_t ct_drops;      /* conntrack drop + early_drop + insert_failed */
	uint64_t if_drops;      /* rx/tx dropped over the device's interfaces */
};

/* The figures beside the test's own that the diagnosis reads. */
struct xp_diag_input {
	bool have_server;          /* the server's XDP counters are there (not: a peer without xdpperf) */
	bool peer_kernel;          /* the server's TCP stack answered (its XDP program counts, sends nothing) */
	uint64_t client_rx_drops;  /* the client interface's rx_dropped + rx_missed over the test */
	struct xp_device_figs dev;
};

/* enum xp_diag_cause and struct xp_diagnosis are in meas/figures.h (a summary carries one). */

/* The cause's name in -J ("device_drops", "table_full", "receiver_overrun", "unknown", NULL for none). */
const char *xp_diag_cause_name(enum xp_diag_cause c);

/* Fill d from the whole test's figures. Returns d->cause (XP_DIAG_NONE: nothing to say). */
/* The device's likely cause of lost frames from its counters (--device-netns), one phrase in buf. */
enum xp_diag_cause xp_diag_device_cause(const struct xp_device_figs *dv, char *buf, size_t len);
enum xp_diag_cause xp_diagnose_handshakes(const struct xp_period *total, const struct xp_diag_input *in,
					  struct xp_diagnosis *d);

#endif
