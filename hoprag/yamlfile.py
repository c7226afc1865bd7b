"""Reading operator YAML files (access, relations, allowlist) that may be hostile or broken."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import yaml

#: What reading and parsing can raise: unreadable files, bad UTF-8, impossible dates and integers
#: past Python's digit limit (``ValueError``), nesting deeper than the parser's recursion.
READ_ERRORS = (OSError, ValueError, RecursionError, yaml.YAMLError)


def read_yaml(path: Path) -> Any:
    """The parsed document; raises one of :data:`READ_ERRORS` for a file that cannot be used."""
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def mapping(data: Any, allowed: Sequence[str], where: str, error: type[ValueError]) -> dict[Any, Any]:
    """``data`` as a mapping of ``allowed`` keys, else ``error`` naming ``where`` and the first unknown key
    (a key that is not a string -- YAML keys may be numbers or dates -- is named as such)."""
    if not isinstance(data, dict):
        raise error(f"{where}: expected a mapping with {', '.join(allowed)}")
    unknown = [k for k in data if k not in allowed]
    if unknown:
        raise error(f"{where}: field '{unknown[0] if isinstance(unknown[0], str) else '(a non-string key)'}': "
                    "unknown key")
    return data
