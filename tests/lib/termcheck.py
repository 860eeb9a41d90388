#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Text a terminal can trust, as docs/output.md states the rule, written
here from the rule (Python's own strict UTF-8 decoder, not the library's):

  escape(b): the bytes b as dsostore prints an input's string: C0 controls
  but the tab and DEL as \\xNN; C1 (U+0080-U+009F) and the bidi controls
  U+202A-U+202E, U+2066-U+2069 as \\uNNNN; each byte that is not part of
  valid UTF-8 as \\xNN; all else itself.

  python3 termcheck.py FILE...: exit 1, naming each line, when a file holds
  a byte or code point a terminal acts on other than the newline that ends
  a line and the tab: any other C0 control, DEL, C1, a bidi control, or a
  byte that is not valid UTF-8.
"""
import sys

BIDI = set(range(0x202A, 0x202F)) | set(range(0x2066, 0x206A))


def hostile(cp):
    return (cp < 0x20 and cp != 9) or 0x7F <= cp <= 0x9F or cp in BIDI


def escape(b):
    # backslashreplace on decode: each byte of an invalid sequence as \xNN
    s = b.decode("utf-8", "backslashreplace")
    out = []
    for ch in s:
        cp = ord(ch)
        if cp < 0x20 and cp != 9 or cp == 0x7F:
            out.append("\\x%02x" % cp)
        elif 0x80 <= cp <= 0x9F or cp in BIDI:
            out.append("\\u%04x" % cp)
        else:
            out.append(ch)
    return "".join(out)


def bad_lines(data):
    """(line number, why) of each line of data a terminal would act on."""
    bad = []
    for n, line in enumerate(data.split(b"\n"), 1):
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as e:
            bad.append((n, "not UTF-8 at byte %d" % e.start))
            continue
        cps = [ord(c) for c in text if hostile(ord(c))]
        if cps:
            bad.append((n, "U+%04X" % cps[0]))
    return bad


def main(files):
    status = 0
    for f in files:
        with open(f, "rb") as fh:
            data = fh.read()
        for n, why in bad_lines(data)[:10]:
            print("%s:%d: %s reaches the terminal" % (f, n, why), file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
