#!/usr/bin/env python3
"""Write one bench run's output, as printed, as a page of docs/benchmarks/.

    scripts/bench/paste.py OUTPUT PAGE

OUTPUT is what `scripts/bench.sh` printed (stdout and stderr; bench.sh calls
this itself at the end of a run that finished). PAGE (e.g.
docs/benchmarks/2026-12-05-0534-all.md) gets a title from the run's first
lines (its command and date), a line saying where it came from, and OUTPUT in
one fenced block, byte for byte (so no figure is edited by hand). The method
and the targets are described once, in docs/benchmarks.md, which the page
links. Exit 2 on usage, 1 when OUTPUT is not a bench run or holds a fence.
"""
import os
import re
import sys


def main(argv):
    if len(argv) != 3:
        print("usage: paste.py OUTPUT PAGE", file=sys.stderr)
        return 2
    out_path, page = argv[1], argv[2]
    with open(out_path, encoding="utf-8") as f:
        run = f.read()
    cmd = re.search(r"^\$ (scripts/bench\.sh.*)$", run, re.M)
    date = re.search(r"^date: (.*)$", run, re.M)
    if not cmd or not date:
        print(f"paste.py: {out_path} is not a bench run (no '$ scripts/bench.sh' and 'date:' lines)", file=sys.stderr)
        return 1
    if "```" in run:
        print(f"paste.py: {out_path} contains a code fence; not written", file=sys.stderr)
        return 1
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    method = os.path.relpath(os.path.join(root, "docs/benchmarks.md"), os.path.dirname(os.path.abspath(page)))
    text = (f"# Bench run: `{cmd.group(1).strip()}`, {date.group(1).strip()}\n\n"
            "Written by `scripts/bench.sh` at the end of the run (`scripts/bench/paste.py`): its output as\n"
            "printed, stdout and stderr, lab.sh's progress lines included. Its first lines give the date, the\n"
            "machine and the settings, its last the list of every target the run checked, met or NOT met.\n"
            f"What each section measures, against which counters: [Benchmarks]({method}).\n\n"
            "```\n" + run.rstrip("\n") + "\n```\n")
    with open(page, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
