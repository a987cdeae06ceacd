#!/usr/bin/env bash
# Array API conformance: run the official data-apis/array-api-tests suite against NumPy and
# array-api-strict (the baselines) and against chainrule, at each API version, and print one
# summary line per module and version. Each library is tested as the namespace of the version
# asked for: chainrule's through the standard's __array_namespace__(api_version=...), array-api-
# strict's through its set_array_api_strict_flags, NumPy's as it is (it has one namespace).
#
#   ARRAY_API_TESTS_DIR=/path/to/array-api-tests scripts/conformance.sh [PYTEST_ARG...]
#   make conformance ARRAY_API_TESTS_DIR=/path/to/array-api-tests
#
# ARRAY_API_TESTS_DIR (required): a checkout of https://github.com/data-apis/array-api-tests with
# its `array-api` submodule populated (git clone --recurse-submodules ...). Nothing of it is
# copied into this repository.
#
# Optional environment:
#   CONFORMANCE_MAX_EXAMPLES  Hypothesis examples per test (default 100)
#   CONFORMANCE_MODULES       modules to test, in order (default "numpy array_api_strict chainrule")
#   CONFORMANCE_JOBS          pytest-xdist workers (default 2; 0 or 1 runs in-process)
#   CONFORMANCE_LOG_DIR       where logs, JUnit XML and failure lists go, one directory per
#                             version (default build/conformance)
#   CONFORMANCE_VENV          the virtual environment (default .venv-conformance)
#   CONFORMANCE_DERANDOMIZE   1 (default): Hypothesis --derandomize (seeded examples); 0: random
#   CONFORMANCE_PYTEST_ARGS   extra pytest arguments, split on spaces, e.g. "-k test_sum" or
#                             "--skips-file f.txt"; arguments given to the script go last, as is
#   CONFORMANCE_STRICT        1: exit 1 when chainrule has failures or errors (default 0)
#   CONFORMANCE_VERSIONS      API versions the suite tests, in order (default "2024.12 2025.12")
#   PYTHON                    interpreter that creates the venv (default python3)
#
# Exit status: 0 when every run completed (test failures are reported, not fatal, unless
# CONFORMANCE_STRICT=1); 2 when a run could not complete (pytest itself broke down).
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

die() {
    echo "conformance: error: $*" >&2
    exit 2
}

if [[ -z "${ARRAY_API_TESTS_DIR:-}" ]]; then
    die "ARRAY_API_TESTS_DIR is not set. Point it at a checkout of the array-api-tests suite:
    git clone --recurse-submodules https://github.com/data-apis/array-api-tests /some/where
    ARRAY_API_TESTS_DIR=/some/where make conformance"
fi
[[ -d "$ARRAY_API_TESTS_DIR" ]] || die "ARRAY_API_TESTS_DIR=$ARRAY_API_TESTS_DIR is not a directory"
TESTS_DIR="$(cd "$ARRAY_API_TESTS_DIR" && pwd)"
[[ -f "$TESTS_DIR/conftest.py" && -d "$TESTS_DIR/array_api_tests" && -f "$TESTS_DIR/requirements.txt" ]] \
    || die "$TESTS_DIR does not look like an array-api-tests checkout (no conftest.py, array_api_tests/ or requirements.txt)"
[[ -d "$TESTS_DIR/array-api/src/array_api_stubs" ]] \
    || die "$TESTS_DIR/array-api (the spec submodule) is empty: run 'git submodule update --init' in $TESTS_DIR"

PYTHON="${PYTHON:-python3}"
VENV="${CONFORMANCE_VENV:-$REPO_ROOT/.venv-conformance}"
MAX_EXAMPLES="${CONFORMANCE_MAX_EXAMPLES:-100}"
MODULES="${CONFORMANCE_MODULES:-numpy array_api_strict chainrule}"
VERSIONS="${CONFORMANCE_VERSIONS:-2024.12 2025.12}"
JOBS="${CONFORMANCE_JOBS:-2}"
LOG_DIR="${CONFORMANCE_LOG_DIR:-$REPO_ROOT/build/conformance}"
DERANDOMIZE="${CONFORMANCE_DERANDOMIZE:-1}"
STRICT="${CONFORMANCE_STRICT:-0}"
[[ "$MAX_EXAMPLES" =~ ^[0-9]+$ && "$MAX_EXAMPLES" -gt 0 ]] || die "CONFORMANCE_MAX_EXAMPLES must be a positive integer"
[[ "$JOBS" =~ ^[0-9]+$ ]] || die "CONFORMANCE_JOBS must be a non-negative integer"

