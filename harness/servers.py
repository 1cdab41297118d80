"""Starting real oTree servers and bots for tests and benchmarks.

Each server runs in its own scratch folder (symlinks to the project), so its SQLite file and logs never touch the
checkout and several test runs can share a machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import csv
import http.cookiejar
import io
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import requests

from backend.core import clock
from harness import PROJECT_ROOT

OTREE = str(Path(sys.executable).with_name("otree"))
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
# Chromium's background services try the network, which this machine does not have; root needs --no-sandbox.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
SECRET_ENV_NAMES = ("OPENAI_API_KEY",)
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


def _loopback_is_secure(original):
    """Browsers treat http://127.0.0.1 as a secure context and send it ``Secure`` cookies (production marks every
    cookie Secure: lab_server/headers.py); requests' cookie jar, like Python's, would drop them over plain HTTP."""

    def return_ok_secure(self, cookie, request):
        host = urllib.parse.urlparse(request.get_full_url()).hostname
        return host in LOOPBACK_HOSTS or original(self, cookie, request)

    return return_ok_secure


http.cookiejar.DefaultCookiePolicy.return_ok_secure = _loopback_is_secure(
    http.cookiejar.DefaultCookiePolicy.return_ok_secure
)


def run_async(coroutine):
    """asyncio.run in a fresh thread: while a browser test runs, Playwright keeps an event loop in the main thread."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def ensure_debian_package(path: str, package: str) -> None:
    """Install a Debian package when ``path`` is missing (tests start the real components they need)."""
    if Path(path).exists():
        return
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        raise RuntimeError(f"{path} is missing and cannot be installed here: run `apt-get install {package}` as root.")
    lock = Path(tempfile.gettempdir()) / "apt-install.lock"  # one for every package: dpkg takes one install at a time
    with lock.open("w") as handle:
        import fcntl

        fcntl.flock(handle, fcntl.LOCK_EX)  # parallel test processes install once, one package after another
        if not Path(path).exists():
            quiet = dict(stdout=subprocess.DEVNULL, env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
            subprocess.run(["apt-get", "update", "-qq"], check=True, **quiet)
            subprocess.run(["apt-get", "install", "-y", "-qq", package], check=True, **quiet)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def scratch_project(prefix: str = "otree-run-", *, root: Path = PROJECT_ROOT) -> Path:
    """A temporary folder that looks like the project (symlinks) but keeps its own database and files; ``root``: the
    project to copy (a bench's earlier revision)."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    for entry in root.iterdir():
        if entry.name in {"db.sqlite3", ".git", ".venv", "venv", "__pycache__", ".pytest_cache"}:
            continue
        (folder / entry.name).symlink_to(entry)
    return folder


def base_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("OTREE_PRODUCTION", None)
    # The suite runs on SQLite unless TEST_DATABASE_URL names another database (CI's PostgreSQL run).
    if env.get("TEST_DATABASE_URL"):
        env["DATABASE_URL"] = env["TEST_DATABASE_URL"]
    else:
        env.pop("DATABASE_URL", None)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["PYTHONUNBUFFERED"] = "1"
    # A test server is busy by design (requests one after another, no person pausing between them, sessions of
    # hundreds created at once): the admission gate's busy share would hold the next test's room link on the
    # waiting page. tests/system/test_admission.py and bench/admission.py set it explicitly.
    env["LAB_ADMIT_MAX_BUSY_PERCENT"] = "100"
    env.update(extra)
    return env


# One REST key for every production server this process starts: servers shared across test modules keep answering
# this process's REST calls while a module starts a server of its own.
PROCESS_REST_KEY = secrets.token_hex(16)


def deployment_mode(env: dict[str, str], *, debug: bool = False) -> dict[str, str]:
    """``env`` set up as a lab deploys the server (README "Deploying"): production mode, fresh secrets, the REST API
    behind this process's key (`PROCESS_REST_KEY`), which this process's ``create_session`` and ``session_start_links`` then send. ``debug``: oTree's
    debug mode instead (OTREE_PRODUCTION=0, debug tables on every page)."""
    if debug:
        env["OTREE_PRODUCTION"] = "0"
        return env
    rest_key = PROCESS_REST_KEY
    env.update(
        OTREE_PRODUCTION="1",
        OTREE_ADMIN_PASSWORD=secrets.token_hex(16),
        SECRET_KEY=secrets.token_hex(32),
        OTREE_REST_KEY=rest_key,
    )
    os.environ["OTREE_REST_KEY"] = rest_key
    return env


def uses_server_database(env: dict[str, str]) -> bool:
    """Whether DATABASE_URL names a database server (PostgreSQL) rather than SQLite."""
    url = env.get("DATABASE_URL", "")
    return bool(url) and not url.startswith("sqlite")


@dataclass
class RunningServer:
    url: str
    process: subprocess.Popen
    folder: Path
    log_path: Path
    last_log: str = ""  # the log as it was when the server stopped (its folder may be gone since)
    clock_file: str | None = None  # LAB_TEST_CLOCK_FILE of the server: tests move its clock (`ServerClock`)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else self.last_log

    def stop(self, sig: int | None = None) -> None:
        try:
            self._stop(sig)
        finally:
            self.last_log = self.log()

    def _stop(self, sig: int | None) -> None:
        if self.process.poll() is None:
            if sig is not None:
                os.killpg(self.process.pid, sig)
            else:
                os.killpg(self.process.pid, 15)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, 9)
                self.process.wait(timeout=10)


def wait_until_up(url: str, process: subprocess.Popen, log_path: Path, *, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"The oTree server exited with {process.returncode}:\n{log_path.read_text()[-3000:]}")
        try:
            if requests.get(url + "/favicon.ico", timeout=2).status_code < 500:
                return
        except requests.RequestException:
            pass
        time.sleep(0.3)
    raise RuntimeError(f"The oTree server did not answer within {timeout_s} s:\n{log_path.read_text()[-3000:]}")


def start_server(
    *, kind: str = "devserver", env: dict[str, str] | None = None, folder: Path | None = None, port: int | None = None
) -> RunningServer:
    """Start ``otree devserver`` (without its file-watching reloader) or ``otree prodserver`` on a free port."""
    folder = folder or scratch_project()
    port = port or free_port()
    command = {
        "devserver": [OTREE, "devserver_inner", f"127.0.0.1:{port}"],
        "prodserver": [OTREE, "prodserver", f"127.0.0.1:{port}"],
    }[kind]
    log_path = folder / f"{kind}-{port}.log"
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            command, cwd=folder, env=env or base_env(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    url = f"http://127.0.0.1:{port}"
    server = RunningServer(url=url, process=process, folder=folder, log_path=log_path)
    STARTED.append(server)
    try:
        wait_until_up(url, process, log_path)
    except RuntimeError:
        os.killpg(process.pid, 9)
        raise
    return server


# Every server this process started, in order: a failed test's report carries their logs (tests/conftest.py).
STARTED: list[RunningServer] = []


@contextlib.contextmanager
def running_server(**kwargs) -> Iterator[RunningServer]:
    server = start_server(**kwargs)
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(server.folder, ignore_errors=True)


# The servers the suite shares see the arrivals of every module that uses them: the per-address and arrival-rate
# budgets a study needs (tests/system/test_places.py, test_admission.py test them) would hold later modules' entries.
SHARED_SERVER_ENV = dict(LAB_NEW_PARTICIPANTS_PER_ADDRESS="100000", LAB_ADMIT_ARRIVALS_PER_S="100000")


@contextlib.contextmanager
def apps_server(llm_base_url: str, **extra: str) -> Iterator[RunningServer]:
    """The apps' test server: ``otree devserver`` (data in memory) whose LLM calls go to ``llm_base_url``; on
    PostgreSQL ``otree prodserver`` on a fresh database of its own. Tests send many live frames in a row to check the
    apps (the live budgets: tests/system/test_live_budgets.py)."""
    env = base_env(OPENAI_BASE_URL=llm_base_url, OPENAI_API_KEY="sk-test-not-a-real-key")
    env.update(LAB_LIVE_MESSAGES_PER_MINUTE="100000", **extra)
    clock_dir = tempfile.mkdtemp(prefix="lab-clock-")
    env[clock.CLOCK_FILE_VARIABLE] = os.path.join(clock_dir, "advance_s")
    with own_database(env) as env:
        server = start_server(kind="prodserver" if uses_server_database(env) else "devserver", env=env)
        server.clock_file = env[clock.CLOCK_FILE_VARIABLE]
        try:
            yield server
        finally:
            server.stop()
            shutil.rmtree(clock_dir, ignore_errors=True)


class ServerClock:
    """A test server's clock (``backend.core.clock``): `advance` moves its time forward at once, so a test never
    waits for a game limit, a partner's absence or a reservation to run out; the ``server_clock`` fixture sets it
    back when the test ends."""

    def __init__(self, server: RunningServer) -> None:
        if not server.clock_file:
            raise RuntimeError("This server has no test clock (harness.servers.apps_server gives one).")
        self.path = server.clock_file

    def advance(self, seconds: float) -> float:
        return clock.advance(seconds, self.path)

    def now(self) -> float:
        """The server's time (epoch seconds)."""
        return clock.now(self.path)

    def reset(self) -> None:
        Path(self.path).write_text("0", encoding="utf-8")


@contextlib.contextmanager
def production_lab(llm_base_url: str) -> Iterator[RunningServer]:
    """``otree prodserver`` as a lab deploys it (``deployment_mode``), its model calls going to ``llm_base_url``, on a
    database of its own; ``server.env`` and ``server.password`` (the admin's) for the tests that log in or restart."""
    env = deployment_mode(base_env(OPENAI_BASE_URL=llm_base_url, OPENAI_API_KEY="sk-test-not-a-real-key"))
    with own_database(env) as env:
        server = start_server(kind="prodserver", env=env)
        server.env, server.password = env, env["OTREE_ADMIN_PASSWORD"]
        try:
            yield server
        finally:
            server.stop()


@contextlib.contextmanager
def own_database(env: dict[str, str]) -> Iterator[dict[str, str]]:
    """On a database server, a fresh empty database for one run (dropped afterwards); SQLite envs pass through.

    The bot runner exports every session in its database, so on a shared PostgreSQL database it would also read the
    half-finished sessions other tests left behind.
    """
    if not uses_server_database(env):
        yield env
        return
    import uuid

    import psycopg2

    base_url = env["DATABASE_URL"]
    server_url, _, _ = base_url.rpartition("/")
    name = f"otree_run_{uuid.uuid4().hex[:12]}"
    admin = psycopg2.connect(base_url)
    admin.autocommit = True
    try:
        with admin.cursor() as cursor:
            cursor.execute(f"CREATE DATABASE {name}")
        yield dict(env, DATABASE_URL=f"{server_url}/{name}")
    finally:
        with admin.cursor() as cursor:
            cursor.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.close()


def run_bots(config_name: str, *, env: dict[str, str] | None = None, participants: int | None = None, export_dir=None):
    """Run ``otree test CONFIG [N] [--export DIR]`` in a scratch folder; return the completed process."""
    env = env or base_env()
    if uses_server_database(env):
        with own_database(env) as isolated_env:
            return _run_bots(config_name, env=isolated_env, participants=participants, export_dir=export_dir)
    return _run_bots(config_name, env=env, participants=participants, export_dir=export_dir)


def _run_bots(
    config_name: str, *, env: dict[str, str], participants: int | None, export_dir
) -> subprocess.CompletedProcess:
    folder = scratch_project("otree-bots-")
    if uses_server_database(env):
        # `otree test` would silently use in-memory SQLite; run the same bot runner on the real database.
        command = [sys.executable, "-m", "harness.bots_on_database", config_name, str(participants or "")]
        command += [str(export_dir)] if export_dir else []
    else:
        command = [OTREE, "test", config_name]
        if participants:
            command.append(str(participants))
        if export_dir:
            command.append(f"--export={export_dir}")
    try:
        return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=600)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


