/*
 * The kinds of test: what a test is before anything about how it runs. The
 * control protocol names them (proto/messages.c, "kind"), the figures and the
 * report tell them apart.
 */
#ifndef XP_SPEC_KIND_H
#define XP_SPEC_KIND_H

enum xp_test_kind {
	XP_TEST_STREAM = 0,  /* data frames / streams */
	XP_TEST_CONNECT,     /* connection rate (-x) */
	XP_TEST_HOLD,        /* held connections (-k) */
};
/* A set of kinds (what an engine runs, engine/engine.h): one bit per kind. */
#define XP_TEST_BIT(k) (1u << (k))

#endif
