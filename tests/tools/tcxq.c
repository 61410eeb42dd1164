/* The programs on an interface's tcx ingress, one name per line: what the
 * e2e tests and scripts/bench.sh check is (or is not) on the server's veth
 * during and after socket tests. bpftool 7.1 (Debian 12) predates tcx and
 * lists tcx links machine-wide without their interface; BPF_PROG_QUERY asks
 * the interface itself. Built by make (build/tests/tools/tcxq).
 *
 *   tcxq IFNAME      exit 0 (none attached: no output), 1 on error, 2 usage
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* enum bpf_attach_type's BPF_TCX_INGRESS (Linux 6.6), newer than the UAPI headers here */
#define TCX_INGRESS 46

int main(int argc, char **argv)
{
	__u32 ids[64], cnt = 64, flags = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: tcxq IFNAME\n");
		return 2;
	}
	unsigned ifi = if_nametoindex(argv[1]);
	if (!ifi) {
		fprintf(stderr, "tcxq: no interface %s\n", argv[1]);
		return 1;
	}
	if (bpf_prog_query((int)ifi, TCX_INGRESS, 0, &flags, ids, &cnt)) {
		fprintf(stderr, "tcxq: cannot query %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	for (__u32 i = 0; i < cnt; i++) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);
		int fd = bpf_prog_get_fd_by_id(ids[i]);
		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
			printf("id:%u\n", ids[i]);
		else
			printf("%s\n", info.name);
		if (fd >= 0)
			close(fd);
	}
	return 0;
}
