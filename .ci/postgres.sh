# Sourced by .ci/run: starts a throwaway PostgreSQL server on loopback and exports
# BABELFIND_TEST_PG_URL so the store tests also run against a real server.
# Installs Debian's postgresql package when the machine has none.
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if [ -z "$pg_bin" ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  pg_bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
fi
pg_dir=$(mktemp -d /tmp/babelfind-pg.XXXXXX)
pg_port=${BABELFIND_PG_PORT:-54329}
as_postgres() { if [ "$(id -u)" = 0 ]; then su postgres -s /bin/sh -c "$1"; else sh -c "$1"; fi; }
[ "$(id -u)" = 0 ] && chown postgres "$pg_dir"
as_postgres "$pg_bin/initdb -D $pg_dir/data -A trust -U postgres >/dev/null"
as_postgres "$pg_bin/pg_ctl -D $pg_dir/data -l $pg_dir/log -w -o '-p $pg_port -k $pg_dir -c listen_addresses=127.0.0.1' start >/dev/null"
trap 'as_postgres "$pg_bin/pg_ctl -D $pg_dir/data -m fast stop >/dev/null"; rm -rf "$pg_dir"' EXIT
export BABELFIND_TEST_PG_URL="postgresql+psycopg://postgres@127.0.0.1:$pg_port/postgres"
echo "PostgreSQL $($pg_bin/postgres --version | awk '{print $3}') on 127.0.0.1:$pg_port"
