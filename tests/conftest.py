"""Fixtures shared by the whole suite."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings

from harness import PROJECT_ROOT
from tests.support import tiers

# Hypothesis: "full" (CI and the README's command) runs each test's own max_examples; "fast" (the fast tier,
# `pytest -m fast`, see docs/developers/tests.md) a tenth of them. Tests write `max_examples=examples(N)`
# (tests.support.examples). HYPOTHESIS_PROFILE chooses one by name.
settings.register_profile("full", deadline=None)
settings.register_profile("fast", deadline=None, max_examples=10)


def pytest_configure(config):
    tier = "fast" if (config.option.markexpr or "").strip() == "fast" else "full"
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", tier))


def pytest_collection_modifyitems(config, items):
    """Tier markers read from each test's code (tests/support/tiers.py): ``db``, ``browser``, ``real_model``,
    ``fast``. Under pytest-xdist (``--dist loadscope``, pyproject.toml) the tests of a module stay on one worker, so
    its module-scoped servers start once and only test_real_model.py starts the llama.cpp server."""
    for item in items:
        for name in tiers.markers_for(item):
            item.add_marker(name)
    # The longest modules first, so that no worker starts one near the end: the real-model tests (minutes of
    # generation), then modules with servers or browsers, then the rest. Order inside a module is kept.
    rank = {}
    for item in items:
        module = item.nodeid.split("::")[0]
        heavy = any(item.get_closest_marker(name) for name in ("db", "browser", "slow", "bots"))
        kind = 0 if item.get_closest_marker("real_model") else 1 if heavy else 2
        rank[module] = min(rank.get(module, 2), kind)
    items.sort(key=lambda item: rank[item.nodeid.split("::")[0]])


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    servers = sys.modules.get("harness.servers")
    item.stash[_SERVERS_BEFORE] = len(servers.STARTED) if servers else 0


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed test keeps the log of every oTree server it ran (started by it or its fixtures, or still running)."""
    outcome = yield
    report = outcome.get_result()
    servers = sys.modules.get("harness.servers")
    if not report.failed or servers is None:
        return
    before = item.stash.get(_SERVERS_BEFORE, 0)
    for index, server in enumerate(servers.STARTED):
        if index >= before or server.process.poll() is None:
            report.sections.append((f"oTree server log {server.url} ({server.log_path.name})", server.log()[-20_000:]))


_SERVERS_BEFORE = pytest.StashKey[int]()
SHARED_DATA = PROJECT_ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The released data of the reference systems (`../shared/data`), or a skip when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"conformance data not found at {SHARED_DATA}; these tests need ../shared beside the checkout")
    return SHARED_DATA


@pytest.fixture(scope="session")
def _llm_server_instance():
    from backend.core.llm.fake_server import FakeOpenAIServer

    server = FakeOpenAIServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def llm_server(_llm_server_instance):
    """A local OpenAI-compatible server (backend/core/llm/fake_server.py), reset for each test.

    Script answers with ``llm_server.script(Reply(...), "text", ...)``; set ``llm_server.responder`` for a function of
    the request; inspect ``llm_server.requests``. ``llm_server.base_url`` goes into ``OPENAI_BASE_URL``.
    """
    from backend.core.llm.client import forget_endpoint_quirks
    from backend.core.llm.fake_server import default_responder

    server = _llm_server_instance
    server.clear()
    server.responder = default_responder
    server.default_delay_s = server.default_chunk_delay_s = 0.0
    server.refuse_response_format = server.require_max_completion_tokens = False
    server.context_tokens = None
    forget_endpoint_quirks()
    yield server
    server.clear()
    server.refuse_response_format = server.require_max_completion_tokens = False
    server.context_tokens = None


