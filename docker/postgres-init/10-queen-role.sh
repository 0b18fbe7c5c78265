#!/usr/bin/env bash
# Runs once, when the postgres container initialises an empty data directory (the image's
# /docker-entrypoint-initdb.d contract), as the superuser the image created (POSTGRES_USER).
#
# Least privilege (docs/schema-and-roles.md#database-roles):
# - QUEEN_JDBC_USER, the owner: NOT a superuser, may not create databases or roles. It owns the database
#   `queen`, so the migrations it runs (compose's `migrate`) create the schemas `queen` and `queen_timers`
#   (and every object in them) owned by it; nothing else in the cluster is its.
# - queen_bridge, queen_sweeper, queen_operator: NOLOGIN group roles. The owner may not create roles, so
#   they are made here; every migrate grants them their functions and reads (db/least-privilege.sql).
# - QUEEN_BRIDGE_JDBC_USER, QUEEN_SWEEPER_JDBC_USER, QUEEN_OPERATOR_JDBC_USER: the logins the bridge, the
#   sweeper and an operator's CLI connect as, each a member of one group role and nothing more.
#
# Price: an existing data volume skips this script (the image runs it on first init only); for a
# volume created before this file, run its statements by hand (docs/schema-and-roles.md#database-roles).
set -euo pipefail

: "${QUEEN_JDBC_USER:?QUEEN_JDBC_USER must be set}"
: "${QUEEN_JDBC_PASSWORD:?QUEEN_JDBC_PASSWORD must be set}"
: "${QUEEN_BRIDGE_JDBC_USER:?QUEEN_BRIDGE_JDBC_USER must be set}"
: "${QUEEN_BRIDGE_JDBC_PASSWORD:?QUEEN_BRIDGE_JDBC_PASSWORD must be set}"
: "${QUEEN_SWEEPER_JDBC_USER:?QUEEN_SWEEPER_JDBC_USER must be set}"
: "${QUEEN_SWEEPER_JDBC_PASSWORD:?QUEEN_SWEEPER_JDBC_PASSWORD must be set}"
: "${QUEEN_OPERATOR_JDBC_USER:?QUEEN_OPERATOR_JDBC_USER must be set}"
# the operator's password from the file compose mounts (QUEEN_OPERATOR_JDBC_PASSWORD_FILE), the one the http API reads;
# trailing line breaks dropped, as the services read a secret file
if [[ -n "${QUEEN_OPERATOR_JDBC_PASSWORD_FILE:-}" ]]; then
  QUEEN_OPERATOR_JDBC_PASSWORD="$(cat "$QUEEN_OPERATOR_JDBC_PASSWORD_FILE")"
fi
: "${QUEEN_OPERATOR_JDBC_PASSWORD:?QUEEN_OPERATOR_JDBC_PASSWORD or QUEEN_OPERATOR_JDBC_PASSWORD_FILE must be set}"

psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
     -v role="$QUEEN_JDBC_USER" -v password="$QUEEN_JDBC_PASSWORD" \
     -v bridge="$QUEEN_BRIDGE_JDBC_USER" -v bridge_password="$QUEEN_BRIDGE_JDBC_PASSWORD" \
     -v sweeper="$QUEEN_SWEEPER_JDBC_USER" -v sweeper_password="$QUEEN_SWEEPER_JDBC_PASSWORD" \
     -v operator="$QUEEN_OPERATOR_JDBC_USER" -v operator_password="$QUEEN_OPERATOR_JDBC_PASSWORD" <<'SQL'
CREATE ROLE :"role" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD :'password';
CREATE DATABASE queen OWNER :"role";
REVOKE ALL ON DATABASE queen FROM PUBLIC;
GRANT CONNECT, TEMPORARY ON DATABASE queen TO :"role";
CREATE ROLE queen_bridge NOLOGIN;
CREATE ROLE queen_sweeper NOLOGIN;
CREATE ROLE queen_operator NOLOGIN;
CREATE ROLE :"bridge" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD :'bridge_password' IN ROLE queen_bridge;
CREATE ROLE :"sweeper" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD :'sweeper_password' IN ROLE queen_sweeper;
CREATE ROLE :"operator" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD :'operator_password' IN ROLE queen_operator;
GRANT CONNECT ON DATABASE queen TO :"bridge", :"sweeper", :"operator";
SQL
# PostgreSQL 15+: the public schema is not writable by everyone; no role needs any of it.
