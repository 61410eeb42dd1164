#!/usr/bin/env python3
"""Check a capture of one flow's frames against its flow file's patterns
(tests/e2e/103_flows_capture.sh, case xdpperf_patterns).

Arguments: FLOW_FILE FRAMES. Input: tshark fields, one frame a line:
frame.len ip.dst ip.ttl ip.dsfield.dscp udp.srcport udp.dstport.
The expected sequences are computed here from the file's OTG patterns, not
by xdpperf's code: value, values (values[n % len]), increment and decrement
(start +- (n % count) * step) for ipv4.dst, ipv4.time_to_live, the DSCP and
the UDP ports, and the size increment (start + (n % count) * step, the
captured length 4 bytes shorter: no FCS). Frame k of the capture must be the
flow's frame k (one sending thread). A random field must stay in [min, max]
and pass a chi-square test over 10 equal bins (9 degrees of freedom,
p = 0.001 at 27.88). Prints the figures; exit 1 on any failed check.
"""
import ipaddress
import json
import sys

CHI2_CRIT = 27.88


def num(v):
    return int(ipaddress.IPv4Address(v)) if isinstance(v, str) else int(v)


def seq(pat, width):
    """frame n -> value for a value/values/increment/decrement pattern, or None for random."""
    c = pat.get("choice", "value")
    mod = 1 << width
    if c == "value":
        v = num(pat["value"])
        return lambda n: v
    if c == "values":
        vs = [num(x) for x in pat["values"]]
        return lambda n: vs[n % len(vs)]
    if c in ("increment", "decrement"):
        p = pat[c]
        start, step, count = num(p["start"]), num(p["step"]), int(p["count"])
        sign = 1 if c == "increment" else -1
        return lambda n: (start + sign * (n % count) * step) % mod
    return None


def main():
    flow = json.load(open(sys.argv[1]))["flows"][0]
    frames = int(sys.argv[2])
    hdr = {h["choice"]: h[h["choice"]] for h in flow["packet"]}
    ip, udp = hdr["ipv4"], hdr["udp"]
    # (name, column in the input, pattern, width)
    fields = [("ipv4.dst", 1, ip["dst"], 32), ("ipv4.time_to_live", 2, ip["time_to_live"], 8),
              ("dscp", 3, ip["priority"]["dscp"]["phb"], 6),
              ("udp.src_port", 4, udp["src_port"], 16), ("udp.dst_port", 5, udp["dst_port"], 16)]
    size = flow["size"]["increment"]
    sizes = list(range(size["start"], size["end"] + 1, size["step"]))
    rows = []
    for line in sys.stdin:
        p = line.split()
        if len(p) == 6:
            rows.append([int(p[0]), num(p[1]), int(p[2]), int(p[3], 0), int(p[4]), int(p[5])])
    bad = []
    print(f"captured {len(rows)} frames, the engine was to send {frames}")
    if len(rows) != frames:
        bad.append(f"{len(rows)} frames captured, want {frames}")
    wrong = [k for k, r in enumerate(rows) if r[0] != sizes[k % len(sizes)] - 4]
    print(f"size increment {sizes[0]}..{sizes[-1]} step {size['step']}: {len(rows) - len(wrong)} frames at their place")
    if wrong:
        bad.append(f"frame {wrong[0]}: length {rows[wrong[0]][0]}")
    for name, col, pat, width in fields:
        f = seq(pat, width)
        if f:
            wrong = [k for k, r in enumerate(rows) if r[col] != f(k)]
            print(f"{name} {pat['choice']}: {len(rows) - len(wrong)} frames at their place, {len({r[col] for r in rows})} distinct values")
            if wrong:
                bad.append(f"{name}: frame {wrong[0]} has {rows[wrong[0]][col]}, the pattern says {f(wrong[0])}")
            continue
        lo, hi = num(pat["random"]["min"]), num(pat["random"]["max"])
        vals = [r[col] for r in rows]
        out = [v for v in vals if not lo <= v <= hi]
        bins = [0] * 10
        for v in vals:
            if lo <= v <= hi:
                bins[(v - lo) * 10 // (hi - lo + 1)] += 1
        exp = len(vals) / 10
        chi2 = sum((b - exp) ** 2 / exp for b in bins) if exp else float("inf")
        print(f"{name} random in [{lo}, {hi}]: {len(out)} outside, 10 bins {bins}, chi-square {chi2:.1f} (p = 0.001 at {CHI2_CRIT})")
        if out:
            bad.append(f"{name}: {len(out)} values outside [{lo}, {hi}], e.g. {out[0]}")
        if chi2 >= CHI2_CRIT:
            bad.append(f"{name}: not uniform (chi-square {chi2:.1f})")
    for b in bad:
        print("FAIL:", b)
    return 1 if bad else 0


sys.exit(main())
