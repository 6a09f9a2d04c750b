"""The replay of a task's reference solution against a DesktopEnv, through its public API."""
