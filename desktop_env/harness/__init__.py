"""The harness: runs agents over task suites and writes results users read.

Modules, each the one owner of its concept:

- :mod:`~desktop_env.harness.config`: one run's settings (``RunConfig``), checked in one place.
- :mod:`~desktop_env.harness.options`: run.py's flags (``parse_args``, which returns a ``RunConfig``).
- :mod:`~desktop_env.harness.layout`: the results layout (folders, status.json, atomic writes).
- :mod:`~desktop_env.harness.status`: statuses, their classification, which errors are infrastructure.
- :mod:`~desktop_env.harness.episode`: one episode (reset, agent steps through ``env.step``, the oracle's
  shell steps through ``env.run_command``, trajectory, score).
- :mod:`~desktop_env.harness.jobs`: the job plan (``Job``: what a run still owes) and one job's attempts and
  retries.
- :mod:`~desktop_env.harness.workers`: worker processes, one VM each, and their signals.
- :mod:`~desktop_env.harness.summary`: manifest.json and summary.json.
- :mod:`~desktop_env.harness.suite`: a whole run (``run_suite(config)``), used by run.py and ``tasks verify``.
"""
