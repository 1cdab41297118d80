"""One study on several servers of one machine, in one command: ``python -m backend.core.study_servers``.

oTree serves a session from one process (one core); a launch of thousands needs several servers, each with its own
room and session (``docs/multi-server.md``). This command starts, under honcho (a Procfile manager from PyPI):

- N ``otree prodserver`` processes on loopback (``--port`` + 101, + 102, ...), each with its own database: a SQLite
  file (``--folder``/serverN/db.sqlite3), or, when ``DATABASE_URL`` names a PostgreSQL database, a database of its own beside it
  (``<name>_server1``, ``<name>_server2``, ...);
- nginx (Debian's) as the front door: ``--port`` answers the study's Prolific URL with a redirect to one server,
  chosen by a hash of the Prolific ID (``split_clients``), so the same person always lands on the same server; port
  ``--port`` + i is server i, proxied to its oTree process (pages and websockets).

Then it creates, on every server whose database is new, one session of ``--config`` in ``--room`` with its share of
``--places`` and the same session keys (completion code, screen-out code, Prolific study id, ``--set``), prints the
one Prolific URL, each server's address and session, and waits. Ctrl-C (or SIGTERM) stops honcho, which stops
every server and nginx. Run it again with the same ``--folder`` to resume: the databases are kept and no session
is created twice.

Example (a lab's machine ``lab.example.org``, TLS from certbot)::

    OTREE_ADMIN_PASSWORD=... python -m backend.core.study_servers --servers 2 --config social_eval \\
        --room social_eval_study --places 3000 --completion-code C1A2B3 --public-host lab.example.org \\
        --certificate /etc/letsencrypt/live/lab.example.org/fullchain.pem \\
        --certificate-key /etc/letsencrypt/live/lab.example.org/privkey.pem --port 443
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
NGINX = "/usr/sbin/nginx"
INTERNAL_OFFSET = 100  # server i listens on loopback at --port + 100 + i; nginx serves it at --port + i
PROLIFIC_QUERY = "participant_label={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"


@dataclass(frozen=True)
class Server:
    """One oTree server of the study: its name, the port nginx serves it at, and its loopback port."""

    name: str
    public_port: int
    internal_port: int


def servers_of(count: int, port: int) -> list[Server]:
    """The study's servers for ``count`` servers behind a front door at ``port``.

    >>> servers_of(2, 8000)
    [Server(name='server1', public_port=8001, internal_port=8101), Server(name='server2', public_port=8002, internal_port=8102)]
    """
    if not 1 <= count <= 64:
        raise ValueError(f"--servers must be between 1 and 64, not {count}.")
    return [Server(f"server{i}", port + i, port + INTERNAL_OFFSET + i) for i in range(1, count + 1)]


def shares(places: int, count: int) -> list[int]:
    """Each server's share of ``places`` (the first ones take the remainder).

    >>> shares(3000, 2), shares(10, 3)
    ([1500, 1500], [4, 3, 3])
    """
    base, extra = divmod(places, count)
    return [base + (1 if i < extra else 0) for i in range(count)]


def split_percentages(count: int) -> list[str]:
    """nginx ``split_clients`` shares for ``count`` servers (two decimals at most; the last takes the rest: ``*``).

    >>> split_percentages(2), split_percentages(3)
    (['50%', '*'], ['33.33%', '33.33%', '*'])
    """
    share = int(10000 / count) / 100
    return [f"{share:g}%"] * (count - 1) + ["*"]


def nginx_config(servers: list[Server], *, port: int, folder: Path, listen: str = "", tls: tuple = ()) -> str:
    """nginx's configuration: the redirector at ``port`` (the Prolific ID from ``participant_label``, else
    ``PROLIFIC_PID``, hashed to a server) and one proxy per server at its public port. ``tls``: (certificate, key).

    >>> text = nginx_config(servers_of(2, 8000), port=8000, folder=Path("/run/s"), listen="127.0.0.1")
    >>> "split_clients \\"${study_pid}\\" $study_port" in text, "listen 127.0.0.1:8002;" in text
    (True, True)
    >>> "return 302 $scheme://$host:$study_port$request_uri;" in text, "proxy_pass http://127.0.0.1:8102;" in text
    (True, True)
    """
    address = f"{listen}:" if listen else ""
    ssl = " ssl" if tls else ""
    certificate = f"    ssl_certificate {tls[0]};\n    ssl_certificate_key {tls[1]};\n" if tls else ""
    temp = folder / "nginx"
    splits = "".join(
        f"        {share:<8} {server.public_port};\n"
        for share, server in zip(split_percentages(len(servers)), servers, strict=True)
    )
    proxies = "".join(
        f"""
