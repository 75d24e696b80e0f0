"""An existing Dask scheduler (``npcomp sweep --scheduler``,
``npcomp reproduce --scheduler``): its address checked for its form, then
the server there asked what it is, each step under a time bound, so an
address where no Dask scheduler answers is refused within seconds, naming
--scheduler, before a sweep writes anything.  Dask's own client would wait
on a server that never completes its handshake (a web server), or fail
deep inside on one that answers other bytes."""

from __future__ import annotations

import asyncio
import re
import socket

from npcomp.errors import ConfigError


# seconds an existing scheduler has to accept a connection, and again to
# complete Dask's handshake and say what it is
SCHEDULER_TIMEOUT = 5.0
_HOST_PORT = re.compile(r"(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(?P<port>[0-9]{1,5})")


def scheduler_address(text: str) -> tuple:
    """``(address, host, port)`` of ``tcp://HOST:PORT`` (``HOST:PORT`` is read
    as tcp); ConfigError naming --scheduler for anything else."""
    scheme, separator, rest = text.strip().partition("://")
    if not separator:
        scheme, rest = "tcp", text.strip()
    found = _HOST_PORT.fullmatch(rest)
    if scheme != "tcp" or not found or not 0 < int(found["port"]) < 65536:
        raise ConfigError(
            "scheduler",
            f"{text!r} is not a scheduler's address: give "
            "tcp://HOST:PORT (a Dask scheduler listens on port "
            "8786 unless told otherwise)",
        )
    host = found["host"].strip("[]")
    return f"tcp://{found['host']}:{int(found['port'])}", host, int(found["port"])


def check_scheduler(text: str, timeout: float = SCHEDULER_TIMEOUT) -> str:
    """The address of the Dask scheduler at ``text`` once it has answered as
    one, each step under ``timeout`` seconds.  ConfigError naming
    --scheduler when the address is malformed, nothing listens there,
    something other than a Dask scheduler answers (or nothing does, in time)."""
    address, host, port = scheduler_address(text)

    def refused(reason: str):
        return ConfigError("scheduler", f"{text}: {reason}; nothing was started or written")

    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as error:
        raise refused(f"nothing accepts connections there ({error.strerror or error})") from None
    try:
        identity = asyncio.run(_identity(address, timeout))
    except (asyncio.TimeoutError, TimeoutError):
        raise refused(f"what listens there did not answer as a Dask scheduler within {timeout:g} s") from None
    except Exception:  # noqa: BLE001 - whatever the bytes did to Dask's reader (MemoryError...)
        raise refused("what listens there is not a Dask scheduler (its answer is not Dask's protocol)") from None
    if not isinstance(identity, dict) or identity.get("type") != "Scheduler":
        kind = identity.get("type") if isinstance(identity, dict) else None
        raise refused(f"a Dask {kind or 'server'} answers there, not a scheduler")
    return address


async def _identity(address: str, timeout: float):
    """What the Dask server at ``address`` says it is: the handshake and its
    answer to "identity", each within ``timeout`` seconds."""
    from distributed.comm import connect

    comm = await asyncio.wait_for(connect(address, timeout=timeout), timeout)
    try:
        await asyncio.wait_for(comm.write({"op": "identity", "reply": True}), timeout)
        return await asyncio.wait_for(comm.read(), timeout)
    finally:
        comm.abort()
