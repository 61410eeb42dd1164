#!/usr/bin/env python3
"""A hostile client of xdpperf's control port, for tests/e2e/80_hostile.sh.

Each subcommand replays one way of abusing the server and prints what the
server did, one fact per line ("key value"), for the shell script to check.
Everything is bounded in time and count. Standard library only.

  req HOST PORT LINE...            send each line, print every reply line, then how it ended
  flood HOST PORT N                N pipelined "{}" lines, never reading
  noread HOST PORT START N         a test, then N "sample" requests, never reading the replies
  lockout HOST PORT N EVERY SECS   N connections, each sending "{}" every EVERY s, for SECS at most
  ping HOST PORT SECS              connect, one unknown request, time the error reply; again for SECS
  hold HOST PORT START SECS        start a test, then say nothing (for a black-holed client)
  nag HOST PORT START EVERY SECS   start a test, then a valid "sample" every EVERY s, past its end
  auth HOST PORT KEYFILE MODE START  MODE good|wrong|replay|none|late|again|resign: the challenge-response
                                   by hand (again: a signed start the server refuses, then an unsigned one;
                                   resign: the same, then a new challenge and a signed start)
  fakeserver PORT MSG SECS         a control port that answers everything with error MSG
  churn HOST PORT START N EVERY SECS  N cycles, one every EVERY s (at most SECS in all): connect, START,
                                   stop if it started, close
  reverse HOST PORT REQ N GO SECS LINE...
                                   N connections each send REQ (a reverse trial); after 1 s those without
                                   a reply are "accepted"; then each LINE on a connection of its own (its
                                   reply printed); "ready"; when file GO exists (or after SECS) the N
                                   connections close at once

Options before the subcommand: --src ADDR[,ADDR...] (bind the client to ADDR; several: one after the other).
"""
import hashlib
import hmac
import json
import socket
import sys
import time

SRC = None
_src_next = 0
CONTEXT = b"xdpperf control auth v1\0"  # user/proto/auth.c, its terminating NUL included


def connect(host, port, timeout=5.0):
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.settimeout(timeout)
    if SRC:
        global _src_next
        srcs = SRC.split(",")
        s.bind((srcs[_src_next % len(srcs)], 0))
        _src_next += 1
    s.connect((host, int(port)))
    return s


def read_lines(s, until_eof=True, timeout=3.0, max_lines=1000):
    """Lines the server sent and how the connection ended: eof, reset, or open (still open at timeout)."""
    s.settimeout(timeout)
    buf, lines, end = b"", [], "open"
    deadline = time.monotonic() + timeout
    while len(lines) < max_lines:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        s.settimeout(left)
        try:
            d = s.recv(65536)
        except socket.timeout:
            break
        except ConnectionResetError:
            end = "reset"
            break
        if not d:
            end = "eof"
            break
        buf += d
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            lines.append(line.decode("utf-8", "replace"))
        if not until_eof and lines:
            break
    return lines, end


def out(key, val):
    print(f"{key} {val}", flush=True)


def cmd_req(host, port, *reqs):
    s = connect(host, port)
    for r in reqs:
        s.sendall(r.encode() + b"\n")
    lines, end = read_lines(s)
    for l in lines:
        out("reply", l)
    out("replies", len(lines))
    out("end", end)


def cmd_flood(host, port, n):
    s = connect(host, port)
    s.setblocking(False)
    chunk = b"{}\n" * 4096
    sent, total, t0 = 0, int(n) * 3, time.monotonic()
    end = "all sent"
    # Never read; stop when the server closes, or after 20 s of a full window.
    while sent < total and time.monotonic() - t0 < 20:
        try:
            off = sent % 3  # after a partial send, the stream goes on mid-line, not with a cut line
            k = s.send(chunk[off : off + min(len(chunk) - off, total - sent)])
            sent += k
        except BlockingIOError:
            time.sleep(0.01)
        except (BrokenPipeError, ConnectionResetError):
            end = "closed by server"
            break
    out("bytes_sent", sent)
    out("send_end", end)
    # Whatever the server said (it may have reset the connection meanwhile).
    s.setblocking(True)
    lines, how = read_lines(s, timeout=5)
    out("replies", len(lines))
    out("end", how)
    out("seconds", f"{time.monotonic() - t0:.1f}")


