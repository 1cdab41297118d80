"""Fixtures shared by the whole suite."""

from __future__ import annotations

from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = PROJECT_ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The released data of the reference systems (`../shared/data`), or a skip when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"conformance data not found at {SHARED_DATA}; these tests need ../shared beside the checkout")
    return SHARED_DATA


@pytest.fixture(scope="session")
def _llm_server_instance():
    from backend.llm.fake_server import FakeOpenAIServer

    server = FakeOpenAIServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def llm_server(_llm_server_instance):
    """A local OpenAI-compatible server (backend/llm/fake_server.py), reset for each test.

    Script answers with ``llm_server.script(Reply(...), "text", ...)``; set ``llm_server.responder`` for a function of
    the request; inspect ``llm_server.requests``. ``llm_server.base_url`` goes into ``OPENAI_BASE_URL``.
    """
    from backend.llm.fake_server import _default_responder

    server = _llm_server_instance
    server.clear()
    server.responder = _default_responder
    server.default_delay_s = server.default_chunk_delay_s = 0.0
    yield server
    server.clear()
