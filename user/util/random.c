/* Random bytes for keys and seeds. See random.h. */
#include "util/random.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "util/time.h"

int xp_random_fill(void *buf, size_t len, bool weak_ok)
{
	unsigned char *p = buf;
	size_t got = 0;
	while (got < len) {
		/* Large requests may come back short (a signal): ask for the rest. */
		ssize_t n = getrandom(p + got, len - got, weak_ok ? GRND_NONBLOCK : 0);
		if (n > 0) {
			got += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (!weak_ok) {
			if (n == 0)
				errno = EIO;
			return -errno;
		}
		break;
	}
	if (got == len)
		return 0;
	/* xorshift64 from the time and the pid: differs per run, not a secret. */
	uint64_t x = 0x9e3779b97f4a7c15ULL ^ (uint64_t)(xp_now() * 1e9) ^ ((uint64_t)getpid() << 32);
	while (got < len) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		size_t k = len - got < sizeof(x) ? len - got : sizeof(x);
		memcpy(p + got, &x, k);
		got += k;
	}
	return 0;
}

uint64_t xp_random_seed(void)
{
	uint64_t s;
	xp_random_fill(&s, sizeof(s), true);
	return s;
}
