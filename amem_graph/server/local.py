"""Install (via Maven), start, stop and describe a Neo4j Community server bound to 127.0.0.1: 5.26 LTS, or
another release (AMEM_NEO4J_VERSION, e.g. 2026.08.1, which needs Java 21).

A server folder holds conf/, data/, logs/, run/ (pid and ports) and `password` (mode 0600).
Jars are shared by all server folders, under the amem-graph home.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

from ..core.secret import secret_file
from ..errors import ServerError
from ..settings import Settings, default_home

POM = Path(__file__).with_name("pom.xml")
VECTOR_MERGE_FACTOR = 10  # segments of one size a vector index holds before Lucene merges them (Neo4j's default: 50)
JVM_DIR = Path("/usr/lib/jvm")  # where Debian's and Temurin's JDKs live
ENTRY_POINT = "org.neo4j.server.CommunityEntryPoint"  # Neo4j 5; later releases name theirs in the main jar
ENTRY_POINT_SERVICE = "META-INF/services/org.neo4j.server.startup.EntryPoint"
ENTRY_POINTS = (ENTRY_POINT, "org.neo4j.server.Neo4jCommunity")
ADMIN_TOOL = "org.neo4j.cli.AdminTool"
USER = "neo4j"
# JVM flags that Neo4j's own launcher passes and the server relies on (netty, off-heap buffers).
JVM_FLAGS = (
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
    "-XX:+ExitOnOutOfMemoryError",
    "-Dfile.encoding=UTF-8",
    "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Dlog4j2.disable.jmx=true",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
)


def _java_major(java: str) -> int | None:
    out = subprocess.run([java, "-version"], capture_output=True, text=True, check=False).stderr
    match = re.search(r'version "(?:1\.)?(\d+)', out)  # "1.8.0" is Java 8, "17.0.2" Java 17
    return int(match.group(1)) if match else None


def neo4j_version() -> str:
    match = re.search(r"<neo4j\.version>([^<]+)</neo4j\.version>", POM.read_text(encoding="utf-8"))
    if not match:
        raise ServerError(f"{POM} does not pin neo4j.version")
    return match.group(1)


@dataclass(frozen=True)
class ConnectionInfo:
    uri: str
    user: str
    password: str
    http_url: str

    @property
    def browser_url(self) -> str:
        return f"{self.http_url}/browser/"

    def exports(self) -> str:
        """Shell lines for `eval "$(amem-graph neo4j env)"`."""
        return "\n".join(
            f"export {name}={shlex.quote(value)}"
            for name, value in (("NEO4J_URI", self.uri), ("NEO4J_USER", self.user), ("NEO4J_PASSWORD", self.password))
        )


@dataclass(frozen=True)
class Ports:
    bolt: int
    http: int


class LocalNeo4j:
    """One local server folder."""

    def __init__(self, directory: Path, *, home: Path | None = None, heap: str = "1g", pagecache: str = "512m",
                 version: str | None = None):
        self.dir = Path(directory).expanduser().resolve()
        self.version = version or neo4j_version()
        self.jars_dir = ((home or default_home()) / "jars" / f"neo4j-{self.version}").expanduser().resolve()
        self.heap = heap
        self.pagecache = pagecache
        self.log_file = self.dir / "logs" / "neo4j.log"
        self.console_log = self.dir / "logs" / "console.log"
        self.password_file = self.dir / "password"
        self._pid_file = self.dir / "run" / "neo4j.pid"
        self._ports_file = self.dir / "run" / "ports.json"

    @classmethod
    def for_settings(cls, settings: Settings, directory: Path | None = None, heap: str = "1g") -> LocalNeo4j:
        """The server folder the settings name ($AMEM_HOME/neo4j) unless another is given."""
        return cls(directory or settings.local_server_dir, home=settings.home, heap=heap, version=settings.neo4j_version)

    # -- files ----------------------------------------------------------------------------------

    def ports(self) -> Ports | None:
        try:
            return Ports(**json.loads(self._ports_file.read_text()))
        except (FileNotFoundError, ValueError, TypeError):
            return None

    def connection(self) -> ConnectionInfo | None:
        """How to reach this server, if it has been started here before (it may be stopped now)."""
        ports = self.ports()
        if ports is None or not self.password_file.exists():
            return None
        return ConnectionInfo(
            uri=f"bolt://127.0.0.1:{ports.bolt}",
            user=USER,
            password=self.password_file.read_text().strip(),
            http_url=f"http://127.0.0.1:{ports.http}",
        )

    # -- install --------------------------------------------------------------------------------

    @property
    def java_needed(self) -> int:
        """Neo4j 5 runs on Java 17; the calendar releases (2025.x and later) need Java 21."""
        return 17 if self.version.startswith("5.") else 21

    def java(self) -> str:
        """A java binary new enough for this release: JAVA_HOME's, then the one on PATH, then any JDK under
        /usr/lib/jvm (where Debian and Temurin install theirs)."""
        needed = self.java_needed
        java_home = os.environ.get("JAVA_HOME")
        candidates = [str(Path(java_home) / "bin" / "java")] if java_home else []
        candidates += [found] if (found := shutil.which("java")) else []
        candidates += sorted(str(p) for p in JVM_DIR.glob("*/bin/java"))
        seen = []
        for java in dict.fromkeys(candidates):
            if not Path(java).exists():
                continue
            major = _java_major(java)
            if major is not None and major >= needed:
                return java
            seen.append(f"{java} (Java {major or 'unknown'})")
        if not seen:
            raise ServerError(
                f"Java {needed} or newer is needed to run Neo4j {self.version} and none was found on PATH, in "
                f"JAVA_HOME or under /usr/lib/jvm: install OpenJDK {needed} (e.g. `apt-get install "
                f"openjdk-{needed}-jre-headless`)"
            )
        raise ServerError(f"Neo4j {self.version} needs Java {needed} or newer; found only {', '.join(seen)} "
                          "(point JAVA_HOME at a newer one)")

    def installed(self) -> bool:
        return (self.jars_dir / f"neo4j-{self.version}.jar").is_file()

    def install(self) -> Path:
        """Fetch the Neo4j and Browser jars with Maven (once); returns the jar folder."""
        if self.installed():
            return self.jars_dir
        mvn = shutil.which("mvn")
        if not mvn:
            raise ServerError(
                "Maven is needed once to fetch the Neo4j jars from Maven Central and `mvn` is not on PATH: "
                "install it (e.g. `apt-get install maven`)"
            )
        self.jars_dir.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".jars-", dir=self.jars_dir.parent))
        cmd = [mvn, "-q", "-B", "-f", str(POM), "dependency:copy-dependencies", f"-DoutputDirectory={staging}",
               f"-Dneo4j.version={self.version}"]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0 or not any(staging.glob(f"neo4j-{self.version}.jar")):
            shutil.rmtree(staging, ignore_errors=True)
            raise ServerError(
                f"Maven could not fetch the Neo4j {self.version} jars: {_cause(proc.stdout + proc.stderr)} "
                f"(command: {' '.join(cmd)})"
            )
        shutil.rmtree(self.jars_dir, ignore_errors=True)
        staging.rename(self.jars_dir)  # a jar folder is complete or absent, never half-filled
        return self.jars_dir

    # -- lifecycle ------------------------------------------------------------------------------

    def pid(self) -> int | None:
        """The pid of this folder's running server, or None (a stale pid file is ignored)."""
        return running_pid(self._pid_file, lambda cmdline: any(e in cmdline for e in ENTRY_POINTS) and str(self.dir) in cmdline)

    def start(self, *, bolt_port: int = 7687, http_port: int = 7474, timeout: float = 180.0) -> ConnectionInfo:
        """Start the server (or return the running one) and wait until Bolt accepts the password."""
        if self.pid() is not None:
            return self._running_connection()
        _check_ports(bolt_port, http_port)
        java = self.java()
        for port in (bolt_port, http_port):
            _require_free(port)
        jars = self.install()
        for sub in ("conf", "data", "logs", "run"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        self._write_conf(Ports(bolt_port, http_port))
        self._ensure_password(java, jars)
        self._ports_file.write_text(json.dumps(asdict(Ports(bolt_port, http_port))))
        cmd = [
            java, f"-Xms{self.heap}", f"-Xmx{self.heap}", *JVM_FLAGS, "-cp", f"{jars}/*", self._entry_point(jars),
            f"--home-dir={self.dir}", f"--config-dir={self.dir / 'conf'}",
        ]
        with open(self.console_log, "wb") as console:  # this start's output only: errors are read from it
            proc = subprocess.Popen(
                cmd, stdout=console, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env=self._env(), start_new_session=True, cwd=self.dir,
            )
        self._pid_file.write_text(str(proc.pid))
        info = self._running_connection()
        self._wait_for_bolt(proc, info, timeout)
        return info

    def _running_connection(self) -> ConnectionInfo:
        info = self.connection()
        if info is None:
            raise ServerError(f"{self.dir} lacks its ports or password file; stop the server and start it again")
        return info

    def stop(self, timeout: float = 60.0) -> bool:
        """Stop the server; False if none was running. Escalates to SIGKILL after `timeout`."""
        return terminate(self.pid(), self._pid_file, timeout)

    def status(self) -> dict[str, object]:
        info = self.connection()
        pid = self.pid()
        ports = self.ports()
        return {
            "running": pid is not None and ports is not None and _port_open(ports.bolt),
            "pid": pid,
            "dir": str(self.dir),
            "version": self.version,
            "uri": info.uri if info else None,
            "browser": info.browser_url if info else None,
            "password_file": str(self.password_file),
            "log": str(self.log_file),
        }

    # -- helpers --------------------------------------------------------------------------------

    def _entry_point(self, jars: Path) -> str:
        """The server's main class: the one its main jar declares as a service, else Neo4j 5's."""
        with zipfile.ZipFile(jars / f"neo4j-{self.version}.jar") as jar:
            if ENTRY_POINT_SERVICE in jar.namelist():
                return jar.read(ENTRY_POINT_SERVICE).decode().split()[0]
        return ENTRY_POINT

    def _env(self) -> dict[str, str]:
        return {**os.environ, "NEO4J_HOME": str(self.dir), "NEO4J_CONF": str(self.dir / "conf")}

    def _write_conf(self, ports: Ports) -> None:
        settings = {
            "server.default_listen_address": "127.0.0.1",
            "server.default_advertised_address": "127.0.0.1",
            "server.bolt.listen_address": f"127.0.0.1:{ports.bolt}",
            "server.bolt.advertised_address": f"127.0.0.1:{ports.bolt}",
            "server.http.listen_address": f"127.0.0.1:{ports.http}",
            "server.http.advertised_address": f"127.0.0.1:{ports.http}",
            "server.https.enabled": "false",
            "server.directories.data": str(self.dir / "data"),
            "server.directories.logs": str(self.dir / "logs"),
            "server.directories.run": str(self.dir / "run"),
            "server.memory.pagecache.size": self.pagecache,
            "dbms.security.auth_enabled": "true",
            "db.tx_log.rotation.retention_policy": "1G size",
            # A vector index grown by inserts is many Lucene segments, and a k-NN query searches each in turn:
            # merging sooner keeps a query to a few of them, for more merging while notes are written
            # (BENCHMARKS.md, k-NN at 100k).
            "internal.dbms.index.vector.standard_merge_factor": str(VECTOR_MERGE_FACTOR),
            # A local server reports nothing home (Browser's analytics, the server's usage report).
            "client.allow_telemetry": "false",
            "dbms.usage_report.enabled": "false",
        }
        text = "# Written by amem-graph on every start; edits are overwritten.\n"
        text += "".join(f"{key}={value}\n" for key, value in settings.items())
        (self.dir / "conf" / "neo4j.conf").write_text(text)

    def _ensure_password(self, java: str, jars: Path) -> None:
        """Auth is always on: the first start sets a generated password, kept in a 0600 file."""
        auth_file = self.dir / "data" / "dbms" / "auth.ini"
        if auth_file.exists():
            if not self.password_file.exists():
                raise ServerError(
                    f"{auth_file} holds a password but {self.password_file} is missing: restore the file, "
                    f"or delete {self.dir / 'data'} to start from an empty database"
                )
            return
        secret_file(self.password_file)
        # "@file" makes the admin tool read the password from the 0600 file, off the process list.
        proc = subprocess.run(
            [java, "-cp", f"{jars}/*", ADMIN_TOOL, "dbms", "set-initial-password", f"@{self.password_file}"],
            capture_output=True, text=True, env=self._env(), check=False,
        )
        if proc.returncode != 0:
            raise ServerError(f"could not set the initial Neo4j password: {_cause(proc.stdout + proc.stderr)}")

    def _wait_for_bolt(self, proc: subprocess.Popen[bytes], info: ConnectionInfo, timeout: float) -> None:
        from neo4j import GraphDatabase
        from neo4j.exceptions import AuthError, DriverError, Neo4jError

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                self._pid_file.unlink(missing_ok=True)
                raise ServerError(
                    f"Neo4j exited during start (code {proc.returncode}): {_cause(_read(self.console_log))}; "
                    f"see {self.log_file} and {self.console_log}"
                )
            ports = self.ports()
            if ports and _port_open(ports.bolt) and _port_open(ports.http):  # Browser must answer too
                try:
                    with GraphDatabase.driver(info.uri, auth=(info.user, info.password)) as driver:
                        driver.verify_connectivity()
                    return
                except AuthError as err:
                    raise ServerError(f"Neo4j started but refused the password in {self.password_file}: {err}") from None
                except (DriverError, Neo4jError, OSError):
                    pass  # Bolt is up but the database is still starting
            time.sleep(0.5)
        self.stop()  # a half-started server is not left behind
        raise ServerError(
            f"Neo4j did not answer on {info.uri} and {info.http_url} within {timeout:.0f} s and was stopped; "
            f"see {self.log_file}"
        )


def _check_ports(bolt: int, http: int) -> None:
    for name, port in (("Bolt", bolt), ("HTTP", http)):
        if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
            raise ServerError(f"{name} port {port!r} is not a TCP port (1-65535)")
    if bolt == http:
        raise ServerError(f"Bolt and HTTP need two different ports; both are {bolt}")


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def private_server(directory: Path, *, home: Path, heap: str = "1g", pagecache: str = "512m",
                   version: str | None = None) -> Iterator[tuple[LocalNeo4j, ConnectionInfo]]:
    """A server of its own in `directory`, on free ports, stopped at the end: for the benchmarks that kill or
    fill a server, which must never be the user's."""
    server = LocalNeo4j(directory, home=home, heap=heap, pagecache=pagecache, version=version)
    info = server.start(bolt_port=free_port(), http_port=free_port())
    try:
        yield server, info
    finally:
        server.stop()


def _require_free(port: int) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            raise ServerError(
                f"port {port} on 127.0.0.1 is in use: stop what holds it or choose another port "
                "(--bolt-port / --http-port, or AMEM_NEO4J_BOLT_PORT / AMEM_NEO4J_HTTP_PORT)"
            ) from None


def _port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0):
            return True
    except OSError:
        return False


