#!/usr/bin/env python3
"""Masks what a run measured out of xdpperf's output, keeping its form.

    mask.py text < out.txt     the text report: every number becomes N, runs of
                               lines that are the same after that become one;
                               verdicts and who held a rate back are masked too
    mask.py json < out.json    -J's object: the paths of its keys in document
                               order, each with its type (a scalar is a value);
                               the settings' strings and booleans keep their
                               value; an array is what all its elements have

What is left is what must not change when the code is reorganised: which lines,
which words, which keys in which order (a key that only some runs have, because of what
they found, would not belong here). tests/e2e/93_golden.sh compares it with
the files in tests/golden/ written before the change.
"""
import json
import re
import sys

NUM = re.compile(r"[-+]?\d+(?:[.:]\d+)*(?:e[-+]?\d+)?")
# Words that follow a measured figure rather than the settings: a trial's
# verdict, a unit prefix picked by the size of the figure (k, M, G).
WORDS = [
    # One or several spaces before a figure: the columns move with its width.
    (re.compile(r" {2,}"), " "),
    (re.compile(r"\b(?:pass|fail|PASS|FAIL|passed|failed|short)\b"), "VERDICT"),
    # Who held a rate back, as the run found it.
    (re.compile(r" N (?:the device|the sender's maximum|sender-limited: ).*$"), " N LIMITED-BY"),
    (re.compile(r" - sender-limited: the device took all the sender offered$"), ""),
    (re.compile(r"\bN ?[kMGT](?=(?:pps|bps|bit|B|b|cps|/s| |$))"), "N"),
    (re.compile(r"\bN ?[kMGT]?(?:[A-Za-z]*/s|pps|bps|cps)\b"), "N RATE"),
    # A time that picked its unit by its size.
    (re.compile(r"\bN ?(?:ns|us|µs|ms)\b"), "N TIME"),
    # A time of day and a wall-clock date.
    (re.compile(r"\bN-N-N[T ]N\S*"), "TIME"),
]


def mask_text(src):
    out, last = [], None
    for line in src.splitlines():
        # Said only when the host fell behind (a busy shared machine): not the form.
        if line.startswith("Warning: the offered load reached"):
            continue
        line = NUM.sub("N", line.rstrip())
        for rx, rep in WORDS:
            line = rx.sub(rep, line)
        if line != last:
            out.append(line)
        last = line
    return "\n".join(out) + "\n"


# The objects that hold a run's settings (-J's start, a suite's settings, a
# search's): their strings and booleans are kept. Everything else the run found.
SETTINGS = (".start.", ".settings.", ".search.")


def kind(v):
    if isinstance(v, bool):
        return "bool"
    if v is None or isinstance(v, (int, float)):
        return "number"  # a figure may be null where nothing was measured
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def walk(v, path, in_array, seen, out):
    k = kind(v)
    if k == "object":
        line = f"{path or '.'}: object"
    elif k == "array":
        line = f"{path}: array"
    elif k in ("string", "bool") and path.startswith(SETTINGS):
        line = f"{path}: {json.dumps(v)}"
    else:
        line = f"{path}: value"  # a figure, or a verdict the run reached
    if line not in seen:
        seen.add(line)
        out.append(line)
    if k == "object":
        for key, sub in v.items():
            walk(sub, f"{path}.{key}", in_array, seen, out)
    elif k == "array" and v:
        # What every element has: a key that only some have is there
        # because of what those found (a trial that fell short says why).
        shapes = []
        for sub in v:
            lines = []
            walk(sub, f"{path}[]", True, set(), lines)
            shapes.append(lines)
        common = set(shapes[0]).intersection(*map(set, shapes[1:]))
        for line in shapes[0]:
            if line in common and line not in seen:
                seen.add(line)
                out.append(line)


def mask_json(src):
    out = []
    dec = json.JSONDecoder()
    src = src.strip()
    pos = 0
    while pos < len(src):  # --json-stream: one object a line
        obj, end = dec.raw_decode(src, pos)
        walk(obj, "", False, set(), out)
        out.append("--")
        pos = end
        while pos < len(src) and src[pos].isspace():
            pos += 1
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    data = sys.stdin.read()
    if mode == "text":
        sys.stdout.write(mask_text(data))
    elif mode == "json":
        sys.stdout.write(mask_json(data))
    else:
        sys.exit("usage: mask.py text|json < output")