@pytest.fixture(scope="session")
def otree_server(_llm_server_instance):
    """An `otree devserver` on a free loopback port, its LLM calls going to the local test server; one per test
    process (pytest-xdist worker), shared by the modules that use it: tests create sessions of their own and read
    their own sessions' rows. A module whose tests read every session of the server (whole exports) overrides it
    with the one of its own (``own_otree_server``)::

        @pytest.fixture(scope="module")
        def otree_server(own_otree_server):
            return own_otree_server
    """
    from harness.servers import SHARED_SERVER_ENV, apps_server

    with apps_server(_llm_server_instance.base_url, **SHARED_SERVER_ENV) as server:
        yield server


@pytest.fixture
def server_clock(otree_server):
    """The clock of ``otree_server`` (``harness.servers.ServerClock``): ``server_clock.advance(seconds)`` moves the
    server's time forward instead of waiting; set back when the test ends."""
    from harness.servers import ServerClock

    moved = ServerClock(otree_server)
    yield moved
    moved.reset()


@pytest.fixture(scope="module")
def own_otree_server(_llm_server_instance):
    """The apps' test server (as ``otree_server``) for one module alone: no other module's sessions on it."""
    from harness.servers import apps_server

    with apps_server(_llm_server_instance.base_url) as server:
        yield server


@pytest.fixture(scope="session")
def production_server():
    """One production-mode server (``deployment_mode``: fresh secrets, the REST key, the STUDY login) with a database
    of its own, shared by the test modules that only create and read sessions of their own on it (one per pytest-xdist
    worker). ``production_server.admin_password``. A module that changes server-wide state (environment, restarts,
    rate limits, admission) starts its own."""
    from harness.servers import SHARED_SERVER_ENV, base_env, deployment_mode, own_database, running_server

    env = deployment_mode(base_env(**SHARED_SERVER_ENV))
    with own_database(env) as env, running_server(kind="prodserver", env=env) as running:
        running.admin_password = env["OTREE_ADMIN_PASSWORD"]
        yield running


@pytest.fixture(scope="module")
def browser():
    """Debian's chromium driven by Playwright (headless).

    Module-scoped: Playwright's sync API keeps an event loop running in the main thread while it is open, which would
    break `asyncio.run` in every later test module.
    """
    from playwright.sync_api import sync_playwright

    from harness.servers import CHROMIUM, CHROMIUM_ARGS, ensure_debian_package

    ensure_debian_package(CHROMIUM, "chromium")
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    page.set_default_timeout(20_000)
    yield page
    context.close()


@pytest.fixture
def sized_page(browser, request):
    """A page of the viewport ``(width, height)`` given by indirect parametrisation, closed with its context."""
    width, height = request.param
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(20_000)
    yield page
    context.close()


@pytest.fixture(scope="session")
def real_model(tmp_path_factory):
    """llama.cpp's OpenAI-compatible server with SmolLM2-135M-Instruct (``tests/support/model_server.py``): built once per
    machine (about 4-8 minutes), then started once per test session. ``real_model.base_url``, ``real_model.model``."""
    from harness.servers import free_port
    from tests.support.model_server import running

    # Half the cores: the rest of the suite runs beside it (pytest-xdist, and CI's PostgreSQL run), and llama.cpp's
    # threads spin while they wait for each other: on two cores, two servers of two threads side by side generated
    # 1.1 tokens a second each, two servers of one thread 49 (measured with SmolLM2, 150 tokens).
    threads = max(1, (os.cpu_count() or 2) // 2)
    with running(port=free_port(), log_path=tmp_path_factory.mktemp("llama") / "server.log", threads=threads) as server:
        first_in_line(server.process.pid)
        yield server


def first_in_line(pid: int) -> None:
    """Give every thread of process ``pid`` the scheduler's priority (nice -10; as root, else nothing changes): the
    real-model tests are the longest chain of the suite, and beside five busy workers on two cores the model server
    got a fraction of its core (its tests took 19 minutes instead of about 9). Threads it starts later inherit it."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            os.setpriority(os.PRIO_PROCESS, int(task.name), -10)
        except (PermissionError, ProcessLookupError):
            return
