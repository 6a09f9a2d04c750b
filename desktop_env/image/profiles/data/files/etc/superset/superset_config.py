"""Superset settings for the data image (metadata in SQLite under the desktop user's home)."""
SECRET_KEY = "desktop-env-data-image-superset"  # a fixed key: the image is a disposable test machine
SQLALCHEMY_DATABASE_URI = "sqlite:////home/user/.superset/superset.db"
WTF_CSRF_ENABLED = True
SUPERSET_WEBSERVER_PORT = 8088
# No network in the guest: nothing to check or report.
FEATURE_FLAGS = {}
SQLLAB_CTAS_NO_LIMIT = True
PREVENT_UNSAFE_DB_CONNECTIONS = False
