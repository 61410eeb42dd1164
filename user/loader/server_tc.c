#include "loader/server_tc.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <linux/types.h>

#include "bpf/server.h" /* before its skeleton: the rodata config's type */
#include "bpf/server.skel.h"
#include "bpf/server_tc.skel.h"
#include "loader/libbpf_log.h"
#include "net/route.h" /* xp_nl_talk */

#define XP_TC_MAX_LINKS 16
/* enum bpf_attach_type's BPF_TCX_INGRESS (Linux 6.6): the distribution's
 * UAPI headers and libbpf 1.1 predate it; the kernel's value is fixed ABI. */
#define XP_BPF_TCX_INGRESS 46
/* Our clsact filter's place when there is no tcx: one handle and priority
 * of our own, so a detach removes ours and nobody else's. */
#define XP_TC_HANDLE 0x5850 /* "XP" */
#define XP_TC_PRIO 0x5850

struct tc_link {
	int ifindex;
	int refs;
	int fd;              /* tcx: the bpf_link; closing it (or dying) detaches */
	bool hook;           /* no tcx: a clsact filter instead */
	bool made_qdisc;     /* ... on a clsact qdisc we created (removed with it) */
};

struct server_tc {
	struct server_tc_bpf *skel;
	int prog_fd;
	struct tc_link links[XP_TC_MAX_LINKS];
};

int server_tc_open(struct server_tc **out, struct server_bpf *xdp, uint16_t ctrl_port, char *err, size_t errlen)
{
	struct server_tc *t = calloc(1, sizeof(*t));
	struct bpf_map *m;
	int r;

	if (!t)
		return -ENOMEM;
	libbpf_set_print(xp_libbpf_print);
	t->skel = server_tc_bpf__open();
	if (!t->skel) {
		r = -errno;
		snprintf(err, errlen, "cannot open the TC counter program: %s", strerror(-r));
		free(t);
		return r;
	}
	t->skel->rodata->ctrl_port = ctrl_port;
	/* Every map of server_maps.h is the XDP program's own: one set of slots
	 * and counters, whichever program counts a slot. */
	bpf_object__for_each_map(m, t->skel->obj) {
		if (bpf_map__is_internal(m))
			continue;
		struct bpf_map *x = bpf_object__find_map_by_name(xdp->obj, bpf_map__name(m));
		r = x ? bpf_map__reuse_fd(m, bpf_map__fd(x)) : -ENOENT;
		if (r) {
			snprintf(err, errlen, "cannot share the XDP program's map %s with the TC program: %s",
				 bpf_map__name(m), strerror(-r));
			server_tc_bpf__destroy(t->skel);
			free(t);
			return r;
		}
	}
	r = server_tc_bpf__load(t->skel);
	if (r) {
		snprintf(err, errlen, "cannot load the TC counter program: %s", strerror(-r));
		server_tc_bpf__destroy(t->skel);
		free(t);
		return r;
	}
	t->prog_fd = bpf_program__fd(t->skel->progs.tc_server);
	*out = t;
	return 0;
}

static void hook_of(int ifindex, struct bpf_tc_hook *h)
{
	memset(h, 0, sizeof(*h));
	h->sz = sizeof(*h);
	h->ifindex = ifindex;
	h->attach_point = BPF_TC_INGRESS;
}

static int count_cb(const struct nlmsghdr *nlh, void *data)
{
	if (nlh->nlmsg_type == RTM_NEWTFILTER)
		(*(int *)data)++;
	return MNL_CB_OK;
}

/* Filters on ifindex's clsact qdisc, ingress and egress (netlink's own
 * count: another program's filter added since we made the qdisc shows). */
static int clsact_filters(int ifindex)
{
	static const uint32_t parents[] = { TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS),
					    TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS) };
	int n = 0;
	for (size_t i = 0; i < sizeof(parents) / sizeof(parents[0]); i++) {
		char buf[256] = { 0 };
		struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
		nlh->nlmsg_type = RTM_GETTFILTER;
		nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
		struct tcmsg *t = mnl_nlmsg_put_extra_header(nlh, sizeof(*t));
		t->tcm_family = AF_UNSPEC;
		t->tcm_ifindex = ifindex;
		t->tcm_parent = parents[i];
		int r = xp_nl_talk(nlh, count_cb, &n);
		if (r)
			return r;
	}
	return n;
}

