"""Initialises Superset's metadata: `superset db upgrade`, `fab create-admin` (admin/admin) and `superset init`.

Done through Superset's Python API in one process (three `superset` commands would each
load the whole app again, slow under emulation). Run with the Superset venv's Python and
SUPERSET_CONFIG_PATH set.
"""
from flask_migrate import upgrade

from superset.app import create_app

app = create_app()
with app.app_context():
    from superset import security_manager
    from superset.extensions import appbuilder

    upgrade()                                              # superset db upgrade
    appbuilder.add_permissions(update_perms=True)          # superset init
    security_manager.sync_role_definitions()
    if not security_manager.find_user(username="admin"):   # superset fab create-admin
        admin = security_manager.add_user("admin", "Admin", "User", "admin@example.com",
                                          security_manager.find_role("Admin"), password="admin")
        if not admin:
            raise SystemExit("could not create the Superset admin user")
    print("superset metadata ready")
