"""Connections to MCP servers (routine.yaml's `mcp_servers:`), through the official `mcp` SDK.

The SDK is async; routine's tool loop is not. Each server gets a thread with its own event loop
that holds the session open (a stdio program in run_command's sandbox, or a streamable-HTTP
URL); the loop's calls are handed to it and waited for, each at most the server's `timeout`.
A server is started once per process when a step first needs it, its tools listed once and
kept; one that fails, hangs or dies is stopped and started afresh by the next step that needs it.
Nothing here imports the SDK until a server is started: routine without `mcp_servers:` never does.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import logging
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from routine.config.model import McpServer
from routine.errors import McpUnavailable
from routine.redact import redact_text
from routine.tools.base import ToolError
from routine.tools.sandbox import server_argv

log = logging.getLogger(__name__)

MAX_TOOLS = 64      # listed per server; more are left out (and logged)
MAX_PAGES = 8       # of a paginated tools/list
START_SECONDS = 60  # at least this long to start and list its tools (a Python server imports for seconds)


@dataclass(frozen=True)
class Listed:
    """One tool as the server listed it (its words, not yet bounded: ``mcp_tools`` bounds them)."""

    name: str
    description: str
    schema: dict[str, Any]
    read_only: bool  # the server annotates it readOnlyHint: true


@dataclass(frozen=True)
class Answer:
    """A tool's result: its text parts joined, whether the server called it an error."""

    text: str
    error: bool