def cmd_noread(host, port, start, n):
    s = connect(host, port)
    s.sendall(start.encode() + b"\n")
    lines, _ = read_lines(s, until_eof=False, timeout=10)
    out("start_reply", lines[0] if lines else "none")
    if not lines or '"started"' not in lines[0]:
        return
    s.setblocking(False)
    line = b'{"op":"sample"}\n' * 256
    # A non-blocking send may take part of the buffer: the rest goes first
    # next time, or the stream would hold a cut line (a "bad message" to the
    # server, which then closes for that instead of for the replies unread).
    sent, t0, end, pending, nbytes = 0, time.monotonic(), "not dropped", b"", 0
    while sent < int(n) and time.monotonic() - t0 < 20:
        try:
            if not pending:
                pending = line
            k = s.send(pending)
            pending = pending[k:]
            nbytes += k
            sent = nbytes // 16
        except BlockingIOError:
            time.sleep(0.01)
        except (BrokenPipeError, ConnectionResetError):
            end = "dropped"
            break
    if end != "dropped":
        # The server may have closed after our last send: a read tells.
        s.setblocking(True)
        s.settimeout(5)
        try:
            while True:
                d = s.recv(1 << 20)
                if not d:
                    end = "dropped"
                    break
        except ConnectionResetError:
            end = "dropped"
        except socket.timeout:
            pass
    out("samples_sent", sent)
    out("end", end)
    out("seconds", f"{time.monotonic() - t0:.1f}")


def cmd_lockout(host, port, n, every, secs):
    n, every, secs = int(n), float(every), float(secs)
    conns, refused, t0 = [], [], time.monotonic()
    for _ in range(n):
        try:
            s = connect(host, port)
        except OSError as e:
            refused.append(str(e))
            continue
        conns.append(s)
    # Who was refused at once: an error line and EOF within a second.
    alive = []
    for s in conns:
        s.setblocking(False)
        time.sleep(0.005)
    time.sleep(1)
    msgs = set()
    for s in conns:
        try:
            d = s.recv(65536)
            if d:
                line = d.decode(errors="replace").strip()
                try:  # the message itself (JSON escapes its slashes)
                    line = json.loads(line.split("\n")[0]).get("msg", line)
                except ValueError:
                    pass
                msgs.add(line)
                refused.append("msg")
                continue
            refused.append("eof")
            continue
        except BlockingIOError:
            alive.append(s)
        except ConnectionResetError:
            refused.append("reset")
    out("connections", len(conns))
    out("refused_at_once", len(refused))
    for m in sorted(msgs):
        out("refusal", m)
    out("accepted", len(alive))
    closed_at = {}
    next_junk = time.monotonic()
    while alive and time.monotonic() - t0 < secs:
        now = time.monotonic()
        if now >= next_junk:
            for s in alive:
                try:
                    s.send(b"{}\n")
                except OSError:
                    pass
            next_junk = now + every
        for s in list(alive):
            try:
                d = s.recv(65536)
                if not d:
                    closed_at[s] = now - t0
                    alive.remove(s)
            except BlockingIOError:
                pass
            except OSError:
                closed_at[s] = now - t0
                alive.remove(s)
        time.sleep(0.05)
    out("closed_by_server", len(closed_at))
    out("still_open", len(alive))
    if closed_at:
        out("last_closed_at", f"{max(closed_at.values()):.1f}")


