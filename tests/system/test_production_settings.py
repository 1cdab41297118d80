"""Production mode refuses to start without secrets, and defaults to password-protected admin pages."""

from __future__ import annotations

import subprocess

import pytest

from harness.servers import OTREE, base_env, free_port, scratch_project


@pytest.mark.parametrize(
    ("present", "missing"),
    [
        ({}, "OTREE_ADMIN_PASSWORD and SECRET_KEY"),
        ({"SECRET_KEY": "k" * 32}, "OTREE_ADMIN_PASSWORD"),
        ({"OTREE_ADMIN_PASSWORD": "pw"}, "SECRET_KEY"),
    ],
)
def test_production_refuses_to_start_without_secrets(present, missing):
    env = base_env(OTREE_PRODUCTION="1", **present)
    for name in ("OTREE_ADMIN_PASSWORD", "SECRET_KEY"):
        if name not in present:
            env.pop(name, None)
    result = subprocess.run(
        [OTREE, "prodserver", f"127.0.0.1:{free_port()}"],
        cwd=scratch_project(),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert f"the environment variable(s) {missing} must be set" in result.stderr + result.stdout


def test_production_defaults_to_study_auth_level(monkeypatch):
    import runpy

    from harness import PROJECT_ROOT

    monkeypatch.setenv("OTREE_PRODUCTION", "1")
    monkeypatch.setenv("OTREE_ADMIN_PASSWORD", "pw")
    monkeypatch.setenv("SECRET_KEY", "k" * 32)
    monkeypatch.delenv("OTREE_AUTH_LEVEL", raising=False)
    assert runpy.run_path(str(PROJECT_ROOT / "settings.py"))["AUTH_LEVEL"] == "STUDY"
    monkeypatch.setenv("OTREE_AUTH_LEVEL", "DEMO")
    assert runpy.run_path(str(PROJECT_ROOT / "settings.py"))["AUTH_LEVEL"] == "DEMO"
    monkeypatch.delenv("OTREE_PRODUCTION")
    monkeypatch.delenv("OTREE_AUTH_LEVEL")
    assert runpy.run_path(str(PROJECT_ROOT / "settings.py"))["AUTH_LEVEL"] is None


def test_production_server_protects_admin_pages_exports_and_rest_api():
    import requests

    from harness.servers import running_server

    env = base_env(OTREE_PRODUCTION="1", OTREE_ADMIN_PASSWORD="admin-pw-for-test", SECRET_KEY="s" * 40)
    env["OTREE_REST_KEY"] = "rest-key-for-test"
    env.pop("OTREE_AUTH_LEVEL", None)
    with running_server(kind="prodserver", env=env) as server:
        for path in ("/demo", "/ExportIndex", "/ExportWide", "/ExportPageTimes", "/rooms", "/sessions"):
            response = requests.get(server.url + path, allow_redirects=False, timeout=30)
            assert response.status_code in (302, 303, 307), f"{path} answered {response.status_code} without login"
            assert "/login" in response.headers["location"].lower()
        for path in ("/api/sessions", "/api/export_wide", "/api/session_configs"):
            assert requests.get(server.url + path, timeout=30).status_code == 403, path
            wrong = requests.get(server.url + path, headers={"otree-rest-key": "wrong"}, timeout=30)
            assert wrong.status_code == 403, path
        authorised = requests.get(server.url + "/api/session_configs", headers={"otree-rest-key": "rest-key-for-test"})
        assert authorised.status_code == 200
        # Participants' entry stays open.
        assert requests.get(server.url + "/room/dond_study", timeout=30).status_code == 200
