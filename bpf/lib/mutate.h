/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Mutation testing of the BPF counters (scripts/mutate.sh, make mutate).
 *
 * XP_INC(p, field) is p->field += 1. In a test-only build with
 * -DXP_MUT_<field> (scripts/mutate.sh passes it to clang), that one counter
 * counts one frame too many: its first increment adds 1 more. The suite part
 * that checks the counter must then fail; a normal build compiles to the
 * plain increment (the condition is the constant 0).
 *
 * A counter whose field name another program also increments (the TC
 * program's pkts beside the XDP program's, a stream's recv beside an
 * interval bin's) gets a name of its own, so that one mutation breaks one
 * program's count and the tests of that program must notice:
 *   XP_INC_AS(name, p, field)     p->field += 1, mutated by -DXP_MUT_<name>
 *   XP_ADD_AS(name, lvalue, n)    lvalue += n, the same (a GSO packet's
 *                                 segments, a per-CPU array's slot)
 *   XP_ATOMIC_INC(p, field)       __sync_fetch_and_add(&p->field, 1), for a
 *                                 counter shared by CPUs, mutated by
 *                                 -DXP_MUT_<field> the same way
 * scripts/mutate.sh finds every name in these four forms.
 */
#ifndef XP_BPF_MUTATE_H
#define XP_BPF_MUTATE_H

/* The kernel's IS_ENABLED trick: 1 if the macro is defined (empty or 1), else 0. */
#define XP_MUT_PLACEHOLDER_1 0,
#define XP_MUT_PLACEHOLDER_ 0,
#define xp_mut_second(ignored, val, ...) val
#define xp_mut_on3(arg_or_junk) xp_mut_second(arg_or_junk 1, 0, 0)
#define xp_mut_on2(val) xp_mut_on3(XP_MUT_PLACEHOLDER_##val)
#define xp_mut_on(name) xp_mut_on2(name)

#define XP_ADD_AS(name, lv, n) ((lv) += (n) + (xp_mut_on(XP_MUT_##name) && (lv) == 0))
#define XP_INC_AS(name, p, field) XP_ADD_AS(name, (p)->field, 1)
#define XP_INC(p, field) XP_ADD_AS(field, (p)->field, 1)
#define XP_ATOMIC_INC(p, field) \
	__sync_fetch_and_add(&(p)->field, 1 + (xp_mut_on(XP_MUT_##field) && (p)->field == 0))

#endif
