"""Getters: ``getter(ctx, **fields)`` returns the value a metric compares (a local path, text, a dict).

Each module registers its getters with ``@GETTERS.register``; desktop_env.registry.BUILTIN_MODULES lists them.
"""
