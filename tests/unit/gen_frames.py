#!/usr/bin/env python3
"""Independent generator of the golden frames checked by test_frame_build.c.

Written from the RFCs with only struct/socket (no scapy, nothing shared with
user/frame/frame.c) so the C builder is checked against a second implementation.
Run it and paste the output into the GOLDEN table of test_frame_build.c when a
case changes:

    python3 tests/unit/gen_frames.py

test_frame_build.c and test_frame_rewrite.c also pipe every frame they build or
rewrite into `gen_frames.py --verify` (verify_checksums() of
tests/unit/frame_fixture.h), which checks its checksums with the csum() below.

The case parameters here must match the specs built by make_spec() in
tests/unit/frame_fixture.h (same names).
"""
import socket
import struct
import sys

SRC_MAC = bytes.fromhex("020000000001")
DST_MAC = bytes.fromhex("020000000002")
SRC4, DST4 = "10.0.0.1", "10.0.0.2"
SRC6, DST6 = "fd00::1", "fd00::2"
TCP, UDP = 6, 17
FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10


def csum(data):
    """RFC 1071: ones' complement of the ones' complement sum of BE words."""
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def eth(ethertype, vlan):
    if vlan:
        return DST_MAC + SRC_MAC + struct.pack("!HHH", 0x8100, vlan, ethertype)
    return DST_MAC + SRC_MAC + struct.pack("!H", ethertype)


def syn_options(mss):
    # Linux order: MSS, SACK-permitted + timestamps, NOP + window scale.
    return (struct.pack("!BBH", 2, 4, mss) + struct.pack("!BBBBII", 4, 2, 8, 10, 1, 0)
            + struct.pack("!BBBB", 1, 3, 3, 7))


def l4_header(proto, sport, dport, l4len, flags=0, seq=0, ack=0, window=65535, opts=b""):
    if proto == UDP:
        return struct.pack("!HHHH", sport, dport, l4len, 0)
    doff = (20 + len(opts)) // 4
    return struct.pack("!HHIIBBHHH", sport, dport, seq, ack, doff << 4, flags,
                       window, 0, 0) + opts


def with_l4_csum(l4, proto, pseudo):
    c = csum(pseudo + l4)
    if proto == UDP and c == 0:
        c = 0xFFFF
    off = 16 if proto == TCP else 6
    return l4[:off] + struct.pack("!H", c) + l4[off + 2:]


def frame(v6, proto, size, sport, dport, flags=0, seq=0, ack=0, window=65535,
          ttl=64, vlan=0, fill=0xAB, syn_opts=False, mss=None, no_payload=False):
    """size is the wire size incl. FCS; returns the bytes without FCS."""
    opts = syn_options(mss or (1440 if v6 else 1460)) if syn_opts else b""
    l4hlen = (20 + len(opts)) if proto == TCP else 8
    l2hlen = 14 + (4 if vlan else 0)
    l3hlen = 40 if v6 else 20
    plen = 0 if no_payload else size - 4 - l2hlen - l3hlen - l4hlen
    assert plen >= 0
    payload = bytes([fill]) * plen
    l4len = l4hlen + plen
    l4 = l4_header(proto, sport, dport, l4len, flags, seq, ack, window, opts) + payload
    if v6:
        s, d = socket.inet_pton(socket.AF_INET6, SRC6), socket.inet_pton(socket.AF_INET6, DST6)
        pseudo = s + d + struct.pack("!I3xB", l4len, proto)
        l3 = struct.pack("!IHBB", 6 << 28, l4len, proto, ttl) + s + d
        f = eth(0x86DD, vlan) + l3 + with_l4_csum(l4, proto, pseudo)
    else:
        s, d = socket.inet_pton(socket.AF_INET, SRC4), socket.inet_pton(socket.AF_INET, DST4)
        pseudo = s + d + struct.pack("!BBH", 0, proto, l4len)
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + l4len, 0, 0x4000, ttl, proto, 0, s, d)
        ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
        f = eth(0x0800, vlan) + ip + with_l4_csum(l4, proto, pseudo)
    if len(f) < 60:  # Ethernet minimum: zero padding after the IP packet
        f += b"\0" * (60 - len(f))
    return f


