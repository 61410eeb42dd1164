/*
 * A test's defaults where no setting says otherwise: the ports its frames
 * and connections use. The command line's options start from them, and so
 * does whatever else builds a test (--probe's trial frame).
 */
#ifndef XP_SPEC_DEFAULTS_H
#define XP_SPEC_DEFAULTS_H

/* The server's ports (-p) and the client's source ports (--cport). */
#define XP_DEFAULT_PORT_LO 63000
#define XP_DEFAULT_PORT_HI 63015
#define XP_DEFAULT_CPORT_LO 10000
#define XP_DEFAULT_CPORT_HI 59999

/* The ports a server lets tests use (--test-ports): what --probe's
 * capability line assumes too (below 1024 needs CAP_NET_BIND_SERVICE). */
#define XP_DEFAULT_TEST_PORT_LO 1024
#define XP_DEFAULT_TEST_PORT_HI 65535

#endif
