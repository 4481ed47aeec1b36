#!/usr/bin/env bash
# Check what the pip environment needs from the system, before any download or build:
# Python 3.11 with venv/ensurepip and its C headers, and a C and a C++ compiler (interface
# packages compile C/C++ typesupport code). Names every missing piece and how to get it on
# Debian/Ubuntu; exits 1 if anything is missing.
#
# Environment: PYTHON (default python3.11), CC (default cc), CXX (default c++).
set -u

PYTHON=${PYTHON:-python3.11}
CC=${CC:-cc}
CXX=${CXX:-c++}
missing=()

if ! command -v "$PYTHON" >/dev/null 2>&1; then
    missing+=("Python 3.11: '$PYTHON' is not on PATH (Debian/Ubuntu: apt-get install python3.11 python3.11-venv python3.11-dev; or set PYTHON=/path/to/python3.11)")
else
    version=$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
    if [ -z "$version" ]; then
        missing+=("Python 3.11: '$PYTHON' is on PATH but does not run (Debian/Ubuntu: apt-get install python3.11; or set PYTHON=/path/to/python3.11)")
    elif [ "$version" != "3.11" ]; then
        missing+=("Python 3.11: '$PYTHON' is Python $version; the ROS 2 Jazzy wheels need exactly 3.11 (set PYTHON=/path/to/python3.11)")
    else
        if ! "$PYTHON" -c 'import venv, ensurepip' >/dev/null 2>&1; then
            missing+=("Python venv support: '$PYTHON -m venv' cannot bootstrap pip (Debian/Ubuntu: apt-get install python3.11-venv)")
        fi
        include=$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
        if [ ! -f "$include/Python.h" ]; then
            missing+=("Python 3.11 C headers: $include/Python.h not found (Debian/Ubuntu: apt-get install python3.11-dev)")
        fi
    fi
fi

# Compile a tiny program rather than only looking the compiler up: a compiler without its
# standard headers (e.g. no libc6-dev / libstdc++-dev) fails the same way the build would.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! command -v "$CC" >/dev/null 2>&1; then
    missing+=("C compiler: '$CC' not found (Debian/Ubuntu: apt-get install build-essential; or set CC)")
else
    printf '#include <stdio.h>\nint main(void) { return 0; }\n' >"$tmp/t.c"
    if ! "$CC" "$tmp/t.c" -o "$tmp/t_c" >"$tmp/cc.log" 2>&1; then
        missing+=("working C compiler: '$CC' cannot build a hello-world ($(head -n 1 "$tmp/cc.log")) (Debian/Ubuntu: apt-get install build-essential)")
    fi
fi
if ! command -v "$CXX" >/dev/null 2>&1; then
    missing+=("C++ compiler: '$CXX' not found (Debian/Ubuntu: apt-get install build-essential; or set CXX)")
else
    printf '#include <string>\nint main() { std::string s("ok"); return s.size() == 2 ? 0 : 1; }\n' >"$tmp/t.cpp"
    if ! "$CXX" "$tmp/t.cpp" -o "$tmp/t_cxx" >"$tmp/cxx.log" 2>&1; then
        missing+=("working C++ compiler: '$CXX' cannot build a hello-world ($(head -n 1 "$tmp/cxx.log")) (Debian/Ubuntu: apt-get install build-essential)")
    fi
fi
if ! command -v make >/dev/null 2>&1; then
    missing+=("make (Debian/Ubuntu: apt-get install make)")
fi

if [ ${#missing[@]} -gt 0 ]; then
    echo "[maes setup] ERROR: the system lacks what the pip environment needs:" >&2
    for item in "${missing[@]}"; do
        echo "  - missing $item" >&2
    done
    echo "[maes setup] Install the above, then run 'make setup' (or 'make test') again." >&2
    exit 1
fi
echo "[maes setup] system check passed: $("$PYTHON" --version 2>&1), $("$CC" --version | head -n 1), $("$CXX" --version | head -n 1)"
