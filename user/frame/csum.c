/* Internet checksum helpers; see csum.h for the byte-order convention. */
#include "frame/csum.h"

#include <string.h>

uint32_t csum_partial(const void *buf, size_t len, uint32_t sum)
{
	const uint8_t *p = buf;
	/* Accumulate in 64 bits so no carry is lost however long the buffer;
	 * fold back to 32 bits at the end (end-around carry keeps it exact). */
	uint64_t acc = sum;

	while (len >= 2) {
		uint16_t w;

		memcpy(&w, p, 2); /* memcpy: frames need not be 2-byte aligned */
		acc += w;
		p += 2;
		len -= 2;
	}
	if (len) {
		/* Trailing odd byte: pad with a zero byte after it, in memory
		 * order, so it lands in the right half in either byte order. */
		uint8_t last[2] = { p[0], 0 };
		uint16_t w;

		memcpy(&w, last, 2);
		acc += w;
	}
	while (acc >> 32)
		acc = (acc & 0xffffffffu) + (acc >> 32);
	return (uint32_t)acc;
}

uint16_t csum_fold(uint32_t sum)
{
	/* Two rounds: the first can carry once more into bit 16. */
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

uint16_t csum_ipv4_hdr(const void *iph, size_t hdr_len)
{
	return csum_fold(csum_partial(iph, hdr_len, 0));
}

/* Add a host-order 16-bit quantity (length, protocol) to a partial sum in
 * the memory-order convention: store it big-endian, then read it back. */
static uint32_t add_be16(uint32_t sum, uint16_t v)
{
	uint16_t be = htons(v);

	return csum_partial(&be, 2, sum);
}

uint32_t csum_pseudo_v4(const struct in_addr *saddr, const struct in_addr *daddr,
			uint8_t proto, uint32_t l4_len, uint32_t sum)
{
	/* src(4) dst(4) zero(1) proto(1) length(2) */
	sum = csum_partial(saddr, 4, sum);
	sum = csum_partial(daddr, 4, sum);
	sum = add_be16(sum, proto);
	return add_be16(sum, (uint16_t)l4_len);
}

uint32_t csum_pseudo_v6(const struct in6_addr *saddr, const struct in6_addr *daddr,
			uint8_t proto, uint32_t l4_len, uint32_t sum)
{
	/* src(16) dst(16) length(4) zero(3) next-header(1) */
	uint32_t be_len = htonl(l4_len);

	sum = csum_partial(saddr, 16, sum);
	sum = csum_partial(daddr, 16, sum);
	sum = csum_partial(&be_len, 4, sum);
	return add_be16(sum, proto);
}

static uint16_t l4_final(uint32_t sum, uint8_t proto)
{
	uint16_t c = csum_fold(sum);

	return (c == 0 && proto == IPPROTO_UDP) ? 0xffff : c;
}

uint16_t csum_l4_v4(const struct in_addr *saddr, const struct in_addr *daddr,
		    uint8_t proto, const void *l4, size_t l4_len)
{
	uint32_t sum = csum_pseudo_v4(saddr, daddr, proto, (uint32_t)l4_len, 0);

	return l4_final(csum_partial(l4, l4_len, sum), proto);
}

uint16_t csum_l4_v6(const struct in6_addr *saddr, const struct in6_addr *daddr,
		    uint8_t proto, const void *l4, size_t l4_len)
{
	uint32_t sum = csum_pseudo_v6(saddr, daddr, proto, (uint32_t)l4_len, 0);

	return l4_final(csum_partial(l4, l4_len, sum), proto);
}

uint16_t csum_replace16(uint16_t check, uint16_t old_val, uint16_t new_val)
{
	/* RFC 1624 eqn 3. Eqn 2 (HC' = HC - m + m') is the one with the
	 * -0/+0 bug the RFC describes; eqn 3 stays in ones' complement
	 * addition throughout and so matches a full recomputation. */
	uint32_t sum = (uint16_t)~check;

	sum += (uint16_t)~old_val;
	sum += new_val;
	return csum_fold(sum);
}
