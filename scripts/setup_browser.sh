#!/usr/bin/env bash
# Install the browser the web-page tests drive (docs/watching.md, "Watching in a web browser"):
# Debian's `chromium` package, /usr/bin/chromium, driven headless by playwright (PyPI, in the
# venv) with the system browser; playwright never downloads a browser of its own here.
# Idempotent: with chromium installed it only says so. Needs root (or sudo) and apt-get; where
# neither is there it says how to install chromium by hand and exits 0, and the browser tests
# skip, naming this script. .ci/run calls it before the tests.
set -euo pipefail

say() { echo "[maes browser] $*"; }

if command -v chromium >/dev/null 2>&1; then
    say "chromium is installed: $(chromium --version 2>/dev/null || echo "$(command -v chromium)")"
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    say "no apt-get here: install Chromium by hand (a 'chromium' command on PATH) for the browser tests; they skip without it"
    exit 0
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        sudo="sudo -n"
    else
        say "not root and no password-less sudo: run 'sudo apt-get install chromium' for the browser tests; they skip without it"
        exit 0
    fi
fi
say "installing Debian's chromium (apt-get update, then apt-get install chromium) ..."
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null
say "chromium installed: $(chromium --version 2>/dev/null || command -v chromium)"
