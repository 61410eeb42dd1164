#!/usr/bin/env python3
"""Paste one bench run's output into README.md's bench section, as printed.

    scripts/bench/paste.py OUTPUT [README]

OUTPUT is what `scripts/bench.sh all` printed (stdout and stderr). Everything
between the markers "<!-- bench run: begin -->" and "<!-- bench run: end -->"
in README is replaced by OUTPUT in one fenced block, byte for byte (so no
figure is edited by hand). Exit 2 on usage, 1 when a marker is missing.
"""
import sys

BEGIN = "<!-- bench run: begin -->"
END = "<!-- bench run: end -->"


def main(argv):
    if len(argv) not in (2, 3):
        print("usage: paste.py OUTPUT [README]", file=sys.stderr)
        return 2
    out_path, readme = argv[1], argv[2] if len(argv) == 3 else "README.md"
    with open(out_path, encoding="utf-8") as f:
        run = f.read()
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    a, b = text.find(BEGIN), text.find(END)
    if a < 0 or b < a:
        print(f"paste.py: {readme} lacks the markers {BEGIN} ... {END}", file=sys.stderr)
        return 1
    if "```" in run:
        print(f"paste.py: {out_path} contains a code fence; not pasted", file=sys.stderr)
        return 1
    block = BEGIN + "\n\n```\n" + run.rstrip("\n") + "\n```\n\n"
    with open(readme, "w", encoding="utf-8") as f:
        f.write(text[:a] + block + text[b:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
