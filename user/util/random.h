/* Random bytes for keys and seeds (ISN keys, SYN-cookie secrets, stream payloads). */
#ifndef XP_RANDOM_H
#define XP_RANDOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Fill buf with len bytes from getrandom(2).
 * weak_ok: never blocks; if the kernel cannot give them now (entropy pool not
 * yet initialised, early at boot; or no getrandom) fills buf from a generator
 * seeded with the time and the pid instead, and returns 0. Enough where the
 * bytes only have to differ from run to run (ISN keys, payloads).
 * !weak_ok: waits for the pool if need be; returns -errno (errno set) if the
 * bytes cannot be had. For secrets (the SYN-cookie key).
 */
int xp_random_fill(void *buf, size_t len, bool weak_ok);

/* A fresh 64-bit seed per call: xp_random_fill(weak_ok = true). */
uint64_t xp_random_seed(void);

#endif
