/* Per-CPU map values: read and summed, or zeroed. See percpu.h. */
#include "loader/percpu.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void xp_percpu_sum(const void *percpu, int ncpus, size_t value_size, void *out, size_t out_size)
{
	const uint64_t *src = percpu;
	uint64_t *dst = out;
	size_t n = out_size / sizeof(uint64_t), stride = value_size / sizeof(uint64_t);
	memset(out, 0, out_size);
	for (int c = 0; c < ncpus; c++, src += stride)
		for (size_t f = 0; f < n; f++)
			dst[f] += src[f];
}

/* One copy of value_size bytes per possible CPU, zeroed; NULL (errno set) on failure. */
static void *percpu_alloc(size_t value_size, int *ncpus)
{
	*ncpus = libbpf_num_possible_cpus();
	if (*ncpus <= 0) {
		errno = *ncpus < 0 ? -*ncpus : EINVAL;
		return NULL;
	}
	return calloc((size_t)*ncpus, value_size);
}

int xp_percpu_lookup(const struct bpf_map *map, const void *key, size_t key_size, size_t value_size, void **copies)
{
	int ncpus;
	*copies = NULL;
	void *v = percpu_alloc(value_size, &ncpus);
	if (!v)
		return -errno;
	int r = bpf_map__lookup_elem(map, key, key_size, v, value_size * (size_t)ncpus, 0);
	if (r) {
		free(v);
		return r;
	}
	*copies = v;
	return ncpus;
}

int xp_percpu_read(const struct bpf_map *map, const void *key, size_t key_size, size_t value_size, void *out,
		   size_t out_size)
{
	void *v;
	memset(out, 0, out_size);
	int ncpus = xp_percpu_lookup(map, key, key_size, value_size, &v);
	if (ncpus < 0)
		return ncpus;
	xp_percpu_sum(v, ncpus, value_size, out, out_size);
	free(v);
	return 0;
}

int xp_percpu_zero(const struct bpf_map *map, const void *key, size_t key_size, size_t value_size)
{
	int ncpus;
	void *v = percpu_alloc(value_size, &ncpus);
	if (!v)
		return -errno;
	int r = bpf_map__update_elem(map, key, key_size, v, value_size * (size_t)ncpus, 0);
	free(v);
	return r;
}