server {{
    listen {address}{server.public_port}{ssl};
{certificate}    client_max_body_size 40m;   # the REST API accepts up to 32 MiB
    location / {{
        proxy_pass http://127.0.0.1:{server.internal_port};
        proxy_http_version 1.1;
        proxy_set_header Upgrade $http_upgrade;   # oTree's live pages are websockets
        proxy_set_header Connection $connection_upgrade;
        proxy_set_header Host $http_host;         # with the port: oTree's redirects stay on this server
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        proxy_set_header X-Forwarded-Proto $scheme;
        proxy_read_timeout 3600s;                 # a DoND game's socket stays open for the whole game
    }}
}}
"""
        for server in servers
    )
    user = "user www-data;\n" if os.geteuid() == 0 else ""
    return f"""# Written by python -m backend.core.study_servers: the front door of one study on {len(servers)} servers.
{user}worker_processes 1;
daemon off;
pid {folder}/nginx.pid;
error_log {folder}/nginx-error.log warn;
events {{
    worker_connections 4096;
}}
http {{
    access_log off;
    # Requests and answers stay in memory, never in nginx's temporary files: its workers (www-data) may not reach the
    # study's folder (under /root, or a temporary folder: a 20 MB export was cut at 11 MB, a 3 MB upload refused).
    client_body_buffer_size 40m;
    proxy_max_temp_file_size 0;
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    fastcgi_temp_path {temp}/fastcgi;
    uwsgi_temp_path {temp}/uwsgi;
    scgi_temp_path {temp}/scgi;

    map $http_upgrade $connection_upgrade {{
        default upgrade;
        ''      close;
    }}
    # The Prolific ID: our participant_label, else Prolific's PROLIFIC_PID, named in the case oTree reads them (nginx's
    # own $arg_participant_label takes PARTICIPANT_LABEL too: put first, it chose the server while oTree gave the place
    # to the participant_label after it). Never change the list while the study runs: returning people would be sent
    # to another server.
    map $args $study_pid {{
        "~(?:^|&)participant_label=(?<label>[^&]*)" $label;
        "~(?:^|&)PROLIFIC_PID=(?<prolific>[^&]*)"   $prolific;
        default "";
    }}
    split_clients "${{study_pid}}" $study_port {{
{splits}    }}

server {{
    listen {address}{port}{ssl};
{certificate}    location /room/ {{
        # An encoded query (5f%33...) is hashed as written and read by oTree decoded: the same Prolific ID would have a
        # place on every server it is written for. Prolific's links hold no %: such a link is refused.
        if ($args ~ "%") {{
            return 400;
        }}
        return 302 $scheme://$host:$study_port$request_uri;   # path and query string unchanged
    }}
    location / {{
        return 404;
    }}
}}
{proxies}}}
"""


def server_folder(folder: Path, server: Server, *, root: Path = PROJECT_ROOT) -> Path:
    """``server``'s working folder in ``folder``: the project's entries as symlinks, and its own ``db.sqlite3``
    (oTree's SQLite file is always ``db.sqlite3`` in the working folder, so two servers never share one folder).

    >>> import tempfile
    >>> made = server_folder(Path(tempfile.mkdtemp()), Server("server1", 8001, 8101))
    >>> made.name, (made / "settings.py").is_symlink(), (made / "db.sqlite3").exists()
    ('server1', True, False)
    >>> shutil.rmtree(made.parent)
    """
    own = folder / server.name
    own.mkdir(parents=True, exist_ok=True)
    for entry in root.iterdir():
        if entry.name in {"db.sqlite3", ".git", ".venv", "venv", "__pycache__", ".pytest_cache"}:
            continue
        link = own / entry.name
        if link.is_symlink() and link.resolve() != entry.resolve():
            link.unlink()
        if not link.is_symlink():
            link.symlink_to(entry)
    return own


def postgres_url(base_url: str, server: Server) -> str:
    """``server``'s own database on the PostgreSQL server of ``base_url``: the base database's name + the server's.

    >>> postgres_url("postgresql://lab:pw@localhost:5432/study", Server("server2", 8002, 8102))
    'postgresql://lab:pw@localhost:5432/study_server2'
    """
    prefix, _, name = base_url.rpartition("/")
    name, query = (name.split("?", 1) + [""])[:2]
    return f"{prefix}/{name}_{server.name}" + (f"?{query}" if query else "")


def procfile(servers: list[Server], databases: dict[str, str], *, folder: Path, python_bin: Path) -> str:
    """honcho's Procfile: one line per oTree server (in its own folder; its PostgreSQL database, or without one its
    folder's SQLite file; a secret key of its own, so no server takes another's cookies; its loopback port) and one
    for nginx.

    >>> text = procfile(servers_of(2, 8000), {"server1": "", "server2": "postgresql://h/s_server2"},
    ...                 folder=Path("/d"), python_bin=Path("/v/bin"))
    >>> print(text)
    server1: cd /d/server1 && unset DATABASE_URL && export SECRET_KEY="$SECRET_KEY-server1" && exec /v/bin/otree prodserver 127.0.0.1:8101
    server2: cd /d/server2 && export DATABASE_URL='postgresql://h/s_server2' && export SECRET_KEY="$SECRET_KEY-server2" && exec /v/bin/otree prodserver 127.0.0.1:8102
    nginx: exec /usr/sbin/nginx -c /d/nginx.conf
    <BLANKLINE>
    """
    lines = []
    for server in servers:
        url = databases[server.name]
        database = f"export DATABASE_URL='{url}'" if url else "unset DATABASE_URL"
        lines.append(
            f'{server.name}: cd {folder / server.name} && {database} && export SECRET_KEY="$SECRET_KEY-{server.name}" '
            f"&& exec {python_bin / 'otree'} prodserver 127.0.0.1:{server.internal_port}"
        )
    return "\n".join([*lines, f"nginx: exec {NGINX} -c {folder / 'nginx.conf'}"]) + "\n"


def session_keys(pairs: list[str], **named: str) -> dict:
    """The session keys every server's session gets: ``--set KEY=VALUE`` (a number or JSON value read as such) and
    the named ones that were given.

    >>> session_keys(["annotators_per_episode=2", "language=de"], completion_code="C1", screenout_code="")
    {'annotators_per_episode': 2, 'language': 'de', 'completion_code': 'C1'}
    """
    keys = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not re.fullmatch(r"[a-z_][a-z0-9_]*", key):
            raise ValueError(f"--set takes KEY=VALUE with a session key's name, not {pair!r}.")
        try:
            keys[key] = json.loads(value)
        except ValueError:
            keys[key] = value
    keys.update({key: value for key, value in named.items() if value})
    return keys


def study_url(scheme: str, host: str, port: int, room: str) -> str:
    """The one URL to give Prolific.

    >>> study_url("https", "lab.example.org", 443, "social_eval_study")[:55]
    'https://lab.example.org/room/social_eval_study?particip'
    >>> study_url("http", "127.0.0.1", 8000, "bias_study").split("?")[0]
    'http://127.0.0.1:8000/room/bias_study'
    """
    default = {"http": 80, "https": 443}[scheme]
    where = host if port == default else f"{host}:{port}"
    return f"{scheme}://{where}/room/{room}?{PROLIFIC_QUERY}"


def _request(url: str, *, rest_key: str, data: dict | None = None, timeout: float = 30) -> object:
    body = json.dumps(data).encode() if data is not None else None
    request = urllib.request.Request(url, data=body, method="POST" if body else "GET")
    request.add_header("otree-rest-key", rest_key)
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 (our own servers)
        return json.loads(response.read() or b"null")


def _wait_until_up(url: str, honcho: subprocess.Popen, *, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if honcho.poll() is not None:
            raise RuntimeError(f"honcho stopped (exit status {honcho.returncode}) before {url} answered.")
        try:
            urllib.request.urlopen(url + "/favicon.ico", timeout=2)  # noqa: S310 (our own server)
            return
        except urllib.error.HTTPError as error:
            if error.code < 500:
                return
        except OSError:
            pass
        time.sleep(0.3)
    raise RuntimeError(f"{url} did not answer within {timeout_s:.0f} s.")


def _create_database(base_url: str, url: str) -> bool:
    """Create ``url``'s database on the PostgreSQL server unless it exists; True when it was created."""
    import psycopg2

    name = url.rpartition("/")[2].split("?")[0]
    if not re.fullmatch(r"[A-Za-z0-9_]+", name):
        raise ValueError(f"The database name {name!r} is not letters, digits and _.")
    admin = psycopg2.connect(base_url)
    admin.autocommit = True
    try:
        with admin.cursor() as cursor:
            cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
            if cursor.fetchone():
                return False
            cursor.execute(f"CREATE DATABASE {name}")
            return True
    finally:
        admin.close()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="One study on several oTree servers of this machine behind nginx, under honcho: creates each "
        "server's session in the room, prints the one Prolific URL; Ctrl-C stops everything (docs/multi-server.md)."
    )
    parser.add_argument("--servers", type=int, default=2, help="how many oTree servers (one core each)")
    parser.add_argument("--config", required=True, help="the session config, e.g. social_eval")
    parser.add_argument("--room", required=True, help="the study's room, e.g. social_eval_study")
    parser.add_argument("--places", type=int, required=True, help="places over all servers (each gets its share)")
    parser.add_argument("--spare", type=int, default=0, help="extra places on every server (for returns)")
    parser.add_argument("--completion-code", help="Prolific's completion code (the same on every server)")
    parser.add_argument("--screenout-code", help="Prolific's screen-out code (the same on every server)")
    parser.add_argument("--study-id", help="Prolific's study id: links with another STUDY_ID are refused")
    parser.add_argument("--set", action="append", metavar="KEY=VALUE", help="any other session key")
    parser.add_argument("--port", type=int, default=8000, help="the front door; server i is at PORT+i")
    parser.add_argument("--listen", help="nginx's address (default: every address of the machine)")
    parser.add_argument("--public-host", help="the machine's name in the printed URLs (default: its name)")
    parser.add_argument("--certificate", help="TLS certificate (fullchain.pem); without it plain HTTP")
    parser.add_argument("--certificate-key", help="TLS key (privkey.pem)")
    parser.add_argument(
        "--folder", default="study-servers", help="the servers' folders and databases, nginx's configuration"
    )
    return parser


