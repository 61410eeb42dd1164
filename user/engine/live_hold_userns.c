/*
 * The live engine's dispatcher hold (live_prog.c, xp_gen_hold) without
 * CAP_SYS_ADMIN: a server keeps no CAP_SYS_ADMIN after setup
 * (util/privdrop.c), and its reverse senders run the live engine. A forked
 * helper makes a user namespace and a network namespace owned by it (no
 * capability needed where the kernel allows unprivileged user namespaces),
 * attaches the program to that namespace's loopback (a bpf_link: an XDP
 * program already loaded may be attached by whoever holds its fd), and
 * hands the link and a handle of the namespace back over a socket pair
 * (SCM_RIGHTS); then it exits and is reaped. The namespace lives as long as
 * the handle, as with the thread's way.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_link.h>
#include <sched.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/live_prog.h"

/* In the child: nothing but system calls (the parent may have threads). */
static void helper(int sock, int prog_fd)
{
	int fds[2] = { -1, -1 }, e = 0;
	if (unshare(CLONE_NEWUSER | CLONE_NEWNET)) {
		e = errno;
	} else if ((fds[1] = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC)) < 0) {
		e = errno;
	} else {
		LIBBPF_OPTS(bpf_link_create_opts, lo, .flags = XDP_FLAGS_SKB_MODE);
		fds[0] = bpf_link_create(prog_fd, 1 /* lo is the first device of a new namespace */, BPF_XDP, &lo);
		if (fds[0] < 0)
			e = errno;
	}
	char cbuf[CMSG_SPACE(sizeof(fds))] = { 0 };
	struct iovec iov = { .iov_base = &e, .iov_len = sizeof(e) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (!e) {
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(fds));
		memcpy(CMSG_DATA(cm), fds, sizeof(fds));
	}
	_exit(sendmsg(sock, &mh, 0) < 0 ? 1 : 0);
}

int xp_gen_hold_userns(int prog_fd, int *link_fd, int *ns_fd)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return errno;
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(sv[0]);
		close(sv[1]);
		return e;
	}
	if (pid == 0) {
		close(sv[0]);
		helper(sv[1], prog_fd);
	}
	close(sv[1]);
	int e = EPROTO, fds[2];
	char cbuf[CMSG_SPACE(sizeof(fds))];
	struct iovec iov = { .iov_base = &e, .iov_len = sizeof(e) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	ssize_t n;
	do
		n = recvmsg(sv[0], &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	close(sv[0]);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	struct cmsghdr *cm = n == (ssize_t)sizeof(e) ? CMSG_FIRSTHDR(&mh) : NULL;
	if (n != (ssize_t)sizeof(e))
		return EPROTO;
	if (e)
		return e;
	if (!cm || cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len != CMSG_LEN(sizeof(fds)))
		return EPROTO;
	memcpy(fds, CMSG_DATA(cm), sizeof(fds));
	*link_fd = fds[0];
	*ns_fd = fds[1];
	return 0;
}
