#!/usr/bin/env bash
# Re-fetches the charting library the HTML report embeds (docs/report.md "The charting library"):
# Chart.js at the pinned version below, from the npm registry through npm itself, and checks the
# sha256 of the two files kept in coordinator/report/vendor/ against the pinned sums.
#   scripts/vendor-charts.sh           fetch, check, and copy into coordinator/report/vendor/
#   scripts/vendor-charts.sh --check   only check that the committed files have the pinned sums
# A new version is a deliberate change: edit VERSION and the two sums, run, commit all together.
set -euo pipefail

VERSION=4.4.1
JS_SHA256=74401d738dd3e03ee5dfb3b6841210fe2c4ead8a960c4011ca4ba0b78a9fd8f3
LICENSE_SHA256=5a0877ad6d818529be4f33009d0942cdf7e2ed7656156f4aba7308459a546030

here="$(cd "$(dirname "$0")/.." && pwd)"
dest="$here/coordinator/report/vendor"

check() { # file sum
  local got
  got="$(sha256sum "$1" | cut -d' ' -f1)"
  if [ "$got" != "$2" ]; then
    echo "vendor-charts: $1: sha256 $got, expected $2 (chart.js $VERSION)" >&2
    exit 1
  fi
}

if [ "${1:-}" = "--check" ]; then
  check "$dest/chart.umd.min.js" "$JS_SHA256"
  check "$dest/LICENSE.md" "$LICENSE_SHA256"
  echo "vendor-charts: committed chart.js $VERSION matches its sums"
  exit 0
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "chart.js@$VERSION" >/dev/null)
tar -xzf "$tmp/chart.js-$VERSION.tgz" -C "$tmp"
check "$tmp/package/dist/chart.umd.js" "$JS_SHA256"
check "$tmp/package/LICENSE.md" "$LICENSE_SHA256"
mkdir -p "$dest"
cp "$tmp/package/dist/chart.umd.js" "$dest/chart.umd.min.js"
cp "$tmp/package/LICENSE.md" "$dest/LICENSE.md"
echo "vendor-charts: chart.js $VERSION copied to $dest"