# name -> frame; keep in sync with make_spec() in frame_fixture.h
CASES = {
    "v4_tcp_64": frame(False, TCP, 64, 40000, 5001, ACK | PSH, 0x11223344, 0x55667788),
    "v4_tcp_1518": frame(False, TCP, 1518, 40000, 5001, ACK | PSH, 0x11223344, 0x55667788),
    "v6_tcp_78": frame(True, TCP, 78, 40000, 5001, ACK | PSH, 0x11223344, 0x55667788),
    "v4_udp_64": frame(False, UDP, 64, 40000, 5001),
    "v6_udp_66": frame(True, UDP, 66, 40000, 5001),
    "v6_udp_200": frame(True, UDP, 200, 40000, 5001, fill=0x5A, ttl=3),
    "v4_tcp_vlan_64": frame(False, TCP, 64, 40000, 5001, ACK | PSH, 0x11223344,
                            0x55667788, vlan=100),
    "v6_udp_vlan_128": frame(True, UDP, 128, 40000, 5001, vlan=4094),
    "v4_syn_opts": frame(False, TCP, 78, 40000, 5001, SYN, 0x11223344, 0, 64240,
                         syn_opts=True),
    "v6_syn_opts_mss": frame(True, TCP, 98, 40000, 5001, SYN, 0x11223344, 0, 64240,
                             syn_opts=True, mss=8940),
    "v4_ack_nopayload": frame(False, TCP, 0, 40000, 5001, ACK, 0x11223344, 0x55667788,
                              no_payload=True),
    "v4_udp_nopayload": frame(False, UDP, 0, 40000, 5001, no_payload=True),
}


def verify(lines):
    """--verify: hex frames on stdin, one a line; every IPv4 header checksum and
    every TCP/UDP checksum (with its pseudo-header) must sum to 0. Prints a
    line per bad frame, exits 1 if there was one (or no frame at all)."""
    n = bad = 0
    for line in lines:
        f = bytes.fromhex(line.strip())
        if not f:
            continue
        n += 1
        if len(f) < 34:
            print("frame %d: %d bytes, too short for Ethernet + IP" % (n, len(f)))
            bad += 1
            continue
        off, etype = 14, struct.unpack("!H", f[12:14])[0]
        if etype == 0x8100:
            off, etype = 18, struct.unpack("!H", f[16:18])[0]
        if etype == 0x0800:
            ihl = (f[off] & 0x0F) * 4
            total, proto = struct.unpack("!H", f[off + 2:off + 4])[0], f[off + 9]
            l4 = f[off + ihl:off + total]
            pseudo = f[off + 12:off + 20] + struct.pack("!BBH", 0, proto, len(l4))
            ok = csum(f[off:off + ihl]) == 0
        elif etype == 0x86DD:
            plen, proto = struct.unpack("!H", f[off + 4:off + 6])[0], f[off + 6]
            l4 = f[off + 40:off + 40 + plen]
            pseudo = f[off + 8:off + 40] + struct.pack("!I3xB", len(l4), proto)
            ok = True
        else:
            print("frame %d: ethertype %#x is not IP" % (n, etype))
            bad += 1
            continue
        if proto not in (TCP, UDP) or csum(pseudo + l4) != 0 or not ok:
            print("frame %d: bad checksum (proto %d): %s" % (n, proto, f.hex()))
            bad += 1
    print("gen_frames.py --verify: %d frames, %d with a bad checksum" % (n, bad), file=sys.stderr)
    return 1 if bad or not n else 0


def main():
    if sys.argv[1:] == ["--verify"]:
        sys.exit(verify(sys.stdin))
    print("/* Generated by tests/unit/gen_frames.py; do not edit by hand. */")
    for name, f in CASES.items():
        hx = f.hex()
        print("\t{ \"%s\", %d," % (name, len(f)))
        for i in range(0, len(hx), 64):
            print("\t  \"%s\"" % hx[i:i + 64])
        print("\t},")


if __name__ == "__main__":
    main()
