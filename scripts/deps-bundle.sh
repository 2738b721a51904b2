#!/bin/sh
# Downloads the Debian packages gpubench builds against into .deps/debs, for a
# machine that has no network (a GPU host): carry .deps there and run
# scripts/deps-offline.sh. Run this where apt can reach the Debian mirror.
#
#   scripts/deps-bundle.sh
set -eu
cd "$(dirname "$0")/.."
PACKAGES="liblua5.4-dev liblua5.4-0 liblmdb-dev liblmdb0 libxxhash-dev libxxhash0
libjansson-dev libjansson4 zlib1g-dev zlib1g libcmocka-dev libcmocka0 libgsl-dev libgsl27 libgslcblas0
libjs-chart.js
pkgconf pkgconf-bin libpkgconf3"
mkdir -p .deps/debs
cd .deps/debs
# shellcheck disable=SC2086
apt-get download $PACKAGES
ls -1 *.deb
