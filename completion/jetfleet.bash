# bash completion for jetfleet (installed as share/bash-completion/completions/jetfleet).
# Completes the global options, the commands (read from `jetfleet --help`), their sub-commands and
# options (listed here), and file names where a FILE is expected.
_jetfleet()
{
    local cur prev words cword
    _init_completion || return

    local i cmd="" sub=""
    for ((i = 1; i < cword; i++)); do
        case ${words[i]} in
        --config | --store) ((i++)) ;;
        -*) ;;
        *)
            if [[ -z $cmd ]]; then
                cmd=${words[i]}
            elif [[ -z $sub ]]; then
                sub=${words[i]}
            fi
            ;;
        esac
    done

    case $prev in
    --config | --store | -o | --output)
        _filedir
        return
        ;;
    --format)
        COMPREPLY=($(compgen -W "text csv json" -- "$cur"))
        return
        ;;
    --what)
        COMPREPLY=($(compgen -W "runs epochs minibatches telemetry results" -- "$cur"))
        return
        ;;
    --target)
        COMPREPLY=($(compgen -W "time power energy" -- "$cur"))
        return
        ;;
    --kind)
        COMPREPLY=($(compgen -W "linear mlp" -- "$cur"))
        return
        ;;
    --metric)
        COMPREPLY=($(compgen -W "e2e stall compute energy all" -- "$cur"))
        return
        ;;
    esac

    if [[ -z $cmd ]]; then
        # The commands are those `jetfleet --help` lists (lines "  VERB ..."), so a new one
        # completes without an edit here.
        local cmds
        cmds=$("${words[0]}" --help 2>/dev/null | awk '/^  [a-z]/ {print $1}' | sort -u)
        COMPREPLY=($(compgen -W "--config --store --help --version $cmds" -- "$cur"))
        return
    fi

    local subs="" opts=""
    case $cmd in
    sweep)
        subs="plan submit list show cancel"
        opts="--wait --timeout --adaptive --batch --seed"
        ;;
    runs) opts="--sweep --state" ;;
    results) opts="--sweep" ;;
    export) opts="--sweep --what --format -o" ;;
    import) opts="--sweep-name --board-type" ;;
    store)
        subs="check backup salvage prune"
        opts="-o --store --dry-run"
        ;;
    keys)
        subs="list accept reject revoke release"
        opts="--board"
        ;;
    variability) opts="--sweep --metric --format" ;;
    check) opts="--sweep --format --max-other-load" ;;
    model)
        subs="fit list predict eval"
        opts="--sweep --workload --board --type --target --kind --transfer-from --name --model
              --cores --cpu-freq --gpu-freq --emc-freq --workers --batch"
        ;;
    pareto) opts="--sweep --workload --board --predicted --format" ;;
    recommend) opts="--workload --board --sweep --power-budget --time-budget --time-model
                     --power-model" ;;
    fleet)
        subs="inventory"
        opts="-o --coordinator-host"
        ;;
    rounds)
        subs="plan run show"
        opts="--no-profile --profile-modes --timeout --boards --format"
        ;;
    concurrent)
        subs="search"
        opts="--board --policy --workload --infer-model --rate --latency-budget-ms
              --power-budget-w --batch --seed --timeout --max-profiles"
        ;;
    esac
    if [[ -n $subs && -z $sub && $cur != -* ]]; then
        COMPREPLY=($(compgen -W "$subs" -- "$cur"))
    elif [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    else
        _filedir
    fi
} && complete -F _jetfleet jetfleet
