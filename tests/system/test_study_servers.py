"""One study on two servers behind nginx, started by ``python -m backend.core.study_servers`` as a lab starts it.

Arrivals come by the one Prolific URL (nginx's redirector on loopback): each Prolific ID lands on one server and
stays there when it comes back (another browser, Prolific's own PROLIFIC_PID form of the link), the places are
shared out (each server's session has its share, with the same completion code), the launch check the command
prints covers every server, people who finish on either server are in one report, one review list, one bonus file
and one release over both, no server takes another's admin login, and Ctrl-C stops both servers and nginx. On
PostgreSQL (CI's second run) each server gets a database of its own beside the run's.
"""

from __future__ import annotations

import csv
import io
import json
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.parse

import pytest
import requests

from harness import PROJECT_ROOT
from harness.participants import Person
from harness.servers import base_env, deployment_mode, ensure_debian_package, free_port, own_database, rest
from tests.support.social import RUBRIC

ROOM = "social_eval_study"
PLACES = 24  # 12 a server
STUDY = "S1"
PIDS = [f"{n:024x}" for n in range(1, 17)]  # Prolific IDs are 24 hex digits


def _front_door_port() -> int:
    """A port P with P, P+1, P+2, P+101 and P+102 free (the front door, the servers nginx serves, the servers)."""
    for _ in range(50):
        port = free_port()
        if port + 102 > 65535:
            continue
        try:
            for offset in (0, 1, 2, 101, 102):
                with socket.socket() as sock:
                    sock.bind(("127.0.0.1", port + offset))
        except OSError:
            continue
        return port
    raise RuntimeError("no free run of ports")


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    ensure_debian_package("/usr/sbin/nginx", "nginx")
    folder = tmp_path_factory.mktemp("study-servers")
    port = _front_door_port()
    env = deployment_mode(base_env(LAB_NEW_PARTICIPANTS_PER_ADDRESS="100000", LAB_ADMIT_ARRIVALS_PER_S="100000"))
    with own_database(env) as env:
        command = [
            *(sys.executable, "-m", "backend.core.study_servers", "--servers", "2"),
            *("--config", "social_eval", "--room", ROOM, "--places", str(PLACES)),
            *("--completion-code", "DONE42", "--study-id", STUDY, "--set", "annotators_per_episode=2"),
            *("--port", str(port), "--listen", "127.0.0.1", "--public-host", "127.0.0.1", "--folder", str(folder)),
        ]
        log = folder / "command.log"
        with log.open("wb") as out:
            process = subprocess.Popen(command, cwd=PROJECT_ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 120
            while "Ready." not in log.read_text(errors="replace"):
                assert process.poll() is None, log.read_text(errors="replace")[-3000:]
                assert time.monotonic() < deadline, log.read_text(errors="replace")[-3000:]
                time.sleep(0.3)
            yield dict(port=port, process=process, log=log, env=env)
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
                try:
                    process.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    process.kill()
            _drop_server_databases(env)


def _drop_server_databases(env: dict) -> None:
    url = env.get("DATABASE_URL", "")
    if not url or url.startswith("sqlite"):
        return
    import psycopg2

    admin = psycopg2.connect(url)
    admin.autocommit = True
    try:
        with admin.cursor() as cursor:
            for n in (1, 2):
                cursor.execute(f"DROP DATABASE IF EXISTS {url.rpartition('/')[2]}_server{n} WITH (FORCE)")
    finally:
        admin.close()


def _arrive(port: int, pid: str, *, prolific_form: bool = False) -> tuple[int, str]:
    """A person opening the Prolific URL in a fresh browser: (the port of the server they landed on, their code)."""
    http = requests.Session()
    ids = dict(STUDY_ID=STUDY, SESSION_ID=f"X{pid[-4:]}")
    ids.update(PROLIFIC_PID=pid) if prolific_form else ids.update(participant_label=pid)
    front = http.get(f"http://127.0.0.1:{port}/room/{ROOM}", params=ids, allow_redirects=False, timeout=30)
    assert front.status_code == 302, front.text
    target = urllib.parse.urlsplit(front.headers["Location"])
    assert target.path == f"/room/{ROOM}" and urllib.parse.parse_qs(target.query) == {k: [v] for k, v in ids.items()}
    welcome = http.get(front.headers["Location"], timeout=30)
    assert welcome.status_code == 200 and "welcome_page_ok" in welcome.text
    # what the welcome page's script does: the PID as participant_label, then on with welcome_page_ok
    forward = dict(participant_label=pid, STUDY_ID=STUDY, SESSION_ID=ids["SESSION_ID"], welcome_page_ok=1)
    page = http.get(f"{target.scheme}://{target.netloc}/room/{ROOM}", params=forward, timeout=30)
    assert page.status_code == 200, page.text[:500]
    landed = urllib.parse.urlsplit(page.url)
    assert landed.port == target.port, "oTree's own redirects left the server nginx chose"
    code = re.fullmatch(r"/p/(\w+)/social_eval/Consent/1", landed.path)
    assert code, page.url
    return landed.port, code.group(1)


def _sessions(study) -> dict[int, dict]:
    """Each server's session (REST, through nginx), by the port nginx serves it at."""
    found = {}
    for port in (study["port"] + 1, study["port"] + 2):
        (summary,) = rest(f"http://127.0.0.1:{port}", "GET", "/api/sessions").json()
        found[port] = rest(f"http://127.0.0.1:{port}", "POST", f"/api/get_session/{summary['code']}", json={}).json()
    return found


def test_each_prolific_id_lands_on_one_server_and_stays_there_and_places_are_shared_out(study):
    port = study["port"]
    first = {pid: _arrive(port, pid) for pid in PIDS}
    servers = {server for server, _ in first.values()}
    assert servers == {port + 1, port + 2}, "both servers take arrivals"

    # back again: another browser, and Prolific's own form of the link
    assert {pid: _arrive(port, pid) for pid in PIDS} == first
    assert {pid: _arrive(port, pid, prolific_form=True) for pid in PIDS[:4]} == {p: first[p] for p in PIDS[:4]}

    sessions = _sessions(study)
    assert len({session["code"] for session in sessions.values()}) == 2
    for server, session in sessions.items():
        assert len(session["participants"]) == PLACES // 2, "each server has its share of the places"
        assert session["config"]["completion_code"] == "DONE42"
        assert session["config"]["prolific_study_id"] == STUDY
        assert session["config"]["annotators_per_episode"] == 2
        labelled = {p["label"]: p["code"] for p in session["participants"] if p["label"]}
        assert labelled == {pid: code for pid, (where, code) in first.items() if where == server}


def test_the_front_door_answers_room_links_only(study):
    port = study["port"]
    for path in ("/admin", "/SessionStartLinks/x", "/api/sessions"):
        assert requests.get(f"http://127.0.0.1:{port}{path}", allow_redirects=False, timeout=30).status_code == 404


def _backend(study, *arguments: str, **env: str) -> subprocess.CompletedProcess:
    """``python -m backend ARGUMENTS`` as the researcher runs it, the study's admin password in the environment."""
    line = [sys.executable, "-m", "backend", *arguments]
    environment = dict(study["env"], **env)
    return subprocess.run(line, cwd=PROJECT_ROOT, env=environment, capture_output=True, text=True, timeout=300)


def _pairs(study) -> list[str]:
    """``--server URL --session CODE`` for every server, from REST."""
    return [
        item
        for port, session in _sessions(study).items()
        for item in ("--server", f"http://127.0.0.1:{port}", "--session", session["code"])
    ]


def test_the_launch_check_the_command_prints_covers_every_server(study):
    printed = re.search(r"^The launch check of every server: python -m backend (.*)$", study["log"].read_text(), re.M)
    assert printed, study["log"].read_text()[-2000:]
    assert printed.group(1).split() == ["launch-check", *_pairs(study)]
    together = _backend(study, *printed.group(1).split())
    apart = []
    for port, session in _sessions(study).items():
        alone = _backend(study, "launch-check", "--server", f"http://127.0.0.1:{port}", "--session", session["code"])
        assert alone.stdout.strip(), alone.stderr
        apart.append((f"http://127.0.0.1:{port} (session {session['code']}):\n{alone.stdout}", alone.returncode))
    assert together.stdout == "".join(text for text, _ in apart), together.stderr
    assert together.returncode == max(status for _, status in apart)


def _rating_form(page: str) -> dict[str, str]:
    form = {}
    for agent in (1, 2):
        for slot, dimension in enumerate(RUBRIC.dimensions, start=1):
            form[f"rating_{agent}_{slot}"] = str(dimension.max if agent == 1 else dimension.min)
            form[f"reason_{agent}_{slot}"] = "The agent keeps its word, as the turns show."
    return form


def _finish(server_port: int, code: str) -> None:
    """A participant already in on ``server_port`` walks the study to the completion page."""
    person = Person(f"http://127.0.0.1:{server_port}/InitializeParticipant/{code}")
    while person.page in ("Consent", "Instructions"):
        person.submit(dict(consent_given="True") if person.page == "Consent" else {})
    while person.page == "Rate":
        before = person.url
        person.submit(_rating_form(person.html))
        assert person.url != before, "the rating form was refused"
    assert person.page == "Completion", person.url


def test_one_report_review_list_bonus_file_and_release_over_both_servers(study, tmp_path):
    port = study["port"]
    landed = {pid: _arrive(port, pid) for pid in PIDS}
    finished = {}
    for server in (port + 1, port + 2):
        for pid in [pid for pid, (where, _) in landed.items() if where == server][:2]:
            _finish(*landed[pid])
            finished[pid] = server
    url = {server: f"http://127.0.0.1:{server}" for server in (port + 1, port + 2)}

    review = _backend(study, "review", *_pairs(study))
    assert review.returncode == 0, review.stderr
    rows = list(csv.DictReader(io.StringIO(review.stdout)))
    assert {(row["prolific_pid"], row["server"]) for row in rows} == {(p, url[w]) for p, (w, _) in landed.items()}
    done = {row["prolific_pid"]: row for row in rows if row["status"] == "finished"}
    assert {pid: row["server"] for pid, row in done.items()} == {pid: url[w] for pid, w in finished.items()}
    assert {row["completion_code"] for row in done.values()} == {"DONE42"}

    bonus = _backend(study, "bonus", *_pairs(study))
    each = [_backend(study, "bonus", "--server", url[s], "--session", c["code"]) for s, c in _sessions(study).items()]
    assert bonus.returncode == 0 and bonus.stdout == "".join(sorted(e.stdout for e in each)), bonus.stderr

    files, names = [], []
    for server, session in _sessions(study).items():
        exported = rest(
            url[server],
            "GET",
            "/api/export_app_custom",
            params=dict(app="social_eval", function_name="custom_export_ratings_long", session_code=session["code"]),
        )
        assert exported.status_code == 200, exported.text[:300]
        files.append(tmp_path / f"server{server - port}.csv")
        files[-1].write_bytes(exported.content)
        names.append(f"server{server - port}")
    report = _backend(study, "report", *map(str, files), "--servers", ",".join(names), "--json")
    assert report.returncode == 0, report.stderr
    assert json.loads(report.stdout)["annotators"] == len(finished) == 4

    bundle = tmp_path / "bundle"
    release = _backend(
        study,
        *("release", "--out", str(bundle), "--no-figures", *map(str, files), "--servers", ",".join(names)),
        RELEASE_PSEUDONYM_KEY="k" * 64,
    )
    assert release.returncode == 0, release.stderr
    import pandas as pd

    released = pd.read_parquet(bundle / "data" / "ratings.parquet")
    assert released["annotator"].nunique() == 4
    assert {name.split("-")[0] for name in released["source_file"]} == set(names)


def test_no_server_takes_another_servers_admin_login(study):
    port = study["port"]
    browser = requests.Session()  # one browser: cookies per host, not per port
    form = browser.get(f"http://127.0.0.1:{port + 1}/login", timeout=30).text
    token = re.search(r'name="csrftoken" value="([^"]+)"', form).group(1)
    password = study["env"]["OTREE_ADMIN_PASSWORD"]
    login = dict(username="admin", password=password, csrftoken=token)
    assert "/login" not in browser.post(f"http://127.0.0.1:{port + 1}/login", data=login, timeout=30).url
    sessions = _sessions(study)
    mine = browser.get(f"http://127.0.0.1:{port + 1}/ReviewList/{sessions[port + 1]['code']}", timeout=30)
    assert mine.status_code == 200 and "/login" not in mine.url
    other = browser.get(f"http://127.0.0.1:{port + 2}/ReviewList/{sessions[port + 2]['code']}", timeout=30)
    assert "/login" in other.url, "server2 took server1's login cookie"


def test_a_big_request_passes_the_front_door_whatever_folder_the_study_is_in(study):
    """nginx's workers (www-data) cannot reach a study folder under a private parent (this test's is under pytest's
    0700 folder, a lab's often under /root): a request or answer bigger than nginx's memory buffers went to its
    temporary files there and failed (a 3 MB upload answered 500 by nginx; a 20 MB export cut at 11 MB). Both now stay
    in memory: the upload reaches the server, which answers it itself."""
    body = b'{"padding": "' + b"a" * 3_000_000 + b'"}'
    answer = requests.post(
        f"http://127.0.0.1:{study['port'] + 1}/api/sessions",
        data=body,
        headers={"Content-Type": "application/json", "otree-rest-key": "not-the-key"},
        timeout=60,
    )
    assert answer.status_code != 500 and "nginx" not in answer.text, (answer.status_code, answer.text[:300])
    errors = (study["log"].parent / "nginx-error.log").read_text(errors="replace")
    assert "Permission denied" not in errors, errors[-2000:]


def test_ctrl_c_stops_both_servers_and_nginx(study):
    port, process = study["port"], study["process"]
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=60) == 0
    deadline = time.monotonic() + 10
    while any(_answers(port + offset) for offset in (0, 1, 2, 101, 102)):
        assert time.monotonic() < deadline, "a server or nginx still answers after Ctrl-C"
        time.sleep(0.2)
    log = study["log"].read_text(errors="replace")
    assert all(f"{name}.1 stopped" in log for name in ("server1", "server2", "nginx")), log[-2000:]
