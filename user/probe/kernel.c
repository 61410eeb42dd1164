/*
 * The kernel's part of --probe: BTF, privileges, BPF_PROG_RUN live frames,
 * multi-buffer XDP programs and the XDP RX timestamp kfunc. Each check does
 * the real thing where it is harmless (a program loaded, a frame run and
 * dropped) rather than guessing from the version number.
 */
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "probe/probe.h"
#include "spec/defaults.h"
#include "loader/probe_prog.h"
#include "util/privdrop.h"
#include "util/process.h"

void xp_probe_set(struct xp_probe_item *it, const char *key, enum xp_probe_state st, const char *fmt, ...)
{
	va_list ap;
	it->key = key;
	it->state = st;
	va_start(ap, fmt);
	vsnprintf(it->reason, sizeof(it->reason), fmt, ap);
	va_end(ap);
}

static void check_btf(struct xp_probe_item *it, bool *kfunc)
{
	it->title = "BTF";
	struct btf *btf = btf__load_vmlinux_btf();
	int e = btf ? 0 : errno;
	*kfunc = false;
	if (!btf) {
		xp_probe_set(it, "btf", XP_PROBE_NO,
			     "no kernel BTF (/sys/kernel/btf/vmlinux: %s): CO-RE programs cannot be relocated; "
			     "a kernel built with CONFIG_DEBUG_INFO_BTF has it", strerror(e));
		return;
	}
	xp_probe_set(it, "btf", XP_PROBE_YES, "/sys/kernel/btf/vmlinux: %u types, CO-RE programs load",
		     btf__type_cnt(btf));
	*kfunc = btf__find_by_name_kind(btf, "bpf_xdp_metadata_rx_timestamp", BTF_KIND_FUNC) >= 0;
	btf__free(btf);
}

/* The capabilities xdpperf uses, as effective in this process. */
static void check_privileges(struct xp_probe_item *it)
{
	static const struct {
		cap_value_t cap;
		const char *name, *why;
	} caps[] = {
		{ CAP_BPF, "CAP_BPF", "load BPF programs" },
		{ CAP_NET_ADMIN, "CAP_NET_ADMIN", "attach XDP, AF_XDP" },
		{ CAP_NET_RAW, "CAP_NET_RAW", "AF_XDP sockets" },
		{ CAP_SYS_ADMIN, "CAP_SYS_ADMIN", "live frames' private namespace, else made in a user namespace" },
		{ CAP_IPC_LOCK, "CAP_IPC_LOCK", "AF_XDP UMEM beyond the memlock limit" },
		{ CAP_PERFMON, "CAP_PERFMON", "the server's XDP counter program passes the verifier" },
	};
	char have[192] = "", lack[256] = "";
	cap_t c = cap_get_proc();
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		cap_flag_value_t v = CAP_CLEAR;
		if (c && cap_get_flag(c, caps[i].cap, CAP_EFFECTIVE, &v))
			v = CAP_CLEAR; /* a kernel without this capability (CAP_BPF before 5.8) */
		if (v == CAP_SET)
			snprintf(have + strlen(have), sizeof(have) - strlen(have), "%s%s", *have ? " " : "",
				 caps[i].name);
		else
			snprintf(lack + strlen(lack), sizeof(lack) - strlen(lack), "%s%s (%s)", *lack ? ", " : "",
				 caps[i].name, caps[i].why);
	}
	if (c)
		cap_free(c);
	struct rlimit rl = { 0 };
	getrlimit(RLIMIT_MEMLOCK, &rl);
	char mem[32];
	if (rl.rlim_cur == RLIM_INFINITY)
		snprintf(mem, sizeof(mem), "unlimited");
	else
		snprintf(mem, sizeof(mem), "%llu KiB", (unsigned long long)rl.rlim_cur / 1024);
	/* The verdict is the check the client and server make before they start. */
	char err[256];
	bool ok = !xp_check_privileges(err, sizeof(err));
	it->title = "privileges";
	xp_probe_set(it, "privileges", ok ? XP_PROBE_YES : XP_PROBE_NO, "euid %u; effective: %s%s%s; memlock %s%s%s",
		     (unsigned)geteuid(), *have ? have : "none", *lack ? "; lacking: " : "", lack, mem,
		     ok ? "" : "; ", ok ? "" : err);
}