APP_TEMPLATE = '''"""{doc}"""

from otree.api import *
{preamble}

class C(BaseConstants):
    NAME_IN_URL = {name!r}
    PLAYERS_PER_GROUP = None
    NUM_ROUNDS = 1


class Subsession(BaseSubsession):
    pass


class Group(BaseGroup):
    pass


class Player(BasePlayer):
    pass


{body}'''


def app_source(name: str, *, doc: str, preamble: str = "", body: str = "page_sequence = []\n") -> str:
    """The ``__init__.py`` of a throwaway oTree app (for ``project_with_app``): ``doc``, ``from otree.api import *``
    and ``preamble``, then ``C`` (NAME_IN_URL ``name``, one round, no groups) and empty models, then ``body`` (its
    hooks, pages and ``page_sequence``).

    >>> source = app_source("x", doc="A test.")
    >>> "NAME_IN_URL = 'x'" in source, compile(source, "x/__init__.py", "exec").co_filename
    (True, 'x/__init__.py')
    """
    return APP_TEMPLATE.format(doc=doc, preamble=preamble, name=name, body=body)


def project_with_app(
    app_name: str, files: dict[str, str], *, prefix: str = "otree-app-", root: Path = PROJECT_ROOT
) -> Path:
    """A scratch copy of the project (``root``) with one more app (``files``: name -> text inside ``app_name/``) and
    a session config of the same name (``app_sequence=[app_name]``, one demo participant) appended to its settings."""
    folder = scratch_project(prefix, root=root)
    (folder / "settings.py").unlink()
    settings = (root / "settings.py").read_text(encoding="utf-8")
    extra = (
        f"SESSION_CONFIGS.append(dict(name={app_name!r}, display_name={app_name!r}, app_sequence=[{app_name!r}], "
        "num_demo_participants=1))"
    )
    (folder / "settings.py").write_text(settings + "\n" + extra + "\n", encoding="utf-8")
    (folder / app_name).mkdir()
    for name, text in files.items():
        (folder / app_name / name).write_text(text, encoding="utf-8")
    return folder


