"""Superset settings for the data image (metadata in SQLite under the desktop user's home)."""
SECRET_KEY = "desktop-env-data-image-superset"  # a fixed key: the image is a disposable test machine
SQLALCHEMY_DATABASE_URI = "sqlite:////home/user/.superset/superset.db"
WTF_CSRF_ENABLED = True
SUPERSET_WEBSERVER_PORT = 8088
# No network in the guest: nothing to check or report.
FEATURE_FLAGS = {}
SQLLAB_CTAS_NO_LIMIT = True
PREVENT_UNSAFE_DB_CONNECTIONS = False
# Superset 6.1.0's metastore cache (its default for these two) breaks with Flask-Caching 2.5
# (the newest, which the lock has): "unexpected keyword argument 'ignore_delete_many_errors'".
# An in-process cache works with the single gunicorn worker the image runs.
FILTER_STATE_CACHE_CONFIG = {"CACHE_TYPE": "SimpleCache", "CACHE_DEFAULT_TIMEOUT": 86400}
EXPLORE_FORM_DATA_CACHE_CONFIG = {"CACHE_TYPE": "SimpleCache", "CACHE_DEFAULT_TIMEOUT": 86400}
