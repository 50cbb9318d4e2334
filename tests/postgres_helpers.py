"""A throwaway PostgreSQL cluster for the team tests: initdb into a temp folder, started on a
free loopback port with its socket in that folder, stopped at the end. No Docker, no download:
Debian's `postgresql` package (`.ci/run` installs it). As root, initdb refuses to run, so the
server runs as `nobody` with the folder handed to it.

`pytest_plugins` in conftest.py loads this module once, so the whole session shares one cluster
(each test gets a database of its own); under pytest-xdist (`make test`) each worker process
starts its own."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

SEARCHED = ("/usr/lib/postgresql/*/bin", "/usr/local/pgsql/bin", "/usr/pgsql-*/bin")
PORT_ATTEMPTS = 3


def postgres_bin() -> Path | None:
    """The folder holding initdb and pg_ctl: on PATH, else Debian's versioned folders."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).parent
    for pattern in SEARCHED:
        for folder in sorted(glob.glob(pattern), reverse=True):
            if (Path(folder) / "initdb").exists() and (Path(folder) / "pg_ctl").exists():
                return Path(folder)
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _as_server_user(command: list[str]) -> list[str]:
    """The command run as `nobody` when we are root (PostgreSQL refuses root)."""
    if os.geteuid() != 0:
        return command
    return ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", *command]


class Cluster:
    def __init__(self, bin_dir: Path, password: str | None = None) -> None:
        self.bin = bin_dir
        self.password = password  # set: scram-sha-256 for every connection, as a team runs it
        self.folder = Path(tempfile.mkdtemp(prefix="hipo-pg-"))
        self.data = self.folder / "data"
        self.port = free_port()
        if os.geteuid() == 0:
            os.chmod(self.folder, 0o755)
            shutil.chown(self.folder, "nobody", "nogroup")

    def run(self, *args: str) -> None:
        subprocess.run(
            _as_server_user([str(self.bin / args[0]), *args[1:]]),
            check=True,
            capture_output=True,
            cwd=self.folder,
        )

    def start(self) -> None:
        auth = ["-A", "trust"]
        if self.password is not None:
            pwfile = self.folder / "pwfile"
            pwfile.write_text(self.password + "\n", encoding="utf-8")
            if os.geteuid() == 0:
                shutil.chown(pwfile, "nobody", "nogroup")
            auth = ["-A", "scram-sha-256", f"--pwfile={pwfile}"]
        self.run("initdb", "-D", str(self.data), "-U", "postgres", *auth, "-E", "UTF8")
        for attempt in range(PORT_ATTEMPTS):
            options = (
                f"-p {self.port} -c listen_addresses=127.0.0.1 "
                f"-c unix_socket_directories={self.folder} -c fsync=off -c max_connections=200"
            )
            try:
                self.run("pg_ctl", "-D", str(self.data), "-o", options,
                         "-l", str(self.folder / "server.log"), "-w", "start")  # fmt: skip
                return
            except subprocess.CalledProcessError:
                if attempt == PORT_ATTEMPTS - 1:
                    raise
                # the free port was taken before the server bound it: by another pytest-xdist
                # worker's cluster, started at the same moment
                self.port = free_port()

    def stop(self) -> None:
        try:
            self.run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)

    def url(self, database: str = "postgres", user: str = "postgres") -> str:
        secret = f":{self.password}" if self.password is not None else ""
        return f"postgresql://{user}{secret}@127.0.0.1:{self.port}/{database}"


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[Cluster]:
    bin_dir = postgres_bin()
    if bin_dir is None:
        pytest.skip("no PostgreSQL binaries (initdb, pg_ctl) found: apt-get install postgresql")
    pytest.importorskip("psycopg", reason="the team extra is not installed: pip install .[team]")
    cluster = Cluster(bin_dir)
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()


SECURE_PASSWORD = "hunter2-Hipo-s3cret"  # what no output, cell or log may ever show


@pytest.fixture(scope="session")
def secure_cluster() -> Iterator[Cluster]:
    """A cluster with password auth (`initdb -A scram-sha-256 --pwfile`), as a team runs one."""
    bin_dir = postgres_bin()
    if bin_dir is None:
        pytest.skip("no PostgreSQL binaries (initdb, pg_ctl) found: apt-get install postgresql")
    pytest.importorskip("psycopg", reason="the team extra is not installed: pip install .[team]")
    cluster = Cluster(bin_dir, password=SECURE_PASSWORD)
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def secure_url(secure_cluster: Cluster) -> Iterator[str]:
    """A fresh database in the password-auth cluster, reached with the password."""
    import psycopg

    name = f"team_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(secure_cluster.url(), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield secure_cluster.url(name)
    from hipo_jupyter.team.database import close_pools

    close_pools()


@pytest.fixture
def team_url(postgres_cluster: Cluster) -> Iterator[str]:
    """A fresh, empty database in the session's cluster."""
    import psycopg

    name = f"team_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_cluster.url(), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield postgres_cluster.url(name)
    from hipo_jupyter.team.database import close_pools

    close_pools()  # each test's database has its own pool; none outlives its test
