# conda.sh as the public data-science suite's scripts source it, for this image: `conda activate NAME` and
# `conda deactivate` switch between the venvs in /home/user/anaconda3/envs (base: /home/user/anaconda3);
# every other subcommand is /home/user/anaconda3/bin/conda (see `conda --help`).
_CONDA_ROOT="${DESKTOP_ENV_CONDA_ROOT:-/home/user/anaconda3}"
export CONDA_EXE="$_CONDA_ROOT/bin/conda"

__conda_deactivate() {
    if [ -n "${CONDA_PREFIX:-}" ] && command -v deactivate >/dev/null 2>&1; then
        deactivate
    fi
    unset CONDA_PREFIX CONDA_DEFAULT_ENV CONDA_PROMPT_MODIFIER
}

conda() {
    case "${1:-}" in
        activate)
            local __name="${2:-base}" __prefix
            case "$__name" in
                base) __prefix="$_CONDA_ROOT" ;;
                /*) __prefix="$__name" ;;
                *) __prefix="$_CONDA_ROOT/envs/$__name" ;;
            esac
            if [ ! -f "$__prefix/bin/activate" ]; then
                echo "EnvironmentNameNotFound: Could not find conda environment: $__name" >&2
                echo "You can list all discoverable environments with \`conda info --envs\`." >&2
                return 1
            fi
            __conda_deactivate
            VIRTUAL_ENV_DISABLE_PROMPT=1 . "$__prefix/bin/activate"
            export CONDA_PREFIX="$__prefix" CONDA_DEFAULT_ENV="$__name" CONDA_PROMPT_MODIFIER="($__name) "
            ;;
        deactivate)
            __conda_deactivate
            ;;
        *)
            "$CONDA_EXE" "$@"
            ;;
    esac
}
