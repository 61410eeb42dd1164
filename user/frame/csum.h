/*
 * Internet checksum (RFC 1071) helpers for building and patching frames.
 *
 * Convention, the same as the Linux kernel's csum_* helpers: 16-bit words are
 * read from memory in host order and every 16-bit checksum value here is the
 * field "as stored in the frame" (network order). This works because the
 * ones' complement sum is byte-order independent (RFC 1071 section 2(B)):
 * summing byte-swapped words gives the byte-swapped sum. So a result can be
 * memcpy'd straight into the header, and values read from a frame (ports,
 * old checksums) can be passed in without ntohs/htons.
 *
 * Pure functions: no syscalls, no state, usable from any thread.
 */
#ifndef XP_CSUM_H
#define XP_CSUM_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Add len bytes of buf to the 32-bit partial sum and return the new partial
 * sum (not folded, not complemented). Chain calls to sum scattered pieces;
 * only the last piece may have an odd length (an odd length is padded with a
 * zero byte, as RFC 1071 requires at the end of the data).
 */
uint32_t csum_partial(const void *buf, size_t len, uint32_t sum);

/*
 * Fold a partial sum to 16 bits and complement it: the value to store in a
 * checksum field (network order). A buffer that already contains its correct
 * checksum folds to 0.
 */
uint16_t csum_fold(uint32_t sum);

/*
 * Checksum of an IPv4 header of hdr_len bytes (20 without options). The
 * header's checksum field must be zero, or already correct (then 0 comes back,
 * which is how to verify one). Returns the field value (network order).
 */
uint16_t csum_ipv4_hdr(const void *iph, size_t hdr_len);

/*
 * Partial sums of the TCP/UDP pseudo-headers (RFC 793/768 for IPv4, RFC 8200
 * section 8.1 for IPv6). l4_len is the TCP/UDP header + payload length in
 * host order. Feed the result as `sum` into csum_partial over the L4 bytes.
 */
uint32_t csum_pseudo_v4(const struct in_addr *saddr, const struct in_addr *daddr,
			uint8_t proto, uint32_t l4_len, uint32_t sum);
uint32_t csum_pseudo_v6(const struct in6_addr *saddr, const struct in6_addr *daddr,
			uint8_t proto, uint32_t l4_len, uint32_t sum);

/*
 * Complete TCP/UDP checksum over pseudo-header + l4_len bytes at l4 (header
 * and payload; its checksum field must be zero). Returns the field value
 * (network order). For UDP a computed 0 is returned as 0xffff, because 0 in
 * the UDP checksum field means "no checksum" (RFC 768; RFC 8200 for IPv6).
 */
uint16_t csum_l4_v4(const struct in_addr *saddr, const struct in_addr *daddr,
		    uint8_t proto, const void *l4, size_t l4_len);
uint16_t csum_l4_v6(const struct in6_addr *saddr, const struct in6_addr *daddr,
		    uint8_t proto, const void *l4, size_t l4_len);

/*
 * RFC 1624 incremental update (equation 3: HC' = ~(~HC + ~m + m')): the new
 * checksum after one 16-bit word covered by `check` changes from old_val to
 * new_val. All three are as stored in the frame (network order). Cheap enough
 * to run per packet, which is the point: the sender patches ports in a
 * prebuilt frame instead of re-summing the whole payload.
 *
 * Generic: it does not know about UDP's "0 = no checksum" rule; callers that
 * patch UDP map a 0 result to 0xffff (frame_set_ports does).
 */
uint16_t csum_replace16(uint16_t check, uint16_t old_val, uint16_t new_val);

#endif /* XP_CSUM_H */
