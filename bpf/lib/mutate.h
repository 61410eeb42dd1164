/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Mutation testing of the BPF counters (scripts/mutate.sh, make mutate).
 *
 * XP_INC(p, field) is p->field += 1. In a test-only build with
 * -DXP_MUT_<field> (scripts/mutate.sh passes it to clang), that one counter
 * counts one frame too many: its first increment adds 2. The suite part
 * that checks the counter must then fail; a normal build compiles to the
 * plain increment (the condition is the constant 0).
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

#define XP_INC(p, field) ((p)->field += 1 + (xp_mut_on(XP_MUT_##field) && (p)->field == 0))

#endif
