#!/usr/bin/env bash
# Keys of the gateway in front of Qwen/Qwen3-8B (gateway/README.md). Written by llm-deploy-wizard.
#
#   bash gateway/keys.sh init          vLLM's shared key: writes gateway/.env (read by compose.yaml) and
#                                      gateway/upstream-auth.conf (the gateway forwards it upstream); once
#   bash gateway/keys.sh add NAME      a new caller key named NAME: appended to gateway/api-keys.conf, printed once
#   bash gateway/keys.sh remove NAME   removes every key named NAME
#
# Then reload the gateway: docker compose -f gateway/compose.yaml exec gateway nginx -s reload
# Keys are 64 hex characters from /dev/urandom; the three files stay on this machine (.gitignore lists them).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
umask 077

new_key() {
  head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n'
}

usage() {
  echo "usage: bash gateway/keys.sh init | add NAME | remove NAME   (NAME: letters, digits, '-' and '_')" >&2
  exit 2
}

check_name() {
  if [[ ! "${1:-}" =~ ^[A-Za-z0-9_-]{1,64}$ ]]; then
    echo "error: key name '${1:-}': expected 1-64 letters, digits, '-' and '_'" >&2
    exit 2
  fi
}

case "${1:-}" in
  init)
    if [ -e "$HERE/.env" ] || [ -e "$HERE/upstream-auth.conf" ]; then
      echo "error: $HERE/.env or upstream-auth.conf exists already: delete both to make a new shared key" >&2
      exit 1
    fi
    key="$(new_key)"
    printf 'VLLM_API_KEY=%s\n' "$key" > "$HERE/.env"
    printf 'proxy_set_header Authorization "Bearer %s";\n' "$key" > "$HERE/upstream-auth.conf"
    touch "$HERE/api-keys.conf"
    echo "wrote $HERE/.env and $HERE/upstream-auth.conf (vLLM's shared key); add caller keys with: bash gateway/keys.sh add NAME"
    ;;
  add)
    check_name "${2:-}"
    key="$(new_key)"
    printf '"Bearer %s" %s;\n' "$key" "$2" >> "$HERE/api-keys.conf"
    echo "key for $2 (shown once; callers send 'Authorization: Bearer <key>'):" >&2
    echo "$key"
    ;;
  remove)
    check_name "${2:-}"
    if [ -f "$HERE/api-keys.conf" ]; then
      grep -v -E "^\"Bearer [0-9a-f]+\" $2;\$" "$HERE/api-keys.conf" > "$HERE/api-keys.conf.new" || true
      mv "$HERE/api-keys.conf.new" "$HERE/api-keys.conf"
    fi
    echo "removed the keys named $2; reload the gateway" >&2
    ;;
  *)
    usage
    ;;
esac
