#!/usr/bin/env bash
# The vendor's Python SDK needs pydantic 2, which Debian bookworm does not package and which PyPI
# would otherwise provide. Where PyPI is out of reach, Debian trixie packages all the SDK and its
# tests need: this installs them into a root of their own (debootstrap, from the Debian mirror this
# machine's apt sources name), makes the SDK checkout visible there at the same path, and writes
# `pytest` and `python` wrappers that run there in the caller's directory and environment, for
# `npm run sdk-suites -- --venv`.
#
#   sudo bash infra/cli/python-sdk-root.sh ../amigo-python-sdk [ROOT]   (ROOT: /opt/python-sdk-root)
#   npm run sdk-suites -- --python ../amigo-python-sdk --venv /opt/python-sdk-root/wrappers
#   bash infra/cli/python-sdk-root.sh --mirror    (prints the mirror it would use, and where it read it)
#
# DEBIAN_MIRROR=<uri> overrides the mirror read from apt's sources.
set -euo pipefail

# The first enabled `deb` archive of apt's sources that is not a security archive, as
# "<uri> <file>": deb822 stanzas (sources.list.d/*.sources), then one-line entries
# (sources.list, sources.list.d/*.list).
debian_mirror() {
  local file
  for file in /etc/apt/sources.list.d/*.sources; do
    [ -r "$file" ] || continue
    awk -v file="$file" '
      function flush() {
        if (types ~ /(^| )deb( |$)/ && enabled != "no")
          for (i = 1; i <= n; i++) if (uris[i] !~ /-security\/?$/) { print uris[i], file; found = 1; exit }
        types = ""; enabled = ""; n = 0
      }
      /^[ \t]*#/ { next }
      /^[ \t]*$/ { flush(); next }
      tolower($1) == "types:" { types = ""; for (i = 2; i <= NF; i++) types = types " " $i; types = types " " }
      tolower($1) == "enabled:" { enabled = tolower($2) }
      tolower($1) == "uris:" { for (i = 2; i <= NF; i++) uris[++n] = $i }
      END { if (!found) flush() }
    ' "$file" | head -n 1
  done
  for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -r "$file" ] || continue
    awk -v file="$file" '
      $1 == "deb" {
        i = 2
        if ($i ~ /^\[/) while ($i !~ /\]$/ && i < NF) i++
        if ($i ~ /^\[/ || $i ~ /\]$/) i++
        if ($i !~ /-security\/?$/) { print $i, file; exit }
      }
    ' "$file"
  done
}

mirror_and_source() {
  if [ -n "${DEBIAN_MIRROR:-}" ]; then
    echo "$DEBIAN_MIRROR DEBIAN_MIRROR"
    return
  fi
  local found
  found=$(debian_mirror | head -n 1)
  if [ -z "$found" ]; then
    echo "python-sdk-root: no Debian archive (a 'deb' entry) in /etc/apt/sources.list or /etc/apt/sources.list.d;" \
      "name one: DEBIAN_MIRROR=<uri of a Debian mirror> bash $0 ..." >&2
    exit 3
  fi
  echo "$found"
}

if [ "${1:-}" = --mirror ]; then
  found=$(mirror_and_source)
  echo "python-sdk-root: Debian mirror ${found%% *} (from ${found#* })"
  exit 0
fi

sdk=$(realpath "${1:?usage: python-sdk-root.sh SDK_DIR [ROOT] | --mirror}")
root=${2:-/opt/python-sdk-root}
packages=python3-pydantic,python3-pydantic-settings,python3-httpx,python3-email-validator,python3-dotenv,python3-pytest,python3-pytest-asyncio,python3-pytest-cov,python3-pytest-httpx

[ "$(id -u)" = 0 ] || { echo "python-sdk-root: needs root (debootstrap, chroot and mount)" >&2; exit 2; }
if [ ! -x "$root/usr/bin/pytest" ]; then
  found=$(mirror_and_source)
  echo "python-sdk-root: debootstrap trixie into $root from ${found%% *} (from ${found#* })"
  command -v debootstrap >/dev/null || apt-get install -y -q debootstrap
  debootstrap --variant=minbase --include="$packages" trixie "$root" "${found%% *}"
fi

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
