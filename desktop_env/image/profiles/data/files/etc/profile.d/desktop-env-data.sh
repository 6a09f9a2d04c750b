# The data tools' settings in login shells, so `airflow` and `dagster` see what the services see.
set -a
. /etc/default/desktop-env-airflow
. /etc/default/desktop-env-dagster
DBT_PROFILES_DIR=/home/user/.dbt
DO_NOT_TRACK=1
set +a