def running_pid(pid_file: Path, ours: Callable[[str], bool]) -> int | None:
    """The pid in `pid_file` if that process runs and its command line is `ours` (a pid file outlives its
    process, and the pid may have gone to another)."""
    try:
        pid = int(pid_file.read_text().strip())
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except (FileNotFoundError, ValueError, ProcessLookupError, PermissionError):
        return None
    return pid if ours(cmdline) else None


def terminate(pid: int | None, pid_file: Path, timeout: float) -> bool:
    """SIGTERM, then SIGKILL after `timeout`; the pid file goes either way. False if nothing ran."""
    if pid is None:
        pid_file.unlink(missing_ok=True)
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.2)
    if _alive(pid):
        os.kill(pid, signal.SIGKILL)
        while _alive(pid):
            time.sleep(0.1)
    pid_file.unlink(missing_ok=True)
    return True


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (our own child not yet reaped) counts as gone.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except FileNotFoundError:
        return ""


def _cause(output: str) -> str:
    """The line of a tool's output that says what went wrong: the first error line, else the last line."""
    lines = [line.strip() for line in output.strip().splitlines() if line.strip()]
    errors = [line for line in lines if re.search(r"error|exception|invalid|could not|failed", line, re.IGNORECASE)]
    return errors[0] if errors else (lines[-1] if lines else "no output")
