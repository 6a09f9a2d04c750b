# The data tools' settings in login shells, so `airflow`, `dagster` and `superset` see what the services see.
set -a
. /etc/default/desktop-env-airflow
. /etc/default/desktop-env-dagster
SUPERSET_CONFIG_PATH=/etc/superset/superset_config.py
DBT_PROFILES_DIR=/home/user/.dbt
DO_NOT_TRACK=1
set +a
