#!/usr/bin/env bash
# Keeps docs/programs.md true to the programs (issue #13): for each installed program, runs its
# --help from the build's bin directory and checks the program's section of the page.
#   missing: a long option --help shows that has no option-table row in the section; for
#            jetfleet, a command or subcommand of its help without "jetfleet CMD [SUB]" in it.
#   unknown: an option-table row naming a long option --help does not show, unless the row says
#            "*(not in its help)*" (an option the program accepts but --help leaves out; the
#            marker on an option --help does show is stale and counts as unknown too).
# An option-table row is a line starting "| `--"; its options are the --xyz in its first cell.
# --help and --version are left out: the page's introduction covers them for every program, and
# integration.install_tree runs them. So are the words of a quoted example command in --help
# ('/usr/bin/podman run --rm ...'): they are that command's options, not the program's.
# Usage: programs_doc_test.sh SOURCE_DIR BIN_DIR
set -u

src=${1:?usage: programs_doc_test.sh SOURCE_DIR BIN_DIR}
bin=${2:?usage: programs_doc_test.sh SOURCE_DIR BIN_DIR}
page=$src/docs/programs.md
programs=(jetfleet-coordinator jetfleet-agent jetfleet jetfleet-train jetfleet-train-sim
          jetfleet-datagen jetfleet-privhelper)
marker='*(not in its help)*'

[[ -r $page ]] || { echo "programs_doc: cannot read $page"; exit 1; }

# The lines of "## PROGRAM" up to the next "## " heading.
section() {
    awk -v h="## $1" '$0 == h { on = 1; next } /^## / { on = 0 } on' "$page"
}

# The long options named in a text, one per line, sorted and unique, without --help and --version.
long_opts() {
    grep -oE -- '--[a-z][a-z0-9-]*' | grep -vxE -- '--(help|version)' | sort -u
}

# The long options of a program's --help text, quoted example commands left out.
help_opts() {
    sed "s#'/[^']*'##g" | long_opts
}

# jetfleet's commands from its help, "CMD" or "CMD SUB" per line: the synopsis part of each
# command line (indent under 20, cut at the description's column) gives the command as its first
# word at indent 2, a subcommand as a lower-case second word, and one after each "| ".
cli_commands() {
    awk '
        /^ +[^ ]/ {
            indent = match($0, /[^ ]/) - 1
            if (indent >= 20) next
            syn = substr($0, indent + 1)
            cut = index(syn, "  ")
            if (cut > 0) syn = substr(syn, 1, cut - 1)
            n = split(syn, w, " ")
            if (indent == 2) {
                cmd = w[1]
                if (n >= 2 && w[2] ~ /^[a-z][a-z-]*$/) print cmd " " w[2]; else print cmd
            }
            if (cmd == "") next
            for (i = 1; i < n; i++)
                if (w[i] == "|" && w[i + 1] ~ /^[a-z][a-z-]*$/) print cmd " " w[i + 1]
        }' | sort -u
}

checked=0 missing=0 unknown=0 commands=0
for p in "${programs[@]}"; do
    exe=$bin/$p
    if [[ ! -x $exe ]]; then
        echo "programs_doc: $exe is missing"
        exit 1
    fi
    help=$("$exe" --help 2>&1) || { echo "programs_doc: $p --help failed"; exit 1; }
    sec=$(section "$p")
    if [[ -z $sec ]]; then
        echo "programs_doc: $p: no section '## $p' in docs/programs.md"
        missing=$((missing + 1))
        continue
    fi
    rows=$(grep -E '^\| `--' <<<"$sec" | sed 's/\\|/\//g') # an escaped | is not a cell's end
    documented=$(cut -d'|' -f2 <<<"$rows" | long_opts)
    doc_only=$(grep -F -- "$marker" <<<"$rows" | cut -d'|' -f2 | long_opts)
    known=$(help_opts <<<"$help")
    while read -r o; do
        [[ -z $o ]] && continue
        checked=$((checked + 1))
        if ! grep -qxF -- "$o" <<<"$documented"; then
            echo "programs_doc: $p: $o is in --help but has no row in its section"
            missing=$((missing + 1))
        fi
    done <<<"$known"
    while read -r o; do
        [[ -z $o ]] && continue
        if grep -qxF -- "$o" <<<"$doc_only"; then
            if grep -qxF -- "$o" <<<"$known"; then
                echo "programs_doc: $p: $o is marked not in its help, but --help shows it"
                unknown=$((unknown + 1))
            fi
        elif ! grep -qxF -- "$o" <<<"$known"; then
            echo "programs_doc: $p: the section lists $o, which --help does not know"
            unknown=$((unknown + 1))
        fi
    done <<<"$documented"
    if [[ $p == jetfleet ]]; then
        while read -r c; do
            [[ -z $c ]] && continue
            commands=$((commands + 1))
            if ! grep -qE -- "jetfleet $c( |\$|\`)" <<<"$sec"; then
                echo "programs_doc: jetfleet: command '$c' is in --help but not in its section"
                missing=$((missing + 1))
            fi
        done <<<"$(cli_commands <<<"$help")"
        if ((commands == 0)); then
            echo "programs_doc: jetfleet: no command found in its --help"
            missing=$((missing + 1))
        fi
    fi
done
echo "jetfleet commands_checked=$commands"
echo "programs=${#programs[@]} options_checked=$checked missing=$missing unknown=$unknown"
((missing == 0 && unknown == 0))
