#!/usr/bin/env bash
# Build the documentation site with `mkdocs build --strict` (no broken link, no page outside the navigation).
# The docs tools live in their own environment, .venv-docs: mkdocs-material 9 needs Jinja2 3 and MarkupSafe>=2,
# while oTree 6.0.15 pins MarkupSafe==1.1.1, so installing them beside oTree would break oTree's pinned stack.
# Idempotent: the environment is made once and reused while docs/requirements.txt is unchanged.
set -euo pipefail
cd "$(dirname "$0")/.."
stamp=.venv-docs/.requirements
if ! cmp -s docs/requirements.txt "$stamp" 2>/dev/null; then
  rm -rf .venv-docs
  python3 -m venv .venv-docs
  .venv-docs/bin/python -m pip install -q -r docs/requirements.txt
  cp docs/requirements.txt "$stamp"
fi
.venv-docs/bin/mkdocs build --strict --quiet "$@"