class Connection:
    """One running server: its session on a loop in a thread of its own."""

    def __init__(self, server: McpServer) -> None:
        self.server = server
        self.tools: list[Listed] = []
        self.answered = False  # a call has been answered since it started
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._session: Any = None
        self._ready = threading.Event()
        self._error: str | None = None
        self._failure: McpUnavailable | None = None
        self._errlog = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
        self._thread = threading.Thread(target=self._run, name=f"mcp-{server.name}", daemon=True)

    @property
    def alive(self) -> bool:
        return self._thread.is_alive() and self._session is not None and self._error is None

    def start(self) -> None:
        """Start the server and list its tools, in at most its timeout; McpUnavailable says why not."""
        self._thread.start()
        patience = max(self.server.timeout, START_SECONDS)
        if not self._ready.wait(patience):
            self.close()
            raise McpUnavailable(f"The MCP server {self.server.name} did not start and list its tools within "
                                 f"{patience:.0f}s.", self._fix())
        if self._failure is not None:
            self.close()
            raise self._failure
        if self._error is not None or self._session is None:
            self.close()
            raise McpUnavailable(f"The MCP server {self.server.name} did not start: {self._error}.{self._stderr()}",
                                 self._fix())

    def call(self, name: str, arguments: dict[str, Any]) -> Answer:
        """The tool's answer; a server that does not answer within its timeout is stopped (McpUnavailable)."""
        if not self.alive or self._loop is None:
            raise McpUnavailable(f"The MCP server {self.server.name} is not running.", self._fix())
        future = asyncio.run_coroutine_threadsafe(self._call(name, arguments), self._loop)
        try:
            return future.result(self.server.timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            self.close()
            raise McpUnavailable(f"The MCP server {self.server.name} did not answer {name} within "
                                 f"{self.server.timeout:.0f}s, so it was stopped.",
                                 f"raise `timeout` of mcp_servers.{self.server.name} in routine.yaml if the tool "
                                 "really needs longer, or fix the server.") from None
        except ToolError:
            raise
        except Exception as exc:  # the session broke (the program died): the next step starts it afresh
            self.close()
            raise McpUnavailable(f"The MCP server {self.server.name} failed during {name}: {_said(exc)}."
                                 f"{self._stderr()}", self._fix()) from None

    def close(self) -> None:
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(stop.set)
            except RuntimeError:  # the loop ended meanwhile
                pass
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(10)
        self._session = None

    # --- in the connection's own thread ------------------------------------------------------

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except McpUnavailable as exc:  # said already, with its own fix (no program, no sandbox)
            self._failure = exc
            self._error = exc.message
        except BaseException as exc:  # noqa: BLE001 - whatever ended the loop is the server's failure
            self._error = self._error or _said(exc)
        finally:
            self._session = None
            self._ready.set()

    async def _main(self) -> None:
        from contextlib import AsyncExitStack

        from mcp import ClientSession  # lazy: mcp, only once a server is started

        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        async with AsyncExitStack() as stack:
            streams = await stack.enter_async_context(self._transport())
            session = await stack.enter_async_context(ClientSession(streams[0], streams[1]))
            await session.initialize()
            self.tools = await _listed(session, self.server.name)
            self._session = session
            self._ready.set()
            await self._stop.wait()

    def _transport(self) -> Any:
        if self.server.url:
            from mcp.client.streamable_http import streamable_http_client  # lazy: mcp

            return streamable_http_client(self.server.url)
        from mcp import StdioServerParameters  # lazy: mcp
        from mcp.client.stdio import stdio_client  # lazy: mcp

        argv = sandboxed(self.server)
        return stdio_client(StdioServerParameters(command=argv[0], args=argv[1:], env={}), errlog=self._errlog)

    async def _call(self, name: str, arguments: dict[str, Any]) -> Answer:
        result = await self._session.call_tool(name, arguments)
        return Answer(_text_of(result), bool(getattr(result, "is_error", False)))

    # --- what the person is told -------------------------------------------------------------

    def _stderr(self) -> str:
        try:
            self._errlog.seek(0)
            tail = self._errlog.read()[-600:].strip()
        except (OSError, ValueError):
            return ""
        return f" Its last words: {redact_text(tail)}" if tail else ""

    def _fix(self) -> str:
        where = redact_text(self.server.where)
        return (f"check mcp_servers.{self.server.name} in routine.yaml ({where}); `routine doctor` starts each "
                "server and lists its tools.")


def sandboxed(server: McpServer) -> list[str]:
    """The stdio server's program in run_command's sandbox: its installation read-only, its
    `paths` read-write, the network only when it names `hosts`."""
    command = server.command or ""
    found = shutil.which(command)
    if found is None:
        raise McpUnavailable(f"The MCP server {server.name}'s program {command!r} was not found.",
                             f"install it, or give its full path as mcp_servers.{server.name}.command in routine.yaml.")
    program = Path(found).absolute()
    installed = [p for p in _installation(program) if not str(p).startswith(("/usr/", "/bin/", "/lib"))]
    try:
        return server_argv([str(program), *server.args], installed, list(server.paths), dict(server.env),
                           network=bool(server.hosts))
    except ToolError as exc:
        raise McpUnavailable(f"The MCP server {server.name} cannot start: {exc}", "apt install bubblewrap.") from None


def _installation(program: Path) -> list[Path]:
    """What the program needs to run besides the system: its virtual environment (a Python
    entry point's), the Python it was made with; a Node package's whole ``node_modules`` (npm's
    `.bin/` entry points are links into it, and the package imports its neighbours)."""
    modules = [p for p in (program.parent, *program.resolve().parents) if p.name == "node_modules"]
    if modules:
        return [modules[-1]]  # the outermost: its packages import each other
    root = program.parent.parent
    cfg = root / "pyvenv.cfg"
    if cfg.exists():  # its Python's own folder is named `home` there (e.g. /usr/local/bin)
        home = next((line.partition("=")[2].strip() for line in cfg.read_text(errors="replace").splitlines()
                     if line.partition("=")[0].strip() == "home"), "")
        return [root, *([Path(home).resolve().parent] if home else [])]
    return [program.resolve().parent]


async def _listed(session: Any, server: str) -> list[Listed]:
    from mcp.types import PaginatedRequestParams  # lazy: mcp

    tools: list[Any] = []
    cursor = None
    for _ in range(MAX_PAGES):
        page = await session.list_tools(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
        tools += page.tools
        cursor = page.next_cursor
        if not cursor:
            break
    if len(tools) > MAX_TOOLS:
        log.warning("the MCP server %s lists %d tools; the first %d are used", server, len(tools), MAX_TOOLS)
    out = []
    for t in tools[:MAX_TOOLS]:
        annotations = getattr(t, "annotations", None)
        out.append(Listed(str(t.name), str(t.description or ""), dict(t.input_schema or {}),
                          bool(annotations is not None and annotations.read_only_hint is True)))
    return out


def _text_of(result: Any) -> str:
    parts = []
    for item in result.content or []:
        kind = getattr(item, "type", "")
        if kind == "text":
            parts.append(str(item.text))
        elif kind == "resource" and hasattr(getattr(item, "resource", None), "text"):
            parts.append(str(item.resource.text))
        else:
            parts.append(f"[{kind or 'a part'} left out: only text is passed on]")
    if not parts and getattr(result, "structured_content", None) is not None:
        import json

        parts.append(json.dumps(result.structured_content, ensure_ascii=False, default=str))
    return "\n".join(parts)


def _said(exc: BaseException) -> str:
    """The first real error inside the SDK's exception groups, in one line."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return redact_text(text[:300])


# --- the process's servers ------------------------------------------------------------------------

_RUNNING: dict[str, Connection] = {}
_LOCK = threading.Lock()


def connected(server: McpServer) -> Connection:
    """The server's running connection, started (and its tools listed) if it is not running."""
    with _LOCK:
        conn = _RUNNING.get(server.name)
        if conn is not None and conn.alive and conn.server == server:
            return conn
        if conn is not None:
            conn.close()
        conn = Connection(server)
        _RUNNING[server.name] = conn
    conn.start()
    return conn


def stop_all() -> None:
    with _LOCK:
        running = list(_RUNNING.values())
        _RUNNING.clear()
    for conn in running:
        conn.close()


atexit.register(stop_all)
