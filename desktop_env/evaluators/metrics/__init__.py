"""Metrics: ``metric(result, expected, **options)`` returns a score in [0, 1]."""
from desktop_env.evaluators.metrics import (  # noqa: F401  (fill METRICS)
    database, general, images, notebook, snowflake, sql, table,
)
