# bash completion for kubectl-netpath: candidates are data (no eval, no compgen -W over them).
# Cobra directives: 1 Error, 2 NoSpace, 4 NoFileComp, 8 FilterFileExt, 16 FilterDirs, 32 KeepOrder.
# __kubectl_netpath_dequote WORD: sets the caller's dq to the word as the command will receive it: backslash escapes, '…' and
# "…" undone, as bash's quote removal does (bash(1), QUOTING). No eval: the word is data ($VAR, $(…), `…`, globs
# and ~ are left as typed; the CLI expands a leading ~/ itself). bash-completion's dequote (2.11) is
# `eval printf %s "$1"`, which runs a typed $(…), and 2.12's _comp_dequote evals too (parameter and pathname
# expansion, after a check of the word): neither is used.
__kubectl_netpath_dequote() {
    dq=$1
    [[ $1 == *[\\\'\"]* ]] || return 0
    local w=$1 c q="" i n=${#1}
    dq=""
    for (( i = 0; i < n; i++ )); do
        c=${w:i:1}
        if [[ $q == "'" ]]; then
            if [[ $c == "'" ]]; then q=""; else dq+=$c; fi
        elif [[ $c == '\' ]]; then
            c=${w:i+1:1}
            # inside "…" a backslash escapes only $ ` " \ and newline (bash(1), QUOTING)
            if [[ -z $q || $c == [\$\`\"\\] || $c == $'\n' ]]; then
                (( i++ ))
                [[ $c == $'\n' ]] || dq+=$c
            else
                dq+='\'
            fi
        elif [[ $c == '"' ]]; then
            if [[ $q == '"' ]]; then q=""; else q='"'; fi
        elif [[ -z $q && $c == "'" ]]; then
            q="'"
        else
            dq+=$c
        fi
    done
}

__kubectl_netpath_complete() {
    local cur prev words cword
    _get_comp_words_by_ref -n "=:" cur prev words cword
    local out directive=0 last w dq
    # The words after the command up to the one under the cursor, each its own argument and unquoted as the command
    # will receive it (`--from sp\ ace/lab`: the path `sp ace/lab`); the static responder (kubectl_complete-…, sh)
    # answers static words without starting Node, and hands names to `kubectl-netpath complete`.
    local -a args=()
    for w in "${words[@]:1:cword}"; do __kubectl_netpath_dequote "$w"; args+=("$dq"); done
    if type -P kubectl_complete-netpath >/dev/null; then
        out=$(kubectl_complete-netpath "${args[@]}" 2>/dev/null)
    else
        out=$(kubectl-netpath complete -- "${args[@]}" 2>/dev/null)
    fi
    last=${out##*$'
'}
    if [[ $last == :* ]]; then
        directive=${last#:}
        if [[ $out == *$'
'* ]]; then out=${out%$'
'*}; else out=""; fi
    fi
    [[ $directive =~ ^[0-9]+$ ]] || directive=1
    (( directive & 1 )) && return
    (( directive & 2 )) && compopt -o nospace
    (( directive & 32 )) && compopt -o nosort
    (( directive & 4 )) && compopt +o default
    [[ "$cur" == -*=* ]] && cur="${cur#*=}"
    # names are filtered on the word as the command would read it (`'svc/k` → `svc/k`)
    __kubectl_netpath_dequote "$cur"
    local curv=$dq
    local comp value
    if (( directive & 8 )); then
        local exts=() pattern
        while IFS='' read -r comp; do
            [[ $comp =~ ^[A-Za-z0-9]+$ ]] && exts+=("$comp")
        done <<< "$out"
        pattern="!*.@($(IFS='|'; echo "${exts[*]}"))"
        compopt -o filenames
        COMPREPLY=()
        while IFS='' read -r comp; do COMPREPLY+=("$comp"); done < <(compgen -f -X "$pattern" -- "$cur")
        return
    fi
    if (( directive & 16 )); then
        compopt -o dirnames
        COMPREPLY=()
        while IFS='' read -r comp; do COMPREPLY+=("$comp"); done < <(compgen -d -- "$cur")
        return
    fi
    COMPREPLY=()
    while IFS='' read -r comp; do
        [[ -z $comp ]] && continue
        value=${comp%%$'	'*}
        [[ $value == "$curv"* ]] || continue
        # A candidate with shell syntax (a kubeconfig context may be any string) is inserted quoted.
        if [[ $value == *[!A-Za-z0-9._/:=@,+%-]* ]]; then printf -v value '%q' "$value"; fi
        COMPREPLY+=("$value")
    done <<< "$out"
    # Readline replaces only the text after the last COMP_WORDBREAKS character of the word (`:` and `=` by
    # default), while `cur` holds the whole value (read with -n "=:"): a name such as `arn:aws:eks:…` or `team=alpha`
    # is inserted without the part already typed up to that character: bash-completion's __ltrim_colon_completions,
    # then the same for `=` on what is left after the last `:` (Cobra bash_completionsV2.go trims both too, in
    # __<name>_handle_special_char).
    if declare -F _comp_ltrim_colon_completions >/dev/null; then _comp_ltrim_colon_completions "$cur"; else __ltrim_colon_completions "$cur"; fi
    local after=$cur i
    [[ $COMP_WORDBREAKS == *:* ]] && after=${after##*:}
    if [[ $after == *=* && $COMP_WORDBREAKS == *=* ]]; then
        after=${after%"${after##*=}"}
        for i in "${!COMPREPLY[@]}"; do COMPREPLY[i]=${COMPREPLY[i]#"$after"}; done
    fi
}

complete -o default -F __kubectl_netpath_complete kubectl-netpath
