"""How often passhat reads an agent's message right: the labelled corpus of tests/corpus/, per class and per domain.

    .venv/bin/python bench/reader_accuracy.py            # the figures
    .venv/bin/python bench/reader_accuracy.py --show     # and every message read wrong, with what differs
    .venv/bin/python bench/reader_accuracy.py --check tests/corpus/payables.yaml   # only check a file's labels

A message is read right when every class of its reading matches its labels: what it asks, whether it asks for a
yes, which writes a yes agrees to, whether it declines, which writes it reports done, not-found, hand-off, and
the facts it is labelled as stating (or as only mentioning). A class's figure counts the messages where that class
is read right.
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import reader_corpus as corpus  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--show", action="store_true", help="list every message read wrong")
    parser.add_argument("--check", type=Path, nargs="*", help="only load and check these corpus files")
    parser.add_argument("--domain", help="only this domain's corpus")
    parser.add_argument("--corpus", type=Path, default=corpus.CORPUS, help="the folder of corpus files (default: tests/corpus)")
    options = parser.parse_args()
    if options.check is not None:
        for path in options.check:
            try:
                loaded = corpus.load(path)
            except ValueError as exc:
                print(f"{path}: {exc}")
                return 2
            print(f"{path}: {len(loaded.messages)} messages, labels valid")
        return 0
    files = [p for p in corpus.corpus_files(options.corpus) if options.domain in (None, p.stem)]
    total, right = collections.Counter(), collections.Counter()
    wrong_list = []
    for path in files:
        loaded = corpus.load(path)
        for entry in loaded.messages:
            wrong = corpus.wrong_fields(entry, loaded.domain)
            for group in ("all", f"domain {loaded.domain}", f"style {entry.style}"):
                total[group] += 1
                right[group] += not wrong
            for field in corpus.FIELDS:
                if _labelled(entry, field):
                    total[f"class {field}"] += 1
                    right[f"class {field}"] += field not in wrong
            if wrong:
                wrong_list.append((loaded.domain, entry, wrong))
    if not total["all"]:
        print("no corpus messages found")
        return 2
    print(f"{'':28} {'messages':>9} {'read right':>11} {'accuracy':>9}")
    for group in sorted(total, key=lambda g: (g != "all", g)):
        print(f"{group:28} {total[group]:9,} {right[group]:11,} {right[group] / total[group]:9.2%}")
    if options.show:
        for domain, entry, wrong in wrong_list:
            got, want = corpus.read_entry(entry, domain), corpus.expected(entry, domain)
            print(f"\n--- {domain} {entry.id} ({entry.style}): {', '.join(wrong)}\n{entry.text}")
            for field in wrong:
                print(f"  {field}: read {_shown(getattr(got, field))}, labelled {_shown(getattr(want, field))}")
    return 0


def _labelled(entry: corpus.Entry, field: str) -> bool:
    """Whether a class is in play for this message: always for the flags and sets, only when listed for facts."""
    return bool(getattr(entry, field)) if field in ("tells", "not_told") else True


def _shown(value: object) -> str:
    if isinstance(value, frozenset):
        return "{" + ", ".join(sorted(map(str, value))) + "}"
    return str(value)


if __name__ == "__main__":
    sys.exit(main())