/*
 * Only what is ours goes (issue 28 point 7): our filter, by its handle and
 * priority; the clsact qdisc only if we made it and no filter of anyone
 * else's came onto it meanwhile (deleting the qdisc would take theirs too).
 */
static void unlink_one(struct tc_link *l)
{
	if (!l->hook) {
		close(l->fd);
		return;
	}
	struct bpf_tc_hook h;
	hook_of(l->ifindex, &h);
	LIBBPF_OPTS(bpf_tc_opts, o, .handle = XP_TC_HANDLE, .priority = XP_TC_PRIO);
	bpf_tc_detach(&h, &o);
	if (l->made_qdisc && clsact_filters(l->ifindex) == 0) {
		h.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
		bpf_tc_hook_destroy(&h);
	}
}

void server_tc_close(struct server_tc *t)
{
	if (!t)
		return;
	for (int i = 0; i < XP_TC_MAX_LINKS; i++)
		if (t->links[i].refs)
			unlink_one(&t->links[i]);
	server_tc_bpf__destroy(t->skel);
	free(t);
}

/* No tcx: a direct-action cls_bpf filter on the clsact qdisc (made if missing). */
static int attach_hook(struct server_tc *t, struct tc_link *l, int ifindex)
{
	struct bpf_tc_hook h;
	hook_of(ifindex, &h);
	int r = bpf_tc_hook_create(&h);
	if (r && r != -EEXIST)
		return r;
	l->made_qdisc = !r;
	/* REPLACE: a filter at our handle and priority is one a crashed run of
	 * ours left (clsact filters outlive their process); without it the
	 * attach would fail with EEXIST until someone deleted it by hand. */
	LIBBPF_OPTS(bpf_tc_opts, o, .prog_fd = t->prog_fd, .handle = XP_TC_HANDLE, .priority = XP_TC_PRIO,
		    .flags = BPF_TC_F_REPLACE);
	r = bpf_tc_attach(&h, &o);
	if (r) {
		if (l->made_qdisc) {
			h.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
			bpf_tc_hook_destroy(&h);
		}
		return r;
	}
	l->hook = true;
	return 0;
}

int server_tc_attach(struct server_tc *t, int ifindex, const char **how, char *err, size_t errlen)
{
	struct tc_link *l = NULL;
	for (int i = 0; i < XP_TC_MAX_LINKS; i++) {
		if (t->links[i].refs && t->links[i].ifindex == ifindex) {
			t->links[i].refs++;
			*how = t->links[i].hook ? "tc" : "tcx";
			return 0;
		}
		if (!t->links[i].refs && !l)
			l = &t->links[i];
	}
	if (!l) {
		snprintf(err, errlen, "too many interfaces in use (max %d)", XP_TC_MAX_LINKS);
		return -ENOSPC;
	}
	memset(l, 0, sizeof(*l));
	const char *force = getenv("XDPPERF_TC_HOOK");
	int r = -EINVAL;
	if (!(force && !strcmp(force, "1"))) {
		/* Appended after whatever tcx programs the interface has. */
		r = bpf_link_create(t->prog_fd, ifindex, XP_BPF_TCX_INGRESS, NULL);
		r = r < 0 ? -errno : r;
	}
	if (r >= 0) {
		l->fd = r;
	} else if (r == -EINVAL || r == -EOPNOTSUPP) {
		/* The kernel has no tcx (before 6.6): the classic clsact hook. */
		r = attach_hook(t, l, ifindex);
		if (r) {
			snprintf(err, errlen, "cannot attach the TC counter program to ifindex %d: %s", ifindex,
				 strerror(-r));
			return r;
		}
	} else {
		snprintf(err, errlen, "cannot attach the TC counter program to ifindex %d: %s", ifindex, strerror(-r));
		return r;
	}
	l->ifindex = ifindex;
	l->refs = 1;
	*how = l->hook ? "tc" : "tcx";
	return 0;
}

void server_tc_detach(struct server_tc *t, int ifindex)
{
	for (int i = 0; i < XP_TC_MAX_LINKS; i++) {
		struct tc_link *l = &t->links[i];
		if (l->refs && l->ifindex == ifindex) {
			if (--l->refs == 0)
				unlink_one(l);
			return;
		}
	}
}

struct server_tc_bpf *server_tc_skel(struct server_tc *t)
{
	return t->skel;
}
