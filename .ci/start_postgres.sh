#!/usr/bin/env bash
# Start Debian's PostgreSQL (installing it if needed) and create an empty test database.
# Prints the DATABASE_URL to use. Idempotent; run as root.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
if ! command -v pg_ctlcluster >/dev/null 2>&1; then
  apt-get update -qq >&2
  apt-get install -y -qq postgresql >/dev/null
fi
version=$(ls /usr/lib/postgresql | sort -V | tail -n 1)
if ! pg_lsclusters -h | grep -q "^$version main"; then
  pg_createcluster "$version" main >&2
fi
pg_ctlcluster "$version" main start >/dev/null 2>&1 || true
for _ in $(seq 1 30); do
  pg_isready -q -h 127.0.0.1 && break
  sleep 1
done
db=${1:-otree_test}
su postgres -c "psql -q -tc \"SELECT 1 FROM pg_roles WHERE rolname='otree'\" | grep -q 1 || psql -q -c \"CREATE ROLE otree LOGIN SUPERUSER PASSWORD 'otree'\"" >&2
su postgres -c "dropdb --if-exists -f $db && createdb -O otree $db" >&2
echo "postgresql://otree:otree@127.0.0.1:5432/$db"
