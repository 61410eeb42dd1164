/*
 * Engine names: one table (spec/engine_names.c) serves the command line, the
 * control protocol and the report. Which engine a test runs is part of what
 * the test is; what an engine is and does is in engine/engine.h, and the
 * engines' ops by these ids in engine/registry.c.
 */
#ifndef XP_ENGINE_NAMES_H
#define XP_ENGINE_NAMES_H

/* In the order --help and error messages list them. */
enum xp_engine_id {
	XP_ENGINE_AUTO = 0, /* the first of live, xsk that can run here */
	XP_ENGINE_LIVE,     /* XDP live frames (BPF_PROG_RUN) */
	XP_ENGINE_XSK,      /* AF_XDP sockets */
	XP_ENGINE_XDP,      /* the XDP connection engine: a SYN sender + the client's handshake program */
	XP_ENGINE_SOCKET,   /* the kernel's TCP stack */
	XP_ENGINE_NONE,     /* sends nothing: an outside generator does */
	XP_ENGINE_COUNT
};

/* The name of id ("auto", "live", ...). */
const char *xp_engine_name(enum xp_engine_id id);
/* id of name; 0, or -1 if there is no such engine. */
int xp_engine_by_name(const char *name, enum xp_engine_id *id);

#endif
