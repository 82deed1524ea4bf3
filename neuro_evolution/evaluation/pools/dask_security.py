"""A look at an existing scheduler before the Dask client connects: the scheme and the TLS files.

The client's certificates come from Dask's own configuration (``distributed.comm.tls.ca-file``,
``distributed.comm.tls.client.cert`` and ``.key``; e.g. ``DASK_DISTRIBUTED__COMM__TLS__CA_FILE``),
the settings ``dask scheduler`` and ``dask worker`` read too, so one file per machine secures every
Dask process there and no run directory records a machine's certificate paths.

``check_scheduler`` fails in one line naming the setting to fix, within a few seconds, before any
``distributed.Client`` exists (a client whose connection failed waits up to a minute in its
``__del__`` at exit and prints a traceback): a tls:// address without the client's files, a file
that is missing or unreadable or no certificate, a scheduler whose certificate the CA does not
sign, a client certificate the scheduler refuses, and a tcp:// address where the scheduler speaks
only TLS (or the reverse). Anything the probe cannot classify is left to the client.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import ssl
from pathlib import Path

import dask.config
import distributed  # noqa: F401  (loads the distributed.* defaults into dask.config)
from distributed import Security
from distributed.comm.addressing import parse_address, parse_host_port

from neuro_evolution.evaluation.pools.options import option_path
from neuro_evolution.support.errors import HandlerStartError

PROBE_SECONDS = 5.0  # to connect and finish a TLS handshake
PLAIN_ANSWER_SECONDS = 2.0  # a plain-TCP Dask scheduler sends its handshake at once
DOCS = "docs/cluster.md"
CA_FILE = "distributed.comm.tls.ca-file"
CLIENT_CERT = "distributed.comm.tls.client.cert"
CLIENT_KEY = "distributed.comm.tls.client.key"
REQUIRE_ENCRYPTION = "distributed.comm.require-encryption"


def env_var(key: str) -> str:
    """The environment variable that sets Dask config ``key``."""
    return "DASK_" + key.upper().replace(".", "__").replace("-", "_")


def setting(key: str) -> str:
    """``key`` with its environment variable, as error lines name it."""
    return f"{key} ({env_var(key)})"


def scheduler_address(scheduler: str) -> str | None:
    """The address of ``scheduler`` (an address, or a scheduler file; None if unreadable)."""
    if "://" in scheduler:
        return scheduler
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        return str(json.loads(Path(scheduler).read_text())["address"])
    return None


def words(items: list[str]) -> str:
    """``["a", "b", "c"]`` -> ``"a, b and c"``."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def check_scheduler(scheduler: str) -> None:
    """HandlerStartError (one line) when the client cannot talk to ``scheduler``'s scheme."""
    address = scheduler_address(scheduler)
    if address is None:
        return
    scheme, location = parse_address(address)
    if scheme == "tls":
        check_tls(address, location)
    elif scheme == "tcp":
        check_plain(address, location)


def check_plain(address: str, location: str) -> None:
    """A tcp:// address: refused when Dask requires encryption or the scheduler speaks TLS."""
    if dask.config.get(REQUIRE_ENCRYPTION, False):
        raise HandlerStartError(
            f"{option_path('scheduler')}: {address} is unencrypted, but "
            f"{setting(REQUIRE_ENCRYPTION)} is set: use tls:// and give the client its "
            f"certificate ({DOCS})"
        )
    host, port = parse_host_port(location)
    try:
        with connect(address, host, port) as raw:
            raw.settimeout(PLAIN_ANSWER_SECONDS)
            if raw.recv(1):
                return  # a plain Dask scheduler greeted us
    except OSError:  # connected but silent: a TLS scheduler, checked below
        pass
    if speaks_tls(host, port):
        raise HandlerStartError(
            f"{option_path('scheduler')}: the scheduler at {address} speaks only TLS: use "
            f"tls://{location} and give the client its certificate ({DOCS})"
        )


