#!/usr/bin/env python3
"""Every relative link of the Markdown docs leads somewhere.

    tests/tools/doc_links.py [FILE.md...]     (default: README.md and docs/**/*.md)

Run from the repository's top directory (tests/unit/test_docs.c does). For
each link or image, [text](target) or ![alt](target), outside code spans and
fenced blocks: a target with a scheme (https:, mailto:) is left alone; any
other must name a file or folder that exists, relative to the page, and its
#anchor, if any, a heading of that page (or of the same page for a bare
#anchor) under GitHub's rule for heading ids. Prints one line per broken
link and then "N links in M pages, K broken"; exit 1 if any is broken, 2 on
usage.
"""
import glob
import os
import re
import sys

LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^()\s]+(?:\([^()]*\))?)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")


def slug(heading):
    """GitHub's id of a heading: its text lowercased, punctuation but '-' and '_' dropped, spaces as '-'."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading: its text
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def prose_lines(path):
    """(line number, text) of the lines outside fenced blocks, as written."""
    fence = None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = FENCE.match(line)
            if m:
                if fence is None:
                    fence = m.group(1)
                elif m.group(1) == fence:
                    fence = None
                continue
            if fence is None:
                yield n, line.rstrip("\n")


def anchors(path, cache={}):
    """The ids of a page's headings; a repeated one gets -1, -2... as GitHub numbers them."""
    if path not in cache:
        ids, seen = set(), {}
        for _, line in prose_lines(path):
            m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if not m:
                continue
            base = slug(m.group(1))
            k = seen.get(base, 0)
            seen[base] = k + 1
            ids.add(base if k == 0 else f"{base}-{k}")
        cache[path] = ids
    return cache[path]


def check(path):
    links, broken = 0, []
    here = os.path.dirname(path)
    for n, line in prose_lines(path):
        # a link written inside a code span is an example, not a link
        line = CODE_SPAN.sub(lambda s: " " * len(s.group(0)), line)
        for m in LINK.finditer(line):
            target = m.group(1)
            links += 1
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
                continue  # https:, mailto: ...: not ours to check
            file, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(here, file)) if file else path
            if not os.path.exists(dest):
                broken.append(f"{path}:{n}: {target}: no such file {dest}")
            elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                broken.append(f"{path}:{n}: {target}: {dest} has no heading with id '{anchor}'")
            elif anchor and not dest.endswith(".md"):
                broken.append(f"{path}:{n}: {target}: an anchor into a file that is not Markdown")
    return links, broken


def main(argv):
    if any(a.startswith("-") for a in argv[1:]):
        print("usage: doc_links.py [FILE.md...]", file=sys.stderr)
        return 2
    pages = argv[1:] or ["README.md"] + sorted(glob.glob("docs/**/*.md", recursive=True))
    total, bad = 0, []
    for p in pages:
        if not os.path.isfile(p):
            print(f"doc_links.py: {p}: no such file", file=sys.stderr)
            return 2
        n, b = check(p)
        total += n
        bad += b
    for b in bad:
        print(b)
    print(f"{total} links in {len(pages)} pages, {len(bad)} broken")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
