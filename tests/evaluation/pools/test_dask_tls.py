"""A mutual-TLS Dask cluster, as docs/cluster.md sets it up: certificates made with openssl, a real
`dask scheduler` and `dask worker` on tls://127.0.0.1, and `train` given its client certificate
through Dask's own settings (DASK_DISTRIBUTED__COMM__TLS__*).

A run there is identical to the sequential handler's; a missing or wrong client certificate, and
a scheme the scheduler does not speak, stop `train` at start-up in one line that names what to fix
(exit 2, nothing else on stderr, no run directory, no minute-long wait)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import dask.config
import numpy as np
import pytest
from helpers import (
    TlsFiles,
    client_tls_environment,
    external_dask_cluster,
    make_tls_files,
    run_straight,
    small_config,
    without_time,
)

from neuro_evolution.evaluation.pools.dask_security import check_scheduler
from neuro_evolution.run.directory import read_log
from neuro_evolution.support.atomic import load_npz
from neuro_evolution.support.errors import HandlerStartError

FAST_SECONDS = 20.0  # a refusal takes a few seconds at most, never the client's 30-60 s waits


class SecureCluster(NamedTuple):
    """A TLS cluster, its files, and certificates of another CA it does not trust."""

    address: str
    scheduler_file: Path
    files: TlsFiles
    rogue: TlsFiles


@pytest.fixture(scope="module")
def secure(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecureCluster]:
    """One TLS scheduler with two TLS workers for the module."""
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command")
    directory = tmp_path_factory.mktemp("tls")
    files = make_tls_files(directory / "certs")
    rogue = make_tls_files(directory / "rogue", name="rogue")
    with external_dask_cluster(directory, workers=2, tls=files) as cluster:
        assert cluster.address.startswith("tls://")
        yield SecureCluster(cluster.address, cluster.scheduler_file, files, rogue)


def train(
    args: list[str], cwd: Path, environment: dict[str, str]
) -> tuple[subprocess.CompletedProcess, float]:
    """The real `train` command in ``cwd``; its result and how long it took."""
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "neuro_evolution.train", *args, "--quiet"],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return done, time.monotonic() - start


def write_config(directory: Path) -> Path:
    """The small CartPole experiment (sequential in its file; the command line picks dask)."""
    path = directory / "cartpole.json"
    path.write_text(json.dumps(small_config(number_generations=4)))
    return path


@pytest.mark.slow
def test_a_run_on_a_mutual_tls_cluster_is_identical_to_sequential(
    secure: SecureCluster, tmp_path: Path
) -> None:
    """With the client's certificate in Dask's settings, `train --scheduler tls://...` trains,
    and its log and hall of fame are those of the sequential handler."""
    config = write_config(tmp_path)
    reference = run_straight(config, tmp_path / "sequential")
    files = secure.files
    done, _ = train(
        [str(config), "--handler", "dask", "--scheduler", secure.address]
        + ["--out", str(tmp_path / "tls")],
        tmp_path,
        client_tls_environment(files.ca, *files.client),
    )
    assert done.returncode == 0, done.stderr
    assert without_time(read_log(tmp_path / "tls" / "log.csv")) == without_time(
        read_log(reference / "log.csv")
    )
    ours, theirs = (
        load_npz(tmp_path / "tls" / "hall_of_fame.npz"),
        load_npz(reference / "hall_of_fame.npz"),
    )
    assert ours.keys() == theirs.keys()
    for key in ours:
        assert np.asarray(ours[key]).tobytes() == np.asarray(theirs[key]).tobytes(), key


def refused(args: list[str], directory: Path, environment: dict[str, str]) -> str:
    """`train` must refuse at start-up: exit 2, one stderr line (returned), fast, no run dir."""
    config = write_config(directory)
    done, seconds = train([str(config), "--handler", "dask", *args], directory, environment)
    assert done.returncode == 2, (done.returncode, done.stderr)
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr  # no traceback, also none from Client.__del__ at exit
    assert lines[0].startswith("neuro_evolution.train: error: "), lines[0]
    assert seconds < FAST_SECONDS, f"took {seconds:.1f} s"
    assert not (directory / "runs").exists()
    return lines[0]


def client_files(secure: SecureCluster, case: str, tmp_path: Path) -> dict[str, Any]:
    """The client's (ca, cert, key) for each wrong setup, with the words its line must hold."""
    files, rogue = secure.files, secure.rogue
    cases: dict[str, dict[str, Any]] = {
        "no certificate": {
            "files": (None, None, None),
            "words": ["DASK_DISTRIBUTED__COMM__TLS__CA_FILE", "CLIENT__CERT", "CLIENT__KEY"],
        },
        "certificate of another CA": {
            "files": (files.ca, *rogue.client),
            "words": ["distributed.comm.tls.client.cert", "refused the client certificate"],
        },
        "nonexistent certificate file": {
            "files": (files.ca, tmp_path / "nowhere.pem", files.client[1]),
            "words": ["distributed.comm.tls.client.cert", "nowhere.pem does not exist"],
        },
        "CA that did not sign the scheduler": {
            "files": (rogue.ca, *files.client),
            "words": ["distributed.comm.tls.ca-file", "is not signed by the CA"],
        },
        "file that is no certificate": {
            "files": (files.ca, files.ca.parent / "leaf.ext", files.client[1]),
            "words": ["distributed.comm.tls.client.cert", "cannot load", "leaf.ext"],
        },
    }
    return cases[case]


