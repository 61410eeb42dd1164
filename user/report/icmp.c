/*
 * The ICMP errors that came back during a test (net/icmp_watch.h): the
 * summary's first line and its JSON. A router that refuses every frame says
 * so to the client only; this is where the user hears it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "util/json_add.h"
#include "report/report.h"

/* Frames (with FCS, as -l counts them) that an IP MTU lets through. */
static unsigned frame_of_mtu(uint32_t mtu)
{
	return mtu + 18;
}

const char *xp_icmp_text(const struct xp_icmp_figs *f, char *buf, size_t len)
{
	if (!f->count)
		return NULL;
	size_t n = (size_t)snprintf(buf, len, "ICMP errors: %" PRIu64 " came back from the path for the test's frames:",
				    f->count);
	char a[INET6_ADDRSTRLEN];
	for (unsigned i = 0; i < f->nhops && n < len; i++) {
		const struct xp_icmp_hop *h = &f->hop[i];
		n += (size_t)snprintf(buf + n, len - n, "%s %" PRIu64 " %s from %s", i ? ";" : "", h->count,
				      xp_icmp_name(f->family, h->type, h->code), xp_addr_str(&h->addr, a, sizeof(a)));
		if (h->kind == XP_ICMP_FRAG_NEEDED && n < len)
			n += (size_t)(h->mtu ? snprintf(buf + n, len - n, " (next-hop MTU %u)", h->mtu)
					     : snprintf(buf + n, len - n, " (naming no MTU)"));
	}
	if (f->other_hops && n < len)
		n += (size_t)snprintf(buf + n, len - n, "; %" PRIu64 " from other hops", f->other_hops);
	if (f->path_mtu && n < len)
		n += (size_t)snprintf(buf + n, len - n, ": the path MTU is %u, frames above -l %u do not pass", f->path_mtu,
				      frame_of_mtu(f->path_mtu));
	if (f->not_read && n < len)
		snprintf(buf + n, len - n, " (and at least %" PRIu64 " more that overflowed the client's socket)", f->not_read);
	return buf;
}

struct json_object *xp_icmp_json(const struct xp_icmp_figs *f)
{
	struct json_object *o = json_object_new_object(), *hops = json_object_new_array();
	char a[INET6_ADDRSTRLEN], text[XP_ICMP_TEXT_LEN];
	add_u(o, "count", f->count);
	json_object_object_add(o, "path_mtu", f->path_mtu ? json_object_new_int64(f->path_mtu) : NULL);
	json_object_object_add(o, "max_frame_size", f->path_mtu ? json_object_new_int64(frame_of_mtu(f->path_mtu)) : NULL);
	static const char *const kinds[XP_ICMP_KINDS] = { "fragmentation_needed", "unreachable", "time_exceeded",
							   "parameter_problem" };
	struct json_object *k = json_object_new_object();
	for (unsigned i = 0; i < XP_ICMP_KINDS; i++)
		add_u(k, kinds[i], f->by_kind[i]);
	json_object_object_add(o, "by_kind", k);
	for (unsigned i = 0; i < f->nhops; i++) {
		const struct xp_icmp_hop *h = &f->hop[i];
		struct json_object *j = json_object_new_object();
		add_s(j, "from", xp_addr_str(&h->addr, a, sizeof(a)));
		add_u(j, "type", h->type);
		add_u(j, "code", h->code);
		add_s(j, "name", xp_icmp_name(f->family, h->type, h->code));
		add_u(j, "count", h->count);
		json_object_object_add(j, "mtu", h->mtu ? json_object_new_int64(h->mtu) : NULL);
		json_object_array_add(hops, j);
	}
	json_object_object_add(o, "hops", hops);
	add_u(o, "other_hops", f->other_hops);
	add_u(o, "not_read", f->not_read);
	add_s(o, "text", xp_icmp_text(f, text, sizeof(text)));
	return o;
}
