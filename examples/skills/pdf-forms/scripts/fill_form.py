#!/usr/bin/env python3
"""Fill the fields of a PDF form from a JSON object of field name to value."""
import json
import sys


def main(argv):
    if len(argv) == 3 and argv[1] == "--list":
        print(f"fields of {argv[2]}: (needs pypdf)")
        return 0
    if len(argv) != 4:
        print("usage: fill_form.py FORM.pdf DATA.json OUT.pdf", file=sys.stderr)
        return 2
    with open(argv[2]) as f:
        data = json.load(f)
    print(f"would fill {len(data)} fields of {argv[1]} into {argv[3]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
