"""Caller identity: the operator's access file maps bearer tokens and user ids to principals.

Identity always comes from the transport or the operator (a verified bearer token, the
``--as`` flag of a stdio launch), never from a tool argument, and a principal's groups are
the only thing search, fetch, grep and the graph ever filter on.

With no access file at all, one local user runs hoprag for themselves (:meth:`Access.single`):
every user id is the one principal :data:`LOCAL`, which reads every group of what is served.
Over HTTP an access file stays required: bearer tokens are how callers are told apart.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass, field
from pathlib import Path

from .yamlfile import READ_ERRORS, mapping, read_yaml


#: The one principal of single-user mode (no access file).
LOCAL = "local"
#: RFC 6750 ``b64token``: what an ``Authorization: Bearer`` header can carry.
_TOKEN = re.compile(r"[A-Za-z0-9._~+/-]+=*")


class AccessError(ValueError):
    """A bad access file or an unknown principal; the message names the file and field."""


@dataclass(frozen=True)
class Principal:
    """A caller: the groups it reads. ``everything``: single-user mode's principal, which reads every
    group of whatever corpus or store is served (:meth:`reads`)."""

    name: str
    groups: frozenset[str]
    everything: bool = False

    def reads(self, served: frozenset[str]) -> frozenset[str]:
        """The groups this principal reads where ``served`` are all the groups documents are in."""
        return served if self.everything else self.groups


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


@dataclass(frozen=True)
class Access:
    """Principals, the bearer tokens that authenticate them, and ADK user ids that act as them."""

    principals: dict[str, Principal]
    tokens: dict[str, str] = field(default_factory=dict)
    users: dict[str, str] = field(default_factory=dict)
    single_user: bool = False

    @classmethod
    def single(cls) -> "Access":
        """Single-user mode (no access file): one principal, :data:`LOCAL`, reading every group, that
        every user id acts as; no tokens, so nothing can be served over HTTP."""
        return cls({LOCAL: Principal(LOCAL, frozenset(), everything=True)}, single_user=True)

    def principal(self, name: str) -> Principal:
        try:
            return self.principals[name]
        except KeyError:
            raise AccessError(f"unknown principal {name!r} (known: {', '.join(sorted(self.principals))})") from None

    def by_token(self, token: str) -> Principal | None:
        """The principal a bearer token authenticates; compares every token in constant time."""
        probe, found = _digest(token), None
        for known, name in self.tokens.items():
            if hmac.compare_digest(probe, _digest(known)):
                found = name
        return self.principals[found] if found else None

    def for_user(self, user_id: str) -> Principal | None:
        """The principal an ADK session user acts as: a ``users`` entry, else a principal of that name."""
        if self.single_user:
            return self.principals[LOCAL]
        name = self.users.get(user_id, user_id)
        return self.principals.get(name)

    def acting_as(self, user_id: str) -> Principal:
        """:meth:`for_user`, or an error naming the unknown user and who is known (for front doors)."""
        principal = self.for_user(user_id)
        if principal is None:
            users = f"; users: {', '.join(sorted(self.users))}" if self.users else ""
            raise AccessError(f"unknown user {user_id!r}: neither a principal nor a 'users:' entry "
                              f"(principals: {', '.join(sorted(self.principals))}{users})")
        return principal

    def groups(self) -> frozenset[str]:
        """Every group some principal holds: all a process serving this file may ever show."""
        return frozenset().union(*(p.groups for p in self.principals.values()))

    def token_for(self, principal: str) -> str | None:
        """A bearer token for a principal, for clients that call a remote server on its behalf."""
        return next((t for t, name in self.tokens.items() if name == principal), None)


def load_access(path: str | Path) -> Access:
    """Parse and validate an access file (see ``corpus/access.yaml``)."""
    path = Path(path)
    try:
        data = read_yaml(path) or {}
    except READ_ERRORS as exc:
        raise AccessError(f"{path}: cannot read access file: {exc}") from exc
    mapping(data, ("principals", "tokens", "users"), str(path), AccessError)
    raw = data.get("principals")
    if not isinstance(raw, dict) or not raw:
        raise AccessError(f"{path}: field 'principals': expected a non-empty mapping")
    principals = {}
    for name, spec in raw.items():
        if not isinstance(name, str):
            raise AccessError(f"{path}: field 'principals': principal names must be strings")
        groups = spec.get("groups") if isinstance(spec, dict) else None
        if not isinstance(groups, list) or not all(isinstance(g, str) and g for g in groups):
            raise AccessError(f"{path}: field 'principals.{name}.groups': expected a list of group names")
        principals[name] = Principal(name, frozenset(groups))
    maps = {}
    for key in ("tokens", "users"):
        m = data.get(key) or {}
        if not isinstance(m, dict):
            raise AccessError(f"{path}: field '{key}': expected a mapping to principal names")
        for k, v in m.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise AccessError(f"{path}: field '{key}': expected a mapping of strings to principal names")
            if v not in principals:
                raise AccessError(f"{path}: field '{key}': maps to unknown principal {v!r}")
            if key == "tokens" and (len(k) < 8 or not _TOKEN.fullmatch(k)):
                raise AccessError(f"{path}: field 'tokens': every token must be a string of at least 8 characters "
                                  "from A-Z a-z 0-9 - . _ ~ + / (RFC 6750), so a bearer header can carry it")
        maps[key] = dict(m)
    return Access(principals, maps["tokens"], maps["users"])