def script_on_server_session(config_name: str, participants: int, script: str) -> tuple[dict, Path]:
    """Create a ``config_name`` session on a production server (its own database), stop the server, run ``script``
    (Python source; the session's code is ``sys.argv[1]``) in the server's project folder on that database, and
    return the JSON object the script printed last, with the folder (oTree's SQLite file is there)."""
    env = deployment_mode(base_env())
    with own_database(env) as env:
        server = start_server(kind="prodserver", env=env)
        try:
            code = create_session(server.url, config_name, participants)["code"]
        finally:
            server.stop()
        done = subprocess.run(
            [sys.executable, "-c", script, code],
            cwd=server.folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        result = json.loads(done.stdout.strip().splitlines()[-1])
        result["server_database"] = uses_server_database(env)
    return result, server.folder


def rest_headers() -> dict[str, str]:
    """The REST API key header, with the key `deployment_mode` put into this process's environment."""
    return {"otree-rest-key": os.environ.get("OTREE_REST_KEY", "")}


def rest(server_url: str, method: str, path: str, **kwargs) -> requests.Response:
    """One REST API request (``path`` like ``/api/sessions``) with the key header; the response as it came."""
    return requests.request(method, server_url + path, headers=rest_headers(), timeout=60, **kwargs)


def session_codes(server_url: str) -> set[str]:
    """The codes of every (non-demo) session on the server, through the REST API."""
    response = rest(server_url, "GET", "/api/sessions")
    response.raise_for_status()
    return {session["code"] for session in response.json()}


def create_session(
    server_url: str, config_name: str, participants: int, *, room: str | None = None, timeout: float = 30, **config
) -> dict:
    """Create a session through the REST API (``POST /api/sessions``); returns the JSON answer (``timeout``: seconds
    to wait for it; a bench's session of thousands takes longer)."""
    payload = dict(session_config_name=config_name, num_participants=participants)
    if room:
        payload["room_name"] = room
    if config:
        payload["modified_session_config_fields"] = config
    response = requests.post(server_url + "/api/sessions", json=payload, headers=rest_headers(), timeout=timeout)
    response.raise_for_status()
    return response.json()


def export_rows(server_url: str, app: str, function: str | None = None, *, session_code: str | None = None) -> list:
    """An app's player table (``/api/export_app``) or one of its custom exports (``/api/export_app_custom``) as dict
    rows; only one session's with ``session_code``."""
    path, params = "/api/export_app", {"app": app}
    if function:
        path, params["function_name"] = "/api/export_app_custom", function
    if session_code:
        params["session_code"] = session_code
    response = requests.get(server_url + path, params=params, timeout=120)
    response.raise_for_status()
    return list(csv.DictReader(io.StringIO(response.content.decode("utf-8-sig"))))


def session_start_links(server_url: str, session_code: str) -> list[str]:
    """The participants' start URLs of a session (REST ``get_session``)."""
    response = requests.post(
        f"{server_url}/api/get_session/{session_code}", json={}, headers=rest_headers(), timeout=120
    )
    response.raise_for_status()
    return [f"{server_url}/InitializeParticipant/{p['code']}" for p in response.json()["participants"]]


def next_page(page, button: str = "Next") -> None:
    """Press a page's submit button and wait until the page that answers has loaded, its scripts included: the old
    page's elements are never read by mistake (a busy machine once showed a test the page it had just left)."""
    with page.expect_navigation(wait_until="load"):
        page.get_by_role("button", name=button).click()