void xp_probe_kernel(struct xp_probe_kernel *k)
{
	struct utsname u;
	bool kfunc;

	memset(k, 0, sizeof(*k));
	if (!uname(&u))
		snprintf(k->release, sizeof(k->release), "%s", u.release);
	check_btf(&k->item[XP_PK_BTF], &kfunc);
	check_privileges(&k->item[XP_PK_PRIV]);
	uint64_t eff = 0, prm = 0;
	k->server_caps = xp_server_caps(XP_DEFAULT_TEST_PORT_LO, xp_unpriv_port_start());
	if (!xp_caps_current(&eff, &prm))
		k->server_caps_have = eff & k->server_caps;

	/* Live frames: a drop program run once in live mode on loopback sends nothing. */
	struct xp_probe_item *it = &k->item[XP_PK_LIVE];
	it->title = "BPF_PROG_RUN live frames";
	char err[256];
	int fd = xp_probe_prog_load(0, err, sizeof(err));
	k->can_load = fd >= 0;
	if (fd < 0) {
		xp_probe_set(it, "live_frames", XP_PROBE_UNKNOWN, "%s", err);
	} else {
		int lo = (int)if_nametoindex("lo");
		int r = xp_probe_live_run(fd, lo ? lo : 1);
		if (!r)
			xp_probe_set(it, "live_frames", XP_PROBE_YES,
				     "BPF_PROG_RUN ran an XDP program with BPF_F_TEST_XDP_LIVE_FRAMES (on lo, frame dropped)");
		else
			xp_probe_set(it, "live_frames", XP_PROBE_NO,
				     "BPF_PROG_RUN refused BPF_F_TEST_XDP_LIVE_FRAMES: %s (Linux 5.18 or later has it): "
				     "the live engine cannot run, use --engine xsk", strerror(-r));
		close(fd);
	}

	it = &k->item[XP_PK_FRAGS];
	it->title = "XDP multi-buffer";
	fd = k->can_load ? xp_probe_prog_load(BPF_F_XDP_HAS_FRAGS, err, sizeof(err)) : -EPERM;
	if (!k->can_load)
		xp_probe_set(it, "multi_buffer", XP_PROBE_UNKNOWN, "no BPF program could be loaded to check");
	else if (fd >= 0)
		xp_probe_set(it, "multi_buffer", XP_PROBE_YES,
			     "an XDP program with BPF_F_XDP_HAS_FRAGS loaded: frames larger than a page can reach XDP");
	else
		xp_probe_set(it, "multi_buffer", XP_PROBE_NO, "an XDP program with BPF_F_XDP_HAS_FRAGS was refused: %s",
			     err);
	if (fd >= 0)
		close(fd);

	it = &k->item[XP_PK_TSTAMP];
	it->title = "XDP RX timestamp kfunc";
	if (k->item[XP_PK_BTF].state != XP_PROBE_YES)
		xp_probe_set(it, "rx_timestamp_kfunc", XP_PROBE_UNKNOWN, "no kernel BTF to look the kfunc up in");
	else if (kfunc)
		xp_probe_set(it, "rx_timestamp_kfunc", XP_PROBE_YES,
			     "the kernel's BTF has the kfunc bpf_xdp_metadata_rx_timestamp (drivers that implement "
			     "it give XDP programs the RX timestamp)");
	else
		xp_probe_set(it, "rx_timestamp_kfunc", XP_PROBE_NO,
			     "the kernel's BTF has no bpf_xdp_metadata_rx_timestamp (Linux 6.3 or later has it)");
}
