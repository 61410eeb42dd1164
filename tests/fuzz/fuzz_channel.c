/*
 * libFuzzer harness: the control channel's line reader (user/proto/
 * channel.c) on a byte stream from a peer, through a real socket pair: the
 * input is written in pieces (sizes taken from the input itself) and read
 * with xp_ctrl_poll_recv, the server's event-loop call, until the writer
 * closes. Checks what the reader promises:
 *  - every object it returns is a JSON object, and the bytes it consumed
 *    are whole lines: after the close, it has taken every line (returned
 *    or refused, -EPROTO) and holds exactly what followed the last one;
 *  - its buffer never exceeds XP_CTRL_MAX_MSG (a longer line is refused,
 *    -EPROTO, the 64 KiB line limit);
 *  - the parsing is json-c's tokener (its nesting limit included), and an
 *    object is returned only when it fills its line (whitespace aside):
 *    a line with text after its object is refused (issue 28 point 11).
 * A broken promise aborts (a crash to libFuzzer).
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto/channel.h"

#define PROMISE(cond) do { if (!(cond)) { fprintf(stderr, "broken promise: %s\n", #cond); abort(); } } while (0)

static struct xp_ctrl ctrl; /* its buffer grows to 64 KiB, as the server's for each client */

/* Drain what is buffered and readable: 0 when it wants more bytes, 1 when
 * it gave up on the stream (a line over the limit fills the buffer: the
 * server drops such a client), 2 when it saw the writer's close. */
static int drain(size_t *objects, size_t *refused)
{
	for (;;) {
		struct json_object *o = NULL;
		int r = xp_ctrl_poll_recv(&ctrl, &o);

		PROMISE(ctrl.len < ctrl.max_msg);
		if (r == 1) {
			PROMISE(o && json_object_is_type(o, json_type_object));
			json_object_put(o);
			(*objects)++;
			continue;
		}
		PROMISE(o == NULL);
		if (r == -EPROTO) {
			if (!memchr(ctrl.buf, '\n', ctrl.len) && ctrl.len >= ctrl.max_msg - 1)
				return 1;
			(*refused)++; /* a line that is no JSON object, consumed */
			continue;
		}
		if (r == 0)
			return 2;
		PROMISE(r == -EAGAIN);
		return 0;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int sv[2];
	size_t off = 0, objects = 0, refused = 0, lines = 0, after = 0;
	int done = 0;

	if (size < 1 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv))
		return 0;
	/* The first byte: its low bits pick the piece size (byte by byte up
	 * to 8 KiB, but at most 64 writes: a fuzzer that spends its time in
	 * write() finds nothing); with both top bits set the rest is repeated
	 * up to 66 KiB, past the 64 KiB line limit, which inputs of a few KiB
	 * (tests/fuzz/channel.options) would never reach. */
	size_t piece = 1u << ((data[0] & 0x7f) % 14), total;
	int repeat = (data[0] & 0xc0) == 0xc0;
	data++;
	size--;
	if (!size)
		goto out;
	total = repeat ? 66 * 1024 : size;
	if (piece < total / 64)
		piece = total / 64;
	xp_ctrl_init(&ctrl, sv[1]);
	while (off < total && !done) {
		size_t at = off % size, n = total - off < piece ? total - off : piece;
		if (n > size - at)
			n = size - at;
		ssize_t w = write(sv[0], data + at, n);
		if (w > 0) {
			for (ssize_t i = 0; i < w; i++) {
				after++;
				if (data[at + (size_t)i] == '\n') {
					lines++;
					after = 0;
				}
			}
			off += (size_t)w;
		}
		done = drain(&objects, &refused);
	}
	close(sv[0]);
	sv[0] = -1;
	while (!done)
		done = drain(&objects, &refused);
	/* Whole lines: everything the reader returned or refused ended in a
	 * newline that was written; at the close, every line was taken, and
	 * what it still holds is what came after the last newline. */
	PROMISE(objects + refused <= lines);
	if (done == 2)
		PROMISE(objects + refused == lines && ctrl.len == after);
out:
	if (sv[0] >= 0)
		close(sv[0]);
	close(sv[1]);
	xp_ctrl_free(&ctrl);
	return 0;
}