def connect(address: str, host: str, port: int) -> socket.socket:
    """A TCP connection to the scheduler's port, or a HandlerStartError within
    ``PROBE_SECONDS`` saying why there is none (nothing listening, unknown host, no answer):
    the Dask client would retry for its whole connect timeout."""
    where = f"{option_path('scheduler')}: cannot reach the Dask scheduler at {address}"
    fix = "start one with `dask scheduler`, or leave scheduler unset to use a LocalCluster"
    try:
        return socket.create_connection((host, port), timeout=PROBE_SECONDS)
    except ConnectionRefusedError:
        raise HandlerStartError(
            f"{where}: nothing listens there (connection refused); {fix}"
        ) from None
    except socket.gaierror:
        raise HandlerStartError(
            f"{where}: the host {host!r} is unknown; check the address"
        ) from None
    except TimeoutError:
        raise HandlerStartError(
            f"{where}: no answer within {PROBE_SECONDS:g} s (a host that is down, or a "
            f"firewall); check the address, or {fix}"
        ) from None
    except OSError as error:
        raise HandlerStartError(f"{where}: {error.strerror or error}; {fix}") from None


def speaks_tls(host: str, port: int) -> bool:
    """Whether ``host:port`` answers a TLS handshake (no certificate is checked or sent)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        with (
            socket.create_connection((host, port), timeout=PROBE_SECONDS) as raw,
            context.wrap_socket(raw),
        ):
            return True
    except ssl.SSLError as error:  # under TLS 1.2 a missing certificate is refused in the handshake
        return "ALERT" in str(error.reason or "")
    except OSError:
        return False


def check_tls(address: str, location: str) -> None:
    """A tls:// address: the client's files are set, readable and accepted by the scheduler."""
    ca_file, cert, key = (dask.config.get(k, None) for k in (CA_FILE, CLIENT_CERT, CLIENT_KEY))
    missing = [k for k, v in ((CA_FILE, ca_file), (CLIENT_CERT, cert)) if not v]
    if missing:
        if CLIENT_CERT in missing and not key:
            missing.append(CLIENT_KEY)  # with the certificate, unless its file holds the key
        raise HandlerStartError(
            f"{option_path('scheduler')}: {address} needs the client's TLS files in Dask's "
            f"configuration: set {words([env_var(k) for k in missing])} "
            f"({words(missing)}; {DOCS})"
        )
    for key_name, value in ((CA_FILE, ca_file), (CLIENT_CERT, cert), (CLIENT_KEY, key)):
        if value and "\n" not in str(value):  # Dask also takes the PEM text itself
            check_file(key_name, str(value))
    try:
        context = Security().get_connection_args("client")["ssl_context"]
    except ssl.SSLError as error:
        raise HandlerStartError(
            f"{setting(CLIENT_CERT)} / {setting(CLIENT_KEY)}: cannot load the client's "
            f"certificate and key ({cert}, {key}): {error.reason or error}"
        ) from None
    except ValueError as error:
        raise HandlerStartError(f"{setting(CA_FILE)}: {error}") from None
    host, port = parse_host_port(location)
    handshake(address, location, context, host, port, ca_file, cert)


def check_file(key: str, path: str) -> None:
    """``path`` (the value of Dask setting ``key``) is a readable file."""
    if not os.path.isfile(path):
        raise HandlerStartError(f"{setting(key)}: {path} does not exist")
    if not os.access(path, os.R_OK):
        raise HandlerStartError(f"{setting(key)}: {path} is not readable")


def handshake(
    address: str,
    location: str,
    context: ssl.SSLContext,
    host: str,
    port: int,
    ca_file: str,
    cert: str,
) -> None:
    """One TLS handshake and the scheduler's first byte: failures become one line."""
    try:
        with (
            connect(address, host, port) as raw,
            context.wrap_socket(raw) as tls,
        ):
            tls.recv(1)  # a refused client certificate arrives as an alert here
    except ssl.SSLCertVerificationError:
        raise HandlerStartError(
            f"{setting(CA_FILE)}: the certificate of the scheduler at {address} is not signed by "
            f"the CA in {ca_file}: give the CA that signed the cluster's certificates"
        ) from None
    except ssl.SSLError as error:
        reason = str(error.reason or "")
        if reason == "WRONG_VERSION_NUMBER":
            raise HandlerStartError(
                f"{option_path('scheduler')}: the scheduler at {address} speaks plain TCP, not "
                f"TLS: use tcp://{location}, or start it with TLS ({DOCS})"
            ) from None
        if "ALERT" in reason:
            raise HandlerStartError(
                f"{setting(CLIENT_CERT)}: the scheduler at {address} refused the client "
                f"certificate {cert} ({reason.lower().replace('_', ' ')}): give one signed by "
                "the CA the cluster trusts"
            ) from None
    except OSError:  # anything else: the client says so in its own words
        pass
