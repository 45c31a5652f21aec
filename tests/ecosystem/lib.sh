# Shared by the ecosystem tests: a temp directory removed on exit, and failures that say what.
set -euo pipefail
src=$1
build=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/jft-eco.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0

fail() {
    echo "FAIL: $*" >&2
    fails=$((fails + 1))
}

# ok WHAT COMMAND...: runs the command, a failure is reported with its output.
ok() {
    local what=$1
    shift
    local code=0
    "$@" >"$tmp/ok.out" 2>&1 || code=$?
    if [ $code -ne 0 ]; then
        fail "$what: '$*' exited $code"
        sed 's/^/  | /' "$tmp/ok.out" | tail -40 >&2
        return 1
    fi
}

finish() {
    if [ "$fails" -ne 0 ]; then
        echo "$fails check(s) failed" >&2
        exit 1
    fi
    echo "all checks passed"
}