def cmd_ping(host, port, secs):
    t_end, worst, n, fails = time.monotonic() + float(secs), 0.0, 0, 0
    while time.monotonic() < t_end:
        t = time.monotonic()
        try:
            s = connect(host, port, timeout=10)
            s.sendall(b'{"op":"ping"}\n')
            lines, _ = read_lines(s, until_eof=False, timeout=10)
            s.close()
            if not lines or '"error"' not in lines[0]:
                fails += 1
        except OSError:
            fails += 1
        worst = max(worst, time.monotonic() - t)
        n += 1
        time.sleep(0.05)
    out("pings", n)
    out("failed", fails)
    out("worst_ms", int(worst * 1000))


def cmd_hold(host, port, start, secs):
    s = connect(host, port)
    s.sendall(start.encode() + b"\n")
    lines, _ = read_lines(s, until_eof=False, timeout=10)
    out("start_reply", lines[0] if lines else "none")
    t0 = time.monotonic()
    lines, end = read_lines(s, timeout=float(secs))
    out("end", end)
    out("seconds", f"{time.monotonic() - t0:.1f}")


def cmd_nag(host, port, start, every, secs):
    s = connect(host, port)
    s.sendall(start.encode() + b"\n")
    lines, _ = read_lines(s, until_eof=False, timeout=10)
    out("start_reply", lines[0] if lines else "none")
    t0, last, end = time.monotonic(), "", "open"
    while time.monotonic() - t0 < float(secs):
        try:
            s.sendall(b'{"op":"sample"}\n')
        except OSError:
            end = "closed"
            break
        lines, how = read_lines(s, until_eof=False, timeout=float(every))
        if lines:
            last = lines[-1]
        if how != "open":
            end = "closed"
            break
        time.sleep(float(every))
    out("end", end)
    out("last", last)
    out("seconds", f"{time.monotonic() - t0:.1f}")


def key_of(path):
    return open(path, "rb").read().rstrip(b"\r\n \t")


def challenge(s):
    s.sendall(b'{"op":"challenge"}\n')
    lines, _ = read_lines(s, until_eof=False, timeout=5)
    return json.loads(lines[0]).get("nonce", "") if lines else ""


def mac(key, nonce_hex, line):
    return hmac.new(key, CONTEXT + bytes.fromhex(nonce_hex) + line, hashlib.sha256).hexdigest()


def cmd_auth(host, port, keyfile, mode, start):
    key, line = key_of(keyfile), start.encode()
    s = connect(host, port)
    if mode == "none":
        s.sendall(line + b"\n")
    elif mode in ("again", "resign"):
        # A start the server refuses (port 22) though its MAC is right...
        bad = json.dumps(dict(json.loads(start), port_lo=22, port_hi=22)).encode()
        nonce = challenge(s)
        s.sendall(json.dumps({"op": "auth", "mac": mac(key, nonce, bad)}).encode() + b"\n" + bad + b"\n")
        lines, _ = read_lines(s, until_eof=False, timeout=5)
        for l in lines:
            out("reply", l)
        if mode == "again":
            # ...then a second start on the same connection without any: it must not ride on the first's.
            s.sendall(line + b"\n")
        else:
            # ...then a new challenge and a start with its own MAC: let in.
            nonce = challenge(s)
            s.sendall(json.dumps({"op": "auth", "mac": mac(key, nonce, line)}).encode() + b"\n" + line + b"\n")
        more, end = read_lines(s, timeout=5)
        for l in more:
            out("reply", l)
        out("replies", len(lines) + len(more))
        out("end", end)
        if more and '"started"' in more[0]:
            s.sendall(b'{"op":"stop"}\n')
        return
    elif mode == "late":  # a sample before any start: nothing but start may follow the answer
        nonce = challenge(s)
        s.sendall(json.dumps({"op": "auth", "mac": mac(key, nonce, line)}).encode() + b"\n" + b'{"op":"sample"}\n')
    else:
        nonce = challenge(s)
        if mode == "replay":
            # The answer to another connection's nonce: recorded on the wire, replayed here.
            other = connect(host, port)
            nonce = challenge(other)
            other.close()
        if mode == "wrong":
            key = b"not the key, but long enough"
        s.sendall(json.dumps({"op": "auth", "mac": mac(key, nonce, line)}).encode() + b"\n" + line + b"\n")
    lines, end = read_lines(s, timeout=5)
    for l in lines:
        out("reply", l)
    out("replies", len(lines))
    out("end", end)
    if lines and '"started"' in lines[0]:
        s.sendall(b'{"op":"stop"}\n')  # let the server end it at once


