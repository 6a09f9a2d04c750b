#!/bin/sh
# Final assembly of the data profile, after base's, inside the guest root filesystem
# (/proc, /dev, /dev/shm mounted in a private namespace: see `chroot_mounts` in data.toml).
# Creates the sample databases and projects that tasks build on, initialises the tools'
# metadata natively here (minutes under emulation, seconds on the host) and leaves every
# service stopped and disabled: /usr/local/bin/start-<tool> starts them on demand.
set -eu

# Modes a git checkout does not keep.
chmod 0440 /etc/sudoers.d/desktop-env-data
chmod 0755 /usr/local/bin/start-postgres /usr/local/bin/start-mariadb /usr/local/bin/start-dagster \
  /usr/local/bin/start-airflow /usr/local/bin/start-superset

SHARE=/usr/local/share/desktop-env/data
SAMPLES=$SHARE/samples
as_user() { runuser -u user -- "$@"; }

# -- sample data and projects ----------------------------------------------------------------
python3 /usr/local/lib/desktop-env/data/make_samples.py "$SAMPLES"
chmod -R a+rX "$SHARE"
cp -r --preserve=mode "$SHARE/home/." /home/user/
# (git keeps no empty directories: the dbt project's seeds/ exists only once this creates it)
mkdir -p /home/user/projects/data /home/user/projects/dbt_duckdb/seeds /home/user/.superset
cp "$SAMPLES"/csv/*.csv /home/user/projects/data/
cp "$SAMPLES"/csv/*.csv /home/user/projects/dbt_duckdb/seeds/
chown -R user:user /home/user

# -- PostgreSQL 15: roles and the 'analytics' database ------------------------------------------
PGBIN=/usr/lib/postgresql/15/bin
PGDATA=/var/lib/postgresql/15/main
mkdir -p /run/postgresql && chown postgres:postgres /run/postgresql
runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGDATA" -w -t 120 -l /tmp/pg-build.log \
  -o "-c config_file=/etc/postgresql/15/main/postgresql.conf -c listen_addresses=''" start
pg() { runuser -u postgres -- psql -qX -v ON_ERROR_STOP=1 "$@"; }
pg -c "CREATE ROLE \"user\" LOGIN SUPERUSER PASSWORD 'password'"
pg -c "ALTER ROLE postgres PASSWORD 'password'"
pg -c "CREATE DATABASE analytics OWNER \"user\""
as_user psql -qX -v ON_ERROR_STOP=1 -d analytics -f "$SAMPLES/postgres_analytics.sql"
as_user psql -qX -v ON_ERROR_STOP=1 -d analytics -c "CREATE SCHEMA dbt"
runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGDATA" -m fast -w stop
echo manual > /etc/postgresql/15/main/start.conf   # not started at boot: start-postgres does

# -- MariaDB: accounts and the 'hr' database ---------------------------------------------------
mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
mariadbd --user=mysql --skip-networking --socket=/run/mysqld/mysqld.sock --pid-file=/run/mysqld/build.pid \
  --log-error=/tmp/mariadb-build.log &
MARIADB_PID=$!
n=0
until mariadb-admin --socket=/run/mysqld/mysqld.sock ping >/dev/null 2>&1; do
  n=$((n + 1))
  if [ "$n" -ge 120 ]; then
    echo "assemble.sh: MariaDB did not answer within 120 s:" >&2
    cat /tmp/mariadb-build.log >&2
    exit 1
  fi
  sleep 1
done
mariadb --socket=/run/mysqld/mysqld.sock <<'SQL'
CREATE DATABASE hr;
CREATE USER 'user'@'localhost' IDENTIFIED VIA unix_socket OR mysql_native_password USING PASSWORD('password');
GRANT ALL PRIVILEGES ON *.* TO 'user'@'localhost' WITH GRANT OPTION;
CREATE USER 'user'@'127.0.0.1' IDENTIFIED BY 'password';
GRANT ALL PRIVILEGES ON *.* TO 'user'@'127.0.0.1' WITH GRANT OPTION;
FLUSH PRIVILEGES;
SQL
mariadb --socket=/run/mysqld/mysqld.sock hr < "$SAMPLES/mariadb_hr.sql"
mariadb-admin --socket=/run/mysqld/mysqld.sock shutdown
wait "$MARIADB_PID" || true

# -- services start on demand only -------------------------------------------------------------
systemctl disable postgresql.service mariadb.service >/dev/null 2>&1 || true

# -- tools' metadata, created natively now rather than at first start in the guest -------------
# dbt: build the DuckDB project once (checks the project and leaves warehouse.duckdb populated).
(cd /home/user/projects/dbt_duckdb && as_user env DO_NOT_TRACK=1 DBT_PROFILES_DIR=/home/user/.dbt \
  /opt/venvs/dbt/bin/dbt build --quiet)
# Dagster: the run launcher the instance's dagster.yaml names (desktop_env_dagster_runs.py, with
# desktop-env-dagster-runs.service) goes into the venv; the instance must load it, the code location too.
install -m 0644 /usr/local/lib/desktop-env/data/desktop_env_dagster_runs.py \
  "$(/opt/venvs/dagster/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/"
as_user env DAGSTER_HOME=/home/user/.dagster DO_NOT_TRACK=1 /opt/venvs/dagster/bin/python -c \
  'from dagster import DagsterInstance; i = DagsterInstance.get(); assert type(i.run_launcher).__name__ == "ForkingRunLauncher", i.run_launcher; assert type(i.run_coordinator).__name__ == "SyncInMemoryRunCoordinator", i.run_coordinator'
(cd /home/user/projects/dagster_project && as_user env DAGSTER_HOME=/home/user/.dagster DO_NOT_TRACK=1 \
  /opt/venvs/dagster/bin/dagster definitions validate -w workspace.yaml)
# Airflow: metadata database migrated.
as_user sh -c 'set -a; . /etc/default/desktop-env-airflow; set +a; cd "$AIRFLOW_HOME"; exec /opt/venvs/airflow/bin/airflow db migrate'
# Superset: metadata database, the admin account (admin / admin), default roles (through its Python
# API, one process instead of three `superset` commands; see superset_init.py).
(cd /home/user && as_user env SUPERSET_CONFIG_PATH=/etc/superset/superset_config.py \
  /opt/venvs/superset/bin/python /usr/local/lib/desktop-env/data/superset_init.py)

chown -R user:user /home/user
rm -rf /tmp/pg-build.log /tmp/mariadb-build.log /run/postgresql/* /run/mysqld
