# cmake --install of the build under test into a DESTDIR: the programs, the helper, the units,
# the example configs and the docs are where GNUInstallDirs puts them; every installed program
# answers --help (exit 0, usage on stdout) and --version (exit 0, "NAME VERSION"); the helper
# refuses --help anywhere but alone; the bash completion completes; systemd-analyze verify
# accepts the units.
. "$(dirname "$0")/lib.sh"

prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build/CMakeCache.txt")
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
dest=$tmp/dest
ok "cmake --install" env DESTDIR="$dest" cmake --install "$build" || true
root=$dest$prefix

programs="bin/jetfleet bin/jetfleet-coordinator bin/jetfleet-agent bin/jetfleet-train
          bin/jetfleet-train-sim bin/jetfleet-datagen libexec/jetfleet-privhelper"
files="lib/systemd/system/jetfleet-coordinator.service lib/systemd/system/jetfleet-agent.service
       share/doc/jetfleet/README.md share/doc/jetfleet/deploy.md share/doc/jetfleet/privileges.md
       share/doc/jetfleet/examples/fleet.yaml.example share/doc/jetfleet/examples/jetfleet-agent.default
       share/doc/jetfleet/examples/sweeps/demo.yaml share/jetfleet/sim_params.yaml
       share/jetfleet/playbooks/agent.yml share/jetfleet/playbooks/coordinator.yml
       share/jetfleet/playbooks/README.md share/bash-completion/completions/jetfleet"
for f in $programs; do
    [ -x "$root/$f" ] || fail "$prefix/$f is not installed or not executable"
done
for f in $files; do
    [ -f "$root/$f" ] || fail "$prefix/$f is not installed"
done
if find "$dest" -name 'jft-*' | grep -q .; then
    fail "a test program was installed: $(find "$dest" -name 'jft-*')"
fi

n=0
for f in $programs; do
    p=$root/$f
    name=${f##*/}
    [ -x "$p" ] || continue
    if ! "$p" --help >"$tmp/out" 2>"$tmp/err" </dev/null; then
        fail "$name --help exited non-zero: $(head -3 "$tmp/err")"
    elif ! grep -q "usage: $name" "$tmp/out"; then
        fail "$name --help: no 'usage: $name' on stdout"
    else
        n=$((n + 1))
    fi
    if ! "$p" --version >"$tmp/out" 2>"$tmp/err" </dev/null; then
        fail "$name --version exited non-zero: $(head -3 "$tmp/err")"
    elif [ "$(cat "$tmp/out")" != "$name $version" ]; then
        fail "$name --version printed '$(cat "$tmp/out")', expected '$name $version'"
    else
        n=$((n + 1))
    fi
done
echo "help_and_version_answered=$n/14"

# The helper: --help and --version only as the one argument; anything else is refused (exit 2)
# before a request is read.
helper=$root/libexec/jetfleet-privhelper
refused=0
for args in "--help --help" "--version x" "--help --root /tmp" "-h" "--versio"; do
    code=0
    # shellcheck disable=SC2086
    "$helper" $args >"$tmp/out" 2>&1 </dev/null || code=$?
    if [ $code -ne 2 ] || ! grep -q '^jetfleet-privhelper: rejected: ' "$tmp/out"; then
        fail "jetfleet-privhelper $args: exit $code, expected 2 and a refusal: $(head -2 "$tmp/out")"
    else
        refused=$((refused + 1))
    fi
done
echo "privhelper_refused_mixed=$refused/5"

# The bash completion, with bash-completion's two helpers stubbed: commands come from the installed
# jetfleet's --help.
completion_case() { # completion_case EXPECTED WORD...: EXPECTED must be among the candidates
    local want=$1
    shift
    local got
    got=$(bash -c '
        _init_completion() { words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD;
                             cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]}; }
        _filedir() { COMPREPLY=(FILES); }
        complete() { :; }
        . "$1"; shift
        COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
        _jetfleet; printf "%s\n" "${COMPREPLY[@]}"' _ "$root/share/bash-completion/completions/jetfleet" "$@")
    printf '%s\n' "$got" | grep -qx -- "$want" || fail "completion of '$*': '$want' not in: $(echo $got)"
}
completion_case fleet "$root/bin/jetfleet" fl
completion_case recommend "$root/bin/jetfleet" rec
completion_case inventory "$root/bin/jetfleet" fleet ""
completion_case --coordinator-host "$root/bin/jetfleet" fleet inventory --coo
completion_case telemetry "$root/bin/jetfleet" --config x.yaml export --what ""
completion_case FILES "$root/bin/jetfleet" --config ""
echo "completion_cases=6"

# Units: systemd-analyze verify needs the programs they name at those paths, so it runs on
# copies whose paths point into the DESTDIR tree.
if command -v systemd-analyze >/dev/null 2>&1; then
    mkdir -p "$tmp/units" "$tmp/etc/default" "$tmp/etc/jetfleet"
    cp "$src/systemd/jetfleet-agent.default" "$tmp/etc/default/jetfleet-agent"
    for u in jetfleet-coordinator jetfleet-agent; do
        sed -e "s|$prefix/bin/|$root/bin/|g" -e "s|$prefix/libexec/|$root/libexec/|g" \
            "$root/lib/systemd/system/$u.service" >"$tmp/units/$u.service"
        grep -q '^Restart=on-failure$' "$tmp/units/$u.service" || fail "$u: no Restart=on-failure"
        grep -q '^User=jetfleet$' "$tmp/units/$u.service" || fail "$u: not User=jetfleet"
        # The agent's sudo must keep working: nothing that sets or implies NoNewPrivileges.
        if [ $u = jetfleet-agent ] && grep -Eq '^(NoNewPrivileges=yes|SystemCallFilter|RestrictSUIDSGID|ProtectKernelTunables)' \
            "$tmp/units/$u.service"; then
            fail "$u: an option that breaks sudo or the helper"
        fi
        if ! SYSTEMD_LOG_LEVEL=warning systemd-analyze verify --man=no "$tmp/units/$u.service" \
            >"$tmp/verify" 2>&1; then
            fail "systemd-analyze verify $u.service:"
            sed 's/^/  | /' "$tmp/verify" >&2
        elif grep -Ev "^$|User=jetfleet|Unknown user|jetfleet.*not exist|/etc/default/jetfleet-agent|Failed to load environment|network-online" "$tmp/verify" | grep -q .; then
            fail "systemd-analyze verify $u.service warned:"
            sed 's/^/  | /' "$tmp/verify" >&2
        fi
    done
    echo "units_verified=2"
else
    echo "units_verified=skipped (no systemd-analyze)"
fi
finish
