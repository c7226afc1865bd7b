"""A throwaway PostgreSQL cluster on 127.0.0.1 for tests and benchmarks (Debian's ``postgresql``).

``initdb`` into a temp dir, ``pg_ctl`` on a free port, and an ordinary owner role -- no superuser,
``CREATEROLE`` only -- owning one database, as docs/stores.md asks operators to set up. PostgreSQL
refuses to run as root, so under root (CI) the server runs as the ``postgres`` system user.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

OWNER, PASSWORD, DATABASE = "hoprag_owner", "owner-secret-1", "hoprag"


def bindir() -> Path | None:
    """The newest installed PostgreSQL server's binaries (Debian keeps them off PATH)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """One PostgreSQL server in its own directory; :meth:`url` is the owner's connection URL."""

    def __init__(self) -> None:
        bins = bindir()
        if bins is None:
            raise RuntimeError("PostgreSQL is not installed (Debian: apt-get install postgresql; tests/system-deps.sh does it)")
        self.bin = bins
        self.root = Path(tempfile.mkdtemp(prefix="hoprag-pg-"))  # its own: under root the server user must reach it
        self.data, self.sockets, self.log = self.root / "data", self.root / "run", self.root / "server.log"
        self.port = free_port()
        self._as = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        self.sockets.mkdir(parents=True, exist_ok=True)
        if self._as:
            shutil.chown(self.root, "postgres")
            shutil.chown(self.sockets, "postgres")
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth-local=trust",
                  "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C.UTF-8")
        self.start()
        self.sql(f"CREATE ROLE {OWNER} LOGIN CREATEROLE PASSWORD '{PASSWORD}'",
                 f"CREATE DATABASE {DATABASE} OWNER {OWNER}")

    def _run(self, tool: str, *args: str) -> str:
        done = subprocess.run([*self._as, str(self.bin / tool), *args], capture_output=True, text=True, timeout=120)
        if done.returncode:
            raise RuntimeError(f"{tool} failed ({done.returncode}): {done.stderr.strip() or done.stdout.strip()}")
        return done.stdout

    def url(self, user: str = OWNER, password: str = PASSWORD, database: str = DATABASE) -> str:
        return f"postgresql://{user}:{password}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str, owner: str = OWNER) -> str:
        """A new empty database owned by ``owner``; its owner's connection URL."""
        self.sql(f"CREATE DATABASE {name} OWNER {owner}")
        return self.url(database=name)

    def sql(self, *statements: str, database: str = "postgres") -> str:
        """Run statements as the superuser over the cluster's own socket (setup only)."""
        args = ["-h", str(self.sockets), "-p", str(self.port), "-U", "postgres", "-d", database, "-v", "ON_ERROR_STOP=1",
                "-qAt"]
        for s in statements:
            args += ["-c", s]
        return self._run("psql", *args)

    def start(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60", "-o",
                  f"-p {self.port} -k {self.sockets} -c listen_addresses=127.0.0.1 -c fsync=off", "start")

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def restart(self) -> None:
        self.stop()
        self.start()

    def destroy(self) -> None:
        try:
            self.stop("immediate")
        except RuntimeError:
            pass
        shutil.rmtree(self.root, ignore_errors=True)
