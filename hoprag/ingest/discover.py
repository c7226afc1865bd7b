"""Which files of a source folder are documents: recursive, symlink-safe, nothing dropped silently.

Symlinks are followed only while they stay inside the source folder (a link out of it is refused:
indexing must not read what the operator did not point at), and a directory is entered once, so a
link loop ends with a problem instead of recursion. Hidden entries (``.git``, ``.DS_Store``) and the
corpus's own config files at the top are not documents and are passed over.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from pathlib import Path

from ..corpus import CONFIG_FILES
from ..formats import Problem


@dataclass(frozen=True)
class Found:
    """A candidate document: its real path and its path relative to the source (the mirror's key)."""

    path: Path
    rel: str


def discover(src: Path) -> tuple[list[Found], list[Problem]]:
    """Every regular file under ``src`` (or ``src`` itself), sorted by relative path, plus refusals."""
    root = src.resolve()
    if root.is_file():
        return [Found(root, root.name)], []
    found: list[Found] = []
    problems: list[Problem] = []
    entered: set[Path] = set()

    def walk(real: Path, shown: Path, rel: str) -> None:
        entered.add(real)
        try:
            entries = sorted(os.scandir(real), key=lambda e: e.name)
        except OSError as exc:
            problems.append(Problem(str(shown), "file", f"unreadable directory: {exc.strerror or exc}; give hoprag "
                                    "read access (chmod a+rx) or move it out", reason="unreadable"))
            return
        for entry in entries:
            name = entry.name
            if name.startswith(".") or (not rel and name in CONFIG_FILES):
                continue
            where, child_rel, target = shown / name, f"{rel}{name}", Path(entry.path)
            # what the listing already knows (no stat per file), unless a link has to be followed
            is_dir, is_file = entry.is_dir(follow_symlinks=False), entry.is_file(follow_symlinks=False)
            if entry.is_symlink():
                try:
                    target = target.resolve(strict=True)
                except RuntimeError:
                    problems.append(Problem(str(where), "symlink", "symlink loop; remove or fix the link",
                                            reason="in a symlink loop"))
                    continue
                except OSError as exc:
                    loop = exc.errno == errno.ELOOP
                    msg = "symlink loop" if loop else f"broken symlink ({exc.strerror or exc})"
                    problems.append(Problem(str(where), "symlink", f"{msg}; remove or fix the link",
                                            reason="in a symlink loop" if loop else "broken symlinks"))
                    continue
                if target != root and root not in target.parents:
                    problems.append(Problem(str(where), "symlink", f"points outside the source folder (to {target}); "
                                            "refused: copy the file in or index its folder instead",
                                            reason="linking outside the folder"))
                    continue
                is_dir, is_file = target.is_dir(), target.is_file()
            if is_dir:
                if target in entered:
                    problems.append(Problem(str(where), "symlink", "symlink loop (a folder reached twice); remove the link",
                                            reason="in a symlink loop"))
                    continue
                walk(target, where, child_rel + "/")
            elif is_file:
                found.append(Found(target, child_rel))
            else:
                problems.append(Problem(str(where), "file", "not a regular file (device, socket or pipe); move it out",
                                        reason="not regular files"))

    walk(root, src, "")
    return found, problems
