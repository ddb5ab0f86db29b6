#!/usr/bin/env bash
# Installs what the project needs on a fresh machine with Python 3.11 and pip: a virtualenv with
# the project, and (on Debian, as root or with sudo) Tesseract for OCR, Chromium for UI tests, and the
# services of the multi-host layout (PostgreSQL, Redis, PgBouncer; docs/deployment.md).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
# An editable install sees every edit to the code as it is; only a change of pyproject.toml (the
# dependencies, entry points) calls for a new install, so a run without one takes no time.
stamp=.venv/.installed-from
if [ "$(cat "$stamp" 2>/dev/null)" != "$(sha256sum pyproject.toml)" ] || [ ! -x .venv/bin/hreg ]; then
    .venv/bin/python -m pip install --quiet --upgrade pip
    .venv/bin/python -m pip install --quiet -e '.[test]'
    sha256sum pyproject.toml > "$stamp"
fi
# The project has no compiled code: an extension module (and its generated C) left in the tree by
# an older install would be imported instead of its source.
find orchestration \( -name '*.so' -o -name '*.c' \) -delete

want_system_packages=${HREG_SYSTEM_PACKAGES:-tesseract-ocr tesseract-ocr-deu tesseract-ocr-osd chromium postgresql redis-server pgbouncer}
missing=""
for pkg in $want_system_packages; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing="$missing $pkg"
done
if [ -n "$missing" ] && command -v apt-get >/dev/null; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo -n"
    echo "installing system packages:$missing"
    if ! ($SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends $missing) >/tmp/hreg-apt.log 2>&1; then
        echo "warning: could not install$missing (see /tmp/hreg-apt.log); OCR jobs will fail with dependency_unavailable" >&2
    fi
fi