@pytest.mark.parametrize(
    "case",
    [
        "no certificate",
        "certificate of another CA",
        "nonexistent certificate file",
        "CA that did not sign the scheduler",
        "file that is no certificate",
    ],
)
@pytest.mark.slow
def test_a_missing_or_wrong_client_certificate_is_one_line_naming_the_setting(
    secure: SecureCluster, tmp_path: Path, case: str
) -> None:
    """Each wrong client TLS setup is refused in one line naming the Dask setting to fix."""
    wanted = client_files(secure, case, tmp_path)
    line = refused(
        ["--scheduler", secure.address], tmp_path, client_tls_environment(*wanted["files"])
    )
    for word in wanted["words"]:
        assert word in line, line


@pytest.mark.slow
def test_tcp_to_a_tls_only_scheduler_says_to_use_tls(secure: SecureCluster, tmp_path: Path) -> None:
    """A tcp:// address where the scheduler speaks only TLS: one line saying so."""
    plain = secure.address.replace("tls://", "tcp://")
    files = secure.files
    line = refused(
        ["--scheduler", plain], tmp_path, client_tls_environment(files.ca, *files.client)
    )
    assert "speaks only TLS" in line and secure.address in line, line


@pytest.mark.slow
def test_tls_to_a_plain_scheduler_says_to_use_tcp(secure: SecureCluster, tmp_path: Path) -> None:
    """A tls:// address where the scheduler speaks plain TCP: one line saying so."""
    (tmp_path / "plain").mkdir()
    with external_dask_cluster(tmp_path / "plain", workers=0) as cluster:
        secured = cluster.address.replace("tcp://", "tls://")
        files = secure.files
        line = refused(
            ["--scheduler", secured], tmp_path, client_tls_environment(files.ca, *files.client)
        )
    assert "speaks plain TCP" in line and cluster.address in line, line


@pytest.mark.slow
def test_a_scheduler_file_of_a_tls_scheduler_gets_the_same_checks(
    secure: SecureCluster, tmp_path: Path
) -> None:
    """The address inside a scheduler file is checked like one given directly."""
    line = refused(
        ["--scheduler", str(secure.scheduler_file)],
        tmp_path,
        client_tls_environment(None, None, None),
    )
    assert "needs the client's TLS files" in line and secure.address in line, line


@pytest.mark.slow
def test_tcp_with_encryption_required_says_to_use_tls(
    secure: SecureCluster, tmp_path: Path
) -> None:
    """Dask's require-encryption set and a tcp:// address: one line naming that setting."""
    environment = client_tls_environment(secure.files.ca, *secure.files.client)
    environment["DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION"] = "True"
    plain = secure.address.replace("tls://", "tcp://")
    line = refused(["--scheduler", plain], tmp_path, environment)
    assert "DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION" in line and "use tls://" in line, line


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({}, ["CA_FILE", "CLIENT__CERT", "CLIENT__KEY"]),
        ({"client.cert": "/c.pem", "client.key": "/c.key"}, ["CA_FILE"]),
        ({"ca-file": "/ca.pem"}, ["CLIENT__CERT", "CLIENT__KEY"]),
        ({"ca-file": "/ca.pem", "client.key": "/c.key"}, ["CLIENT__CERT"]),
    ],
)
def test_a_tls_address_without_client_files_names_exactly_the_missing_settings(
    settings: dict[str, str], named: list[str]
) -> None:
    """Each unset setting is named (with its environment variable), and no set one."""
    config = {f"distributed.comm.tls.{key}": value for key, value in settings.items()}
    with dask.config.set(config), pytest.raises(HandlerStartError) as caught:
        check_scheduler("tls://127.0.0.1:1")
    line = str(caught.value)
    mentioned = [name for name in ("CA_FILE", "CLIENT__CERT", "CLIENT__KEY") if name in line]
    assert mentioned == named, line
    assert "\n" not in line
