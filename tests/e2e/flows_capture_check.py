#!/usr/bin/env python3
"""Check a capture of flowxsk's two flows (tests/e2e/103_flows_capture.sh).

Input: tshark fields, one frame a line: frame.len ip.dst udp.srcport
udp.dstport ip.dsfield.dscp. Arguments: DST PORT FRAMES0 FRAMES1 ORDERED.
Flow 0: source ports 20000..20999 (random), destination DST + n % 100 and
port PORT + n % 10 for its frame number n; flow 1: source port 30000, DSCP 46.
ORDERED 1 (one sending thread): the k-th frame of flow 0 in the capture is
its frame k. Prints the figures; exit 1 on the first failed check.
"""
import ipaddress
import sys


def main():
    dst, port, f0, f1, ordered = sys.argv[1:6]
    dst0 = int(ipaddress.IPv4Address(dst))
    port, f0, f1, ordered = int(port), int(f0), int(f1), ordered == "1"
    flow0, flow1, other = [], [], 0
    for line in sys.stdin:
        p = line.split()
        if len(p) < 5:
            other += 1
            continue
        ln, d, sp, dp, dscp = int(p[0]), int(ipaddress.IPv4Address(p[1])), int(p[2]), int(p[3]), int(p[4], 0)
        if 20000 <= sp <= 20999:
            flow0.append((ln, d - dst0, sp, dp - port, dscp))
        elif sp == 30000:
            flow1.append((ln, d - dst0, sp, dp - port, dscp))
        else:
            other += 1
    bad = []
    print(f"captured flow0={len(flow0)} flow1={len(flow1)} other={other}")
    if len(flow0) != f0 or len(flow1) != f1:
        bad.append(f"frame counts {len(flow0)}/{len(flow1)}, engine sent {f0}/{f1}")
    if any(x[0] != 124 for x in flow0) or any(x[0] != 196 for x in flow1):
        bad.append("frame lengths not 124 (flow 0) / 196 (flow 1) bytes")
    if any(x[4] != 46 or x[1] != 0 or x[3] != 0 for x in flow1):
        bad.append("flow 1: DSCP, destination or port not as declared")
    # The declared increments: destination offset n % 100, port offset n % 10.
    if ordered:
        wrong = [k for k, x in enumerate(flow0) if x[1] != k % 100 or x[3] != k % 10]
        print(f"flow0 in order: {len(flow0) - len(wrong)} of {len(flow0)} frames at their place in the sequence")
        if wrong:
            bad.append(f"flow 0: frame {wrong[0]} is not the sequence's (dst +{flow0[wrong[0]][1]}, port +{flow0[wrong[0]][3]})")
    counts = [0] * 100
    for x in flow0:
        if not (0 <= x[1] < 100) or x[3] != x[1] % 10:
            bad.append(f"flow 0: destination +{x[1]} with port +{x[3]}")
            break
        counts[x[1]] += 1
    print(f"flow0 destinations: min {min(counts)} max {max(counts)} frames each")
    if f0 % 100 == 0 and (min(counts) != f0 // 100 or max(counts) != f0 // 100):
        bad.append("flow 0: destinations not equally often")
    # The random source port (20 000 draws before it repeats, so every frame of flow 0 a draw of its own):
    # 10 bins of 100 ports, chi-square, 9 degrees of freedom.
    bins = [0] * 10
    for x in flow0:
        bins[(x[2] - 20000) // 100] += 1
    exp = len(flow0) / 10
    chi2 = sum((b - exp) ** 2 / exp for b in bins) if exp else 0
    print(f"flow0 source ports: 10 bins {bins}, chi-square {chi2:.1f} (p = 0.001 at 27.9)")
    if chi2 >= 27.9:
        bad.append(f"flow 0: source ports not uniform (chi-square {chi2:.1f})")
    for b in bad:
        print("FAIL:", b)
    return 1 if bad else 0


sys.exit(main())