# --- environment -----------------------------------------------------------------------------
PY="$VENV/bin/python"
if [[ ! -x "$PY" ]]; then
    echo "conformance: creating $VENV"
    "$PYTHON" -m venv "$VENV"
    "$PY" -m pip install -q --upgrade pip
fi
# Reinstall when the suite's requirements or chainrule's metadata change.
STAMP="$VENV/.installed-conformance"
WANT="$(cat "$TESTS_DIR/requirements.txt" "$REPO_ROOT/pyproject.toml" | cksum)"
if [[ ! -f "$STAMP" || "$(cat "$STAMP")" != "$WANT" ]]; then
    echo "conformance: installing the suite's requirements and chainrule into $VENV"
    "$PY" -m pip install -q -r "$TESTS_DIR/requirements.txt" numpy array-api-strict pytest-xdist
    "$PY" -m pip install -q -e "$REPO_ROOT"
    echo "$WANT" > "$STAMP"
fi

mkdir -p "$LOG_DIR"
LOG_DIR="$(cd "$LOG_DIR" && pwd)"

# --- runs ------------------------------------------------------------------------------------
PYTEST_ARGS=(array_api_tests -p no:cacheprovider --continue-on-collection-errors
    --max-examples "$MAX_EXAMPLES" --disable-deadline --disable-warnings -rfE --tb=short)
[[ "$DERANDOMIZE" == 1 ]] && PYTEST_ARGS+=(--derandomize)
[[ "$JOBS" -gt 1 ]] && PYTEST_ARGS+=(-n "$JOBS")
if [[ -n "${CONFORMANCE_PYTEST_ARGS:-}" ]]; then
    read -r -a EXTRA <<< "$CONFORMANCE_PYTEST_ARGS"
    PYTEST_ARGS+=("${EXTRA[@]}")
fi
PYTEST_ARGS+=("$@")

{
    echo "chainrule: $(git -C "$REPO_ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$(
        [[ -n "$(git -C "$REPO_ROOT" status --porcelain -- src 2>/dev/null)" ]] && echo ' (src/ modified)')"
    echo "array-api-tests: $(git -C "$TESTS_DIR" rev-parse --short HEAD 2>/dev/null || echo '?')," \
        "spec: $(git -C "$TESTS_DIR/array-api" rev-parse --short HEAD 2>/dev/null || echo '?')"
    echo "versions: $VERSIONS; modules: $MODULES; max-examples=$MAX_EXAMPLES jobs=$JOBS derandomize=$DERANDOMIZE"
} | tee "$LOG_DIR/run-info.txt"
# The uncommitted changes under src/ that this run tested, if any.
{ git -C "$REPO_ROOT" status --short -- src; git -C "$REPO_ROOT" diff HEAD -- src; } > "$LOG_DIR/src.diff" 2>/dev/null || true

