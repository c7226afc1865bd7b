"""How far the directive detector can be trusted: false alarms on real documents, detection of the red team.

The detector (:mod:`agents.hoprag_agent.directives`) only reports; a report nobody trusts is noise. This measures
both sides without running the agent:

    python -m eval_sets.alarms DIR_OR_FILE ...    # benign text: passages and files flagged, by rule
    python -m eval_sets.alarms --redteam          # every payload in every placement vs its clean twin

Documents are read and chunked as ``hoprag index`` reads them (Markdown, text, HTML, JSONL), and
reStructuredText as plain text, so a flagged passage is one the agent could retrieve. ``--detector
FILE`` measures another version of ``directives.py`` (``git show REV:agents/hoprag_agent/directives.py``), to
compare before and after a change; a version without :func:`~agents.hoprag_agent.directives.findings` is
counted without rule names.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Iterator, Sequence

from hoprag.ingest.chunk import chunk
from hoprag.formats import READERS, plain

#: Suffixes read as documents; ``.rst`` as plain text (``hoprag index`` skips it, a ``.txt`` copy is read so).
SUFFIXES = (*(s for s in READERS if s != ".pdf"), ".rst")


@dataclass(frozen=True)
class Passage:
    root: str
    file: str
    text: str


def load_detector(path: Path | None) -> ModuleType:
    """``agents.hoprag_agent.directives``, or the module at ``path`` (another version of it)."""
    if path is None:
        from agents.hoprag_agent import directives
        return directives
    if not path.is_file():
        raise SystemExit(f"--detector {path}: no such file; pass a copy of agents/hoprag_agent/directives.py")
    spec = importlib.util.spec_from_file_location(f"detector_{abs(hash(path))}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def passages(root: Path, skipped: list[str]) -> Iterator[Passage]:
    """Every passage of every readable file under ``root`` (or of ``root`` itself); what cannot be
    read as a document (bad front matter, a JSONL line without text) is added to ``skipped``."""
    files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
    for path in files:
        if path.suffix.lower() not in SUFFIXES or any(part.startswith(".") for part in path.relative_to(root.parent).parts):
            continue
        reader = plain if path.suffix.lower() == ".rst" else READERS[path.suffix.lower()]
        records, problems = reader(path, path.read_bytes())
        skipped.extend(map(str, problems))
        for record in records:
            for _, text in chunk(record.body, record.headings):
                yield Passage(str(root), str(path.relative_to(root) if root.is_dir() else path.name), text)


def rules(detector: ModuleType, text: str) -> list[str]:
    """The rules that report ``text`` (``flagged`` for a version that does not name them)."""
    if hasattr(detector, "findings"):
        return sorted({f.rule for f in detector.findings(text)})
    return ["flagged"] if detector.directives(text) else []


def benign(detector: ModuleType, roots: Sequence[Path], show: int) -> int:
    """Print passages and files flagged per root, and counts and examples per rule; the number flagged."""
    flagged: Counter[str] = Counter()
    total: Counter[str] = Counter()
    files: dict[str, set[str]] = {}
    flagged_files: dict[str, set[str]] = {}
    by_rule: Counter[str] = Counter()
    examples: dict[str, list[str]] = {}
    skipped: list[str] = []
    started = time.perf_counter()
    for root in roots:
        for p in passages(root, skipped):
            total[p.root] += 1
            files.setdefault(p.root, set()).add(p.file)
            found = rules(detector, p.text)
            if found:
                flagged[p.root] += 1
                flagged_files.setdefault(p.root, set()).add(p.file)
                for rule in found:
                    by_rule[rule] += 1
                    examples.setdefault(rule, []).append(f"{p.file}: {detector.directives(p.text)[:3]}")
    seconds = time.perf_counter() - started
    print(f"{sum(flagged.values())} / {sum(total.values())} passages flagged, "
          f"{sum(map(len, flagged_files.values()))} / {sum(map(len, files.values()))} files ({seconds:.1f} s)")
    for root in total:
        print(f"  {root}: {flagged[root]} / {total[root]} passages, "
              f"{len(flagged_files.get(root, ()))} / {len(files[root])} files")
    if skipped:
        print(f"  skipped {len(skipped)} unreadable records, e.g. {skipped[0][:200]}")
    print("by rule: " + (", ".join(f"{rule} {n}" for rule, n in by_rule.most_common()) or "none"))
    for rule, _ in by_rule.most_common():
        for line in examples[rule][:show]:
            print(f"  [{rule}] {line[:300]}")
    return sum(flagged.values())


def redteam(detector: ModuleType) -> int:
    """Detection of every payload in every placement (the document that carries it), and alarms on
    every other document and on the clean twin; returns the number of payloads missed plus alarms."""
    from eval_sets.redteam import PLACEMENTS, build_cases, load_payloads  # the agent stack only when asked
    cases = build_cases(load_payloads())
    missed = 0
    for placement in PLACEMENTS:
        for heldout in (False, True):
            picked = [c for c in cases if c.placement == placement and c.payload.heldout == heldout]
            caught = [c for c in picked if detector.directives(next(p.text for p in c.pages() if p.id == c.carrier))]
            lost = sorted({c.payload.id for c in picked} - {c.payload.id for c in caught})
            missed += len(lost)
            print(f"  {placement} {'held-out' if heldout else 'dev'}: {len(caught)} / {len(picked)} detected"
                  + (f"; missed {' '.join(lost)}" if lost else ""))
    quiet = [p.text for c in cases for p in c.pages(with_payload=False)]
    quiet += [p.text for c in cases for p in c.pages() if p.id != c.carrier]
    alarms = sum(bool(detector.directives(t)) for t in quiet)
    print(f"  false alarms on the clean twin and the documents without a payload: {alarms} / {len(quiet)}")
    return missed + alarms


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="*", type=Path, help="folders or files of benign documents")
    parser.add_argument("--redteam", action="store_true", help="measure detection on the red-team catalogue")
    parser.add_argument("--detector", type=Path, help="another version of agents/hoprag_agent/directives.py to measure")
    parser.add_argument("--show", type=int, default=5, help="examples printed per rule (default 5)")
    args = parser.parse_args(argv)
    if not args.paths and not args.redteam:
        parser.error("name folders of documents to measure, or --redteam")
    for path in args.paths:
        if not path.exists():
            parser.error(f"{path}: no such file or folder")
    detector = load_detector(args.detector)
    if args.paths:
        benign(detector, args.paths, args.show)
    if args.redteam:
        print("red team (detector only, no agent):")
        redteam(detector)
    return 0


if __name__ == "__main__":
    sys.exit(main())
