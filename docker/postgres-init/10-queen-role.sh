#!/usr/bin/env bash
# Runs once, when the postgres container initialises an empty data directory (the image's
# /docker-entrypoint-initdb.d contract), as the superuser the image created (POSTGRES_USER).
#
# Least privilege: the services and the migrate one-shot connect as QUEEN_JDBC_USER, a role that is
# NOT a superuser and may not create databases or roles. It owns the database `queen`, so the
# migrations it runs create the schemas `queen` and `queen_timers` (and every object in them) owned
# by it; nothing else in the cluster is its.
#
# Price: an existing data volume skips this script (the image runs it on first init only); for a
# volume created before this file, create the role and hand over the database by hand (README "Operations").
set -euo pipefail

: "${QUEEN_JDBC_USER:?QUEEN_JDBC_USER must be set}"
: "${QUEEN_JDBC_PASSWORD:?QUEEN_JDBC_PASSWORD must be set}"

psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
     -v role="$QUEEN_JDBC_USER" -v password="$QUEEN_JDBC_PASSWORD" <<'SQL'
CREATE ROLE :"role" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD :'password';
CREATE DATABASE queen OWNER :"role";
REVOKE ALL ON DATABASE queen FROM PUBLIC;
GRANT CONNECT, TEMPORARY ON DATABASE queen TO :"role";
SQL
# PostgreSQL 15+: the public schema is not writable by everyone; the role needs none of it.
