"""``python -m desktop_env`` runs the CLI."""
from desktop_env.cli import main

if __name__ == "__main__":  # not when a spawned worker process imports the parent's main module
    raise SystemExit(main())
