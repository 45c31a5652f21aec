#!/usr/bin/env bash
# Installs every Debian package jetfleet needs to build, test and run its demo (chromium: the
# headless browser integration.report renders the HTML report in; docs/report.md).
# Idempotent: when everything is already installed it changes nothing and does not
# touch the network. Only Debian's archive is used (one apt-get update at most).
#   scripts/deps.sh            build, test and demo
#   scripts/deps.sh --bench    also the Python PyTorch baseline for bench/train-vs-pytorch.sh
#   scripts/deps.sh --fuzz     also clang and its libFuzzer runtime for scripts/fuzz.sh
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  libzmq3-dev libczmq-dev libjansson-dev libyaml-dev libsqlite3-dev sqlite3 libsodium-dev
  libcmocka-dev libcurl4-openssl-dev libcsv-dev libjpeg62-turbo-dev libturbojpeg0-dev libswscale-dev
  libtorch-dev
  chromium fonts-dejavu-core   # integration.report (headless chromium)
  ansible-core systemd   # playbooks/ checks (ansible-playbook), unit checks (systemd-analyze)
  zlib1g-dev
  influxdb # integration.influx starts its own influxd; the package's service is not used
  podman runc # integration.containers (docs/containers.md); runc: crun refuses hybrid cgroups
  libpq-dev postgresql # the PostgreSQL store back end; unit.db_pg starts its own server
  python3 # unit.influx_http's HTTP request recorder (tests/fixtures/http/recorder.py)
)
case "${1:-}" in
  --bench) packages+=(python3-torch python3-torchvision python3-pil) ;;
  --fuzz) packages+=(clang-14 libclang-rt-14-dev) ;;
esac

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#packages[@]} packages already installed"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo="sudo"
  else
    echo "deps: missing packages (${missing[*]}) and not root; run as root or install sudo" >&2
    exit 1
  fi
fi

echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
