#!/usr/bin/env bash
# Make sure PostgreSQL and Redis answer on 127.0.0.1; install (apt) and start them if not.
# Used by `make test` and by CI. Idempotent; prints what it did.
set -euo pipefail

have() { command -v "$1" >/dev/null 2>&1; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
apt_install() {
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$@" >/dev/null
}

postgres_up() { pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; }
redis_up() { [ "$(redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null)" = "PONG" ]; }

if ! have pg_ctlcluster || ! have pg_isready; then
  echo "services: installing PostgreSQL"; apt_install postgresql postgresql-client
fi
if ! postgres_up; then
  echo "services: starting PostgreSQL"
  version=$(ls /etc/postgresql | sort -V | tail -n 1)
  as_root pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
  for _ in $(seq 1 30); do postgres_up && break; sleep 1; done
fi
postgres_up || { echo "services: PostgreSQL did not start" >&2; exit 1; }

if ! have redis-server || ! have redis-cli; then
  echo "services: installing Redis"; apt_install redis-server redis-tools
fi
if ! redis_up; then
  echo "services: starting Redis"
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
  for _ in $(seq 1 30); do redis_up && break; sleep 0.5; done
fi
redis_up || { echo "services: Redis did not start" >&2; exit 1; }
echo "services: PostgreSQL and Redis answer on 127.0.0.1"