summarise() {  # $1: JUnit XML, $2: module, $3: seconds, $4: file for the failed/errored test ids
    "$PY" - "$@" <<'EOF'
import sys, xml.etree.ElementTree as ET

xml_path, module, seconds, failed_path = sys.argv[1:5]
outcome = {}  # test id -> outcome; xdist reports a collection error once per worker
for tc in ET.parse(xml_path).getroot().iter("testcase"):
    cls, name = tc.get("classname") or "", tc.get("name") or ""
    parts = cls.split(".") if cls else name.split(".")
    mod = next((i for i, p in enumerate(parts) if p.startswith("test_")), len(parts) - 1)
    path = "/".join(parts[: mod + 1]) + ".py"
    tid = "::".join([path, *parts[mod + 1 :], name] if cls else [path])
    if tc.find("error") is not None:
        outcome[tid] = "errors"
    elif tc.find("failure") is not None:
        outcome[tid] = "failed"
    elif tc.find("skipped") is not None:
        outcome[tid] = "skipped"
    else:
        outcome[tid] = "passed"
counts = {k: sum(v == k for v in outcome.values()) for k in ("passed", "failed", "skipped", "errors")}
with open(failed_path, "w") as f:
    for tid, o in sorted(outcome.items()):
        if o in ("failed", "errors"):
            print(f"{o}\t{tid}", file=f)
print(f"{module:<17} passed {counts['passed']:>5}   failed {counts['failed']:>5}   "
      f"skipped {counts['skipped']:>5}   errors {counts['errors']:>3}   ({seconds} s)")
EOF
}

module_spec() {  # $1: module, $2: version -> the suite's ARRAY_API_TESTS_MODULE
    case "$1" in
        chainrule)
            echo "exec('import chainrule; xp = chainrule.asarray(0).__array_namespace__(api_version=\"$2\")')" ;;
        array_api_strict)
            echo "exec('import array_api_strict as xp; xp.set_array_api_strict_flags(api_version=\"$2\")')" ;;
        *) echo "$1" ;;
    esac
}

SUMMARY=()
BROKEN=0
CHAINRULE_FAILED=0
rm -f "$LOG_DIR/summary.txt"
for version in $VERSIONS; do
    dir="$LOG_DIR/$version"
    mkdir -p "$dir"
    rm -f "$dir"/*.log "$dir"/*.xml "$dir"/*.failed.txt
    declare -A DONE=()
    for module in $MODULES; do
        log="$dir/$module.log"
        xml="$dir/$module.xml"
        echo "conformance: running the suite on $module at $version (log: $log)"
        start=$SECONDS
        set +e
        (cd "$TESTS_DIR" && ARRAY_API_TESTS_VERSION="$version" \
            ARRAY_API_TESTS_MODULE="$(module_spec "$module" "$version")" \
            "$PY" -m pytest "${PYTEST_ARGS[@]}" --junitxml="$xml") > "$log" 2>&1
        rc=$?
        set -e
        elapsed=$((SECONDS - start))
        tail -n 1 "$log"
        # pytest: 0 all passed, 1 some failed; anything else means the run itself broke down.
        if [[ $rc -gt 1 || ! -s "$xml" ]]; then
            echo "conformance: pytest exited with status $rc on $module at $version; see $log" >&2
            SUMMARY+=("$(printf '%-8s %-17s run did not complete (pytest exit status %s, %s s)' \
                "$version" "$module" "$rc" "$elapsed")")
            BROKEN=1
            continue
        fi
        SUMMARY+=("$version $(summarise "$xml" "$module" "$elapsed" "$dir/$module.failed.txt")")
        DONE[$module]=1
        if [[ "$module" == chainrule && -s "$dir/chainrule.failed.txt" ]]; then
            CHAINRULE_FAILED=1
        fi
    done
    # Failures of chainrule in tests NumPy passes: the ones to look at first.
    if [[ -n "${DONE[numpy]:-}" && -n "${DONE[chainrule]:-}" ]]; then
        cut -f2 "$dir/numpy.failed.txt" | sort > "$dir/.numpy.ids"
        cut -f2 "$dir/chainrule.failed.txt" | sort | comm -23 - "$dir/.numpy.ids" \
            > "$dir/chainrule-only.failed.txt"
        rm -f "$dir/.numpy.ids"
    fi
    unset DONE
done

echo
echo "Array API conformance (--max-examples $MAX_EXAMPLES):"
printf '%s\n' "${SUMMARY[@]}" | tee "$LOG_DIR/summary.txt"

[[ $BROKEN == 0 ]] || exit 2
if [[ "$STRICT" == 1 && $CHAINRULE_FAILED == 1 ]]; then
    exit 1
fi
exit 0
