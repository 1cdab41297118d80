"""The real OpenAI-compatible model server of the end-to-end tests: ``backend.core.llm.serve`` (llama.cpp's server
with SmolLM2-135M-Instruct), one definition for the tests and for researchers (``python -m backend.core.llm.serve``).

``python -m tests.support.model_server`` builds it ahead of the suite (``.ci/run`` does); the ``real_model`` fixture
in ``conftest.py`` builds it on first use otherwise and starts one server per test session.
"""

from __future__ import annotations

from backend.core.llm.serve import MODEL_ALIAS, ModelServer, environment_folder, install, running

__all__ = ["MODEL_ALIAS", "ModelServer", "environment_folder", "install", "running"]

if __name__ == "__main__":
    print(install())