def _databases(servers: list[Server], folder: Path) -> tuple[dict[str, str], set[str]]:
    """Each server's PostgreSQL database URL ("" for SQLite), and the servers whose database is new (their session
    is created)."""
    base_url = os.environ.get("DATABASE_URL", "")
    databases, new = {}, set()
    for server in servers:
        server_folder(folder, server)
        if base_url and not base_url.startswith("sqlite"):
            databases[server.name] = postgres_url(base_url, server)
            if _create_database(base_url, databases[server.name]):
                new.add(server.name)
        else:
            databases[server.name] = ""
            if not (folder / server.name / "db.sqlite3").exists():
                new.add(server.name)
    return databases, new


def _server_env(args) -> dict[str, str]:
    env = dict(os.environ, OTREE_PRODUCTION="1", PYTHONUNBUFFERED="1")
    env.setdefault("OTREE_REST_KEY", secrets.token_hex(16))
    env.setdefault("SECRET_KEY", secrets.token_hex(32))
    if not args.certificate:
        env["LAB_NO_TLS"] = "1"  # plain HTTP: cookies without Secure (docs/deploying.md)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if not os.environ.get("OTREE_ADMIN_PASSWORD"):
        raise SystemExit("Set OTREE_ADMIN_PASSWORD first: every server's admin pages use it.")
    if not Path(NGINX).exists():
        raise SystemExit(f"{NGINX} is missing: apt-get install nginx (Debian's).")
    honcho_bin = Path(sys.executable).parent / "honcho"
    if not honcho_bin.exists():
        raise SystemExit(f"{honcho_bin} is missing: pip install -r requirements.txt.")
    if bool(args.certificate) != bool(args.certificate_key):
        raise SystemExit("Give both --certificate and --certificate-key, or neither.")
    servers = servers_of(args.servers, args.port)
    keys = session_keys(
        args.set or [],
        completion_code=args.completion_code or "",
        screenout_code=args.screenout_code or "",
        prolific_study_id=args.study_id or "",
    )
    folder = Path(args.folder).resolve()
    (folder / "nginx").mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:  # nginx's workers run as www-data: they need its temporary files
        shutil.chown(folder / "nginx", user="www-data")
        folder.chmod(folder.stat().st_mode | 0o111)
    databases, new = _databases(servers, folder)
    tls = (args.certificate, args.certificate_key) if args.certificate else ()
    (folder / "nginx.conf").write_text(
        nginx_config(servers, port=args.port, folder=folder, listen=args.listen or "", tls=tls)
    )
    (folder / "Procfile").write_text(
        procfile(servers, databases, folder=folder, python_bin=Path(sys.executable).parent)
    )
    env = _server_env(args)
    honcho = subprocess.Popen(
        [str(honcho_bin), "start", "--no-colour", "-f", str(folder / "Procfile"), "-d", str(PROJECT_ROOT)],
        env=env,
        start_new_session=True,  # our signal handler stops it once
    )

    def stop(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    try:
        for server in servers:
            _wait_until_up(f"http://127.0.0.1:{server.internal_port}", honcho)
        scheme = "https" if tls else "http"
        host = args.public_host or os.uname().nodename
        print(f"Prolific study URL: {study_url(scheme, host, args.port, args.room)}", flush=True)
        places = dict(zip([server.name for server in servers], shares(args.places, len(servers)), strict=True))

        def session_of(server: Server) -> tuple[str, str]:
            """(the server's session code, what was done): created when its database is new, else the one kept."""
            base = f"http://127.0.0.1:{server.internal_port}"
            if server.name not in new:
                kept = _request(base + "/api/sessions", rest_key=env["OTREE_REST_KEY"]) or [{}]
                return kept[-1].get("code", ""), "database kept from an earlier run (no session created)"
            payload = dict(
                session_config_name=args.config,
                num_participants=places[server.name] + args.spare,
                room_name=args.room,
                modified_session_config_fields=keys,
            )
            session = _request(base + "/api/sessions", rest_key=env["OTREE_REST_KEY"], data=payload, timeout=1800)
            return session["code"], f"session {session['code']} created, {places[server.name] + args.spare} places"

        with ThreadPoolExecutor(max_workers=len(servers)) as pool:  # each server creates its own session at once
            made = list(pool.map(session_of, servers))
        pairs = []
        for server, (code, what) in zip(servers, made, strict=True):
            where = f"{scheme}://{host}:{server.public_port}"
            database = databases[server.name].split("@")[-1] or folder / server.name / "db.sqlite3"
            print(f"{server.name}: {where} ({what}); database {database}", flush=True)
            pairs += ["--server", where, "--session", code] if code else []
        print(f"The launch check of every server: python -m backend launch-check {' '.join(pairs)}", flush=True)
        print(
            "After the study, one bonus file and one review list over all servers: python -m backend bonus (review) "
            "with the same --server and --session pairs.",
            flush=True,
        )
        print("Ready. Ctrl-C stops every server and nginx.", flush=True)
        honcho.wait()
        return honcho.returncode or 0
    except KeyboardInterrupt:
        return 0
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if honcho.poll() is None:
            honcho.send_signal(signal.SIGINT)
            try:
                honcho.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(honcho.pid, signal.SIGKILL)
                honcho.wait()


if __name__ == "__main__":
    sys.exit(main())
