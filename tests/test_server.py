"""The local Neo4j launcher: clear failures, owner-only password, and a full start/stop cycle."""

import os
import socket
import stat
import urllib.request
from pathlib import Path

import pytest

from amem_graph import AgenticMemory, ServerError, Settings, StoreUnavailable
from amem_graph.server import LocalNeo4j, local
from amem_graph.server.local import VECTOR_MERGE_FACTOR
from amem_graph.store.neo4j import Neo4jStore

from .conftest import free_port


def test_port_in_use_is_named(tmp_path: Path, settings: Settings) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        server = LocalNeo4j(tmp_path / "srv", home=settings.home)
        with pytest.raises(ServerError, match=f"port {port} on 127.0.0.1 is in use"):
            server.start(bolt_port=port, http_port=free_port())
    assert server.pid() is None


def test_missing_java_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setattr(local, "JVM_DIR", tmp_path / "no-jvm")
    with pytest.raises(ServerError, match="Java 17 or newer is needed"):
        LocalNeo4j(tmp_path / "srv", home=tmp_path).start(bolt_port=free_port(), http_port=free_port())


def test_missing_maven_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server = LocalNeo4j(tmp_path / "srv", home=tmp_path / "empty-home")  # no jars fetched there
    java = server.java()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "java").symlink_to(java)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    with pytest.raises(ServerError, match="Maven is needed once"):
        server.start(bolt_port=free_port(), http_port=free_port())


def test_database_down_names_the_uri() -> None:
    uri = f"bolt://127.0.0.1:{free_port()}"
    with pytest.raises(StoreUnavailable, match=f"cannot reach Neo4j at {uri}"):
        Neo4jStore(uri, "neo4j", "whatever")


def test_wrong_password_is_named(settings: Settings) -> None:
    assert settings.neo4j_uri
    with pytest.raises(StoreUnavailable, match="refused the credentials"):
        Neo4jStore(settings.neo4j_uri, "neo4j", "not-the-password")


@pytest.mark.slow
def test_start_stop_restart_keeps_data_and_a_stopped_server_is_named(tmp_path: Path, settings: Settings) -> None:
    server = LocalNeo4j(tmp_path / "srv", home=settings.home, heap="512m", pagecache="64m")
    info = server.start(bolt_port=free_port(), http_port=free_port())
    try:
        assert stat.S_IMODE(os.stat(server.password_file).st_mode) == 0o600
        assert server.status()["running"] is True
        # Started with it: an unknown or invalid setting stops the server (strict validation).
        conf = (server.dir / "conf" / "neo4j.conf").read_text()
        assert f"internal.dbms.index.vector.standard_merge_factor={VECTOR_MERGE_FACTOR}\n" in conf
        assert server.start().uri == info.uri  # a second start finds the running server
        assert "export NEO4J_URI=" + info.uri in info.exports()
        with urllib.request.urlopen(info.browser_url, timeout=10) as page:  # Browser is served
            assert "<title>Neo4j Browser</title>" in page.read().decode()
        local = Settings(neo4j_uri=info.uri, neo4j_password=info.password, home=settings.home)
        with AgenticMemory(local, tenant="durable") as memory:
            note = memory.add("Written before a restart.")
            assert server.stop() is True
            assert server.status()["running"] is False
            with pytest.raises(StoreUnavailable, match=info.uri.replace(".", r"\.")):
                memory.get(note.id)
        server.start(bolt_port=int(info.uri.rsplit(":", 1)[1]), http_port=free_port())
        with AgenticMemory(local, tenant="durable") as memory:
            assert memory.get(note.id).content == "Written before a restart."
    finally:
        server.stop()
    assert server.stop() is False


def test_failed_start_names_the_cause_and_the_log(tmp_path: Path, settings: Settings) -> None:
    server = LocalNeo4j(tmp_path / "srv", home=settings.home, heap="not-a-size")  # the JVM refuses to start
    with pytest.raises(ServerError, match=r"Neo4j exited during start \(code \d+\): Invalid .*heap size.*; see .*neo4j\.log"):
        server.start(bolt_port=free_port(), http_port=free_port(), timeout=60)
    assert server.pid() is None


@pytest.mark.parametrize(("bolt", "http", "message"), [(70000, 7474, "Bolt port 70000"), (0, 7474, "Bolt port 0"),
                                                       (7687, 7687, "two different ports")])
def test_bad_ports_are_refused(tmp_path: Path, bolt: int, http: int, message: str) -> None:
    with pytest.raises(ServerError, match=message):
        LocalNeo4j(tmp_path / "srv", home=tmp_path).start(bolt_port=bolt, http_port=http)