def cmd_fakeserver(port, msg, secs):
    ls = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    ls.bind(("::", int(port)))
    ls.listen(4)
    ls.settimeout(float(secs))
    out("listening", port)
    t_end = time.monotonic() + float(secs)
    reply = json.dumps({"op": "error", "msg": msg}).encode() + b"\n"
    while time.monotonic() < t_end:
        try:
            c, _ = ls.accept()
        except socket.timeout:
            break
        c.settimeout(5)
        try:
            while c.recv(65536):
                c.sendall(reply)
        except OSError:
            pass
        c.close()


def cmd_reverse(host, port, req, n, go, secs, *lines):
    import os
    conns = []
    for _ in range(int(n)):
        s = connect(host, port)
        s.sendall(req.encode() + b"\n")
        conns.append(s)
    time.sleep(1)
    accepted = 0
    for s in conns:
        s.setblocking(False)
        try:
            d = s.recv(65536)
            out("early", d.decode(errors="replace").strip() if d else "eof")
        except BlockingIOError:
            accepted += 1
        except OSError as e:
            out("early", str(e))
    out("accepted", accepted)
    for l in lines:
        s = connect(host, port)
        s.sendall(l.encode() + b"\n")
        got, _ = read_lines(s, until_eof=False, timeout=5)
        out("reply", got[0] if got else "none")
        s.close()
    out("ready", 1)
    t_end = time.monotonic() + float(secs)
    while not os.path.exists(go) and time.monotonic() < t_end:
        time.sleep(0.05)
    for s in conns:
        s.close()
    out("closed", len(conns))


def cmd_churn(host, port, start, n, every, secs):
    t0, cycles, started, refused, other, reasons = time.monotonic(), 0, 0, 0, 0, {}
    while cycles < int(n) and time.monotonic() - t0 < float(secs):
        time.sleep(max(0.0, t0 + cycles * float(every) - time.monotonic()))
        cycles += 1
        try:
            s = connect(host, port)
            s.sendall(start.encode() + b"\n")
            lines, _ = read_lines(s, until_eof=False, timeout=5)
            if lines and '"started"' in lines[0]:
                started += 1
                s.sendall(b'{"op":"stop"}\n')
                read_lines(s, until_eof=False, timeout=5)
            elif lines and '"error"' in lines[0]:
                refused += 1
                msg = json.loads(lines[0]).get("msg", "")
                reasons[msg] = reasons.get(msg, 0) + 1
            else:
                other += 1
            s.close()
        except OSError:
            other += 1
    out("cycles", cycles)
    out("seconds", f"{time.monotonic() - t0:.1f}")
    out("started", started)
    out("refused", refused)
    out("other", other)
    for m, k in sorted(reasons.items()):
        out("refusal", f"{k} x {m}")


def main(argv):
    global SRC
    if len(argv) >= 2 and argv[0] == "--src":
        SRC, argv = argv[1], argv[2:]
    cmds = {"req": cmd_req, "flood": cmd_flood, "noread": cmd_noread, "lockout": cmd_lockout, "ping": cmd_ping,
            "hold": cmd_hold, "nag": cmd_nag, "auth": cmd_auth, "fakeserver": cmd_fakeserver,
            "reverse": cmd_reverse, "churn": cmd_churn}
    if not argv or argv[0] not in cmds:
        print(__doc__, file=sys.stderr)
        return 2
    cmds[argv[0]](*argv[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
