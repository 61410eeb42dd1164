/*
 * Per-CPU map values (BPF_MAP_TYPE_PERCPU_ARRAY / _HASH): a lookup returns one
 * copy of the value per possible CPU (libbpf_num_possible_cpus()), each
 * value_size bytes (a multiple of 8). Counters in them are __u64 fields;
 * readers want their sum over the CPUs.
 */
#ifndef XP_PERCPU_H
#define XP_PERCPU_H

#include <stddef.h>

struct bpf_map;

/*
 * out = the sum over ncpus copies (each value_size bytes, in percpu) of
 * their first out_size bytes, taken as __u64 fields. out_size <= value_size,
 * both multiples of 8.
 */
void xp_percpu_sum(const void *percpu, int ncpus, size_t value_size, void *out, size_t out_size);

/*
 * Look up key in a per-CPU map and sum the first out_size bytes (__u64
 * fields) of every CPU's value_size-byte copy into out: out_size ==
 * value_size sums every field, a smaller one only the leading ones.
 * 0, or -errno with out zeroed.
 */
int xp_percpu_read(const struct bpf_map *map, const void *key, size_t key_size, size_t value_size, void *out,
		   size_t out_size);

/*
 * Look up key in a per-CPU map as it is, for values whose fields are not all
 * sums (a minimum, a maximum, a tag that says which CPU's copy counts):
 * *copies gets one value_size-byte copy per possible CPU (calloc'd: the
 * caller frees it). Returns their number (> 0), or -errno with *copies NULL.
 */
int xp_percpu_lookup(const struct bpf_map *map, const void *key, size_t key_size, size_t value_size, void **copies);

/* Set key's value to zero on every CPU. 0 or -errno. */
int xp_percpu_zero(const struct bpf_map *map, const void *key, size_t key_size, size_t value_size);

#endif
