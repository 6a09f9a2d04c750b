"""Metrics: ``metric(result, expected, **options)`` returns a score in [0, 1].

Each module registers its metrics with ``@METRICS.register``; desktop_env.registry.BUILTIN_MODULES lists them.
"""
