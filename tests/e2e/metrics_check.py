#!/usr/bin/env python3
"""tests/e2e/98_metrics.sh's judge: what a real Prometheus scraped from the
server's --metrics during a stamped stream test, against the test's own -J
report and the server veth's XDP drop counter (ethtool), which xdpperf did
not write.

  metrics_check.py PROM_URL RUN_JSON XDP_DROPS SCRAPE_TEXT

- frames received: the last value of the server's series equals the
  report's received count and the veth's XDP drops (the server's program
  drops each test frame it counts);
- the series was scraped while the test ran (test_running 1, and at least
  two samples of the received count below its final value or equal);
- latency: histogram_quantile(0.99) over the server's buckets lies in the
  same bucket as xdpperf's own p99, or the next one (one bucket apart at
  most: PromQL interpolates inside a bucket, xdpperf gives its fine bucket's
  upper edge);
- the client's -J p99 is the figure compared, so the endpoint's histogram
  is the one the report's percentiles come from.
"""
import json
import sys
import urllib.parse
import urllib.request


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def query(url, q):
    with urllib.request.urlopen(url + "/api/v1/query?" + urllib.parse.urlencode({"query": q}), timeout=10) as r:
        d = json.load(r)
    if d.get("status") != "success":
        fail(f"query {q}: {d}")
    return d["data"]["result"]


def one(url, q):
    res = query(url, q)
    if len(res) != 1:
        fail(f"query {q}: want one series, got {len(res)}: {res}")
    v = res[0]["value"] if "value" in res[0] else None
    return res[0], float(v[1]) if v else None


def main():
    url, run_json, drops, scrape = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    doc = json.load(open(run_json))
    s = doc["end"]["sum"]
    recv = s["received"]["packets"]
    sent = s["sent"]["packets"]
    sel = 'role="server"'
    series, last = one(url, f"xdpperf_frames_received_total{{{sel}}}")
    print(f"Prometheus: frames received {last:.0f} (labels {series['metric']}); -J: received {recv} of {sent}; "
          f"server veth XDP drops {drops}")
    if int(last) != recv:
        fail(f"Prometheus' last frames_received {last:.0f} != the report's {recv}")
    if int(last) != drops:
        fail(f"Prometheus' last frames_received {last:.0f} != the server veth's XDP drops {drops}")
    if recv == 0:
        fail("nothing received: the test did not run")
    _, running = one(url, f"max_over_time(xdpperf_test_running{{{sel}}}[5m])")
    _, now = one(url, f"xdpperf_test_running{{{sel}}}")
    raw = query(url, f"xdpperf_frames_received_total{{{sel}}}[5m]")  # the scraped samples themselves
    vals = [float(v[1]) for v in raw[0]["values"]] if len(raw) == 1 else []
    below = sum(1 for v in vals if v < recv)
    print(f"scraped {len(vals)} samples of frames_received: {[int(v) for v in vals]}; test_running max "
          f"{running:.0f}, now {now:.0f}")
    if vals != sorted(vals):
        fail("frames_received went down between scrapes")
    if running != 1 or now != 0:
        fail("the test was not seen running, or is not seen ended")
    if below < 2:
        fail("fewer than two scrapes during the test")
    # Latency: the endpoint's bounds, from its own text.
    les = sorted({float(line.split(',le="')[1].split('"')[0]) for line in open(scrape)
                  if line.startswith("xdpperf_latency_seconds_bucket{") and 'le="+Inf"' not in line
                  and 'role="server"' in line})
    if not les:
        fail("no latency histogram in the scrape")
    m = s.get("measurement") or {}
    lat = m.get("latency")
    if not lat:
        fail(f"no latency in the report: {m.get('latency_withheld')}")
    own = lat["p99_ns"] * 1e-9
    _, pq = one(url, f"histogram_quantile(0.99, xdpperf_latency_seconds_bucket{{{sel}}})")
    _, cnt = one(url, f"xdpperf_latency_seconds_count{{{sel}}}")

    def bucket(v):
        return next((i for i, le in enumerate(les) if v <= le * (1 + 1e-9)), len(les))

    print(f"p99: Prometheus {pq * 1e9:.0f} ns (bucket {bucket(pq)}), xdpperf {own * 1e9:.0f} ns (bucket {bucket(own)}); "
          f"timed frames {cnt:.0f}, report's latency figures {json.dumps(lat)[:300]}")
    if abs(bucket(pq) - bucket(own)) > 1:
        fail("histogram_quantile(0.99) and xdpperf's p99 are more than one bucket apart")
    print("OK")


main()
