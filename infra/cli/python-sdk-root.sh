#!/usr/bin/env bash
# The vendor's Python SDK needs pydantic 2, which Debian bookworm does not package and which PyPI
# would otherwise provide. Where PyPI is out of reach, Debian trixie packages all the SDK and its
# tests need: this installs them into a root of their own (debootstrap, from deb.debian.org), makes
# the SDK checkout visible there at the same path, and writes `pytest` and `python` wrappers that
# run there in the caller's directory and environment, for `npm run sdk-suites -- --venv`.
#
#   sudo bash infra/cli/python-sdk-root.sh ../amigo-python-sdk [ROOT]   (ROOT: /opt/python-sdk-root)
#   npm run sdk-suites -- --python ../amigo-python-sdk --venv /opt/python-sdk-root/wrappers
set -euo pipefail

sdk=$(realpath "${1:?usage: python-sdk-root.sh SDK_DIR [ROOT]}")
root=${2:-/opt/python-sdk-root}
packages=python3-pydantic,python3-pydantic-settings,python3-httpx,python3-email-validator,python3-dotenv,python3-pytest,python3-pytest-asyncio,python3-pytest-cov,python3-pytest-httpx

[ "$(id -u)" = 0 ] || { echo "python-sdk-root: needs root (debootstrap, chroot and mount)" >&2; exit 2; }
command -v debootstrap >/dev/null || apt-get install -y -q debootstrap
[ -x "$root/usr/bin/pytest" ] ||
  debootstrap --variant=minbase --include="$packages" trixie "$root" http://deb.debian.org/debian

mkdir -p "$root$sdk" "$root/proc" "$root/dev"
mountpoint -q "$root$sdk" || mount --bind "$sdk" "$root$sdk"
mountpoint -q "$root/proc" || mount -t proc proc "$root/proc"
mountpoint -q "$root/dev" || mount --bind /dev "$root/dev"
# The checkout's sources, importable as the vendor's CI has them after `pip install -e .`.
echo "$sdk/src" >"$root/usr/lib/python3/dist-packages/amigo_sdk_checkout.pth"

mkdir -p "$root/wrappers/bin"
for tool in pytest python; do
  command=$([ "$tool" = python ] && echo python3 || echo pytest)
  cat >"$root/wrappers/bin/$tool" <<EOF
#!/bin/sh
exec chroot "$root" /usr/bin/env --chdir="\$PWD" PATH=/usr/bin:/bin $command "\$@"
EOF
  chmod +x "$root/wrappers/bin/$tool"
done
echo "python-sdk-root: $(chroot "$root" python3 -c 'import pydantic; print("pydantic", pydantic.VERSION)') in $root;" \
  "run: npm run sdk-suites -- --python $sdk --venv $root/wrappers"
