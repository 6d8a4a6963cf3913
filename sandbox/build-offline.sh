#!/usr/bin/env bash
# Builds the sandbox image without a container registry: debootstrap a minimal Debian with
# python3 and the scientific stack from Debian's own packages, add an unprivileged user, then
# `docker import` the tree. Idempotent: an existing image with the same recipe hash is kept, and
# the root-fs tarball is cached so a wiped Docker store does not mean another debootstrap.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
image="${SANDBOX_IMAGE:-deep-research-sandbox:latest}"
suite="${SANDBOX_SUITE:-bookworm}"
mirror="${SANDBOX_MIRROR:-http://deb.debian.org/debian}"
cache_dir="${SANDBOX_CACHE_DIR:-/var/cache/deep-research}"
packages="$(grep -vE '^\s*(#|$)' "$here/packages.txt" | tr '\n' ',' | sed 's/,$//')"
recipe="$( (cat "$0" "$here/packages.txt"; echo "$suite") | sha256sum | cut -c1-16)"

if docker image inspect "$image" --format '{{index .Config.Labels "org.deep-research.recipe"}}' 2>/dev/null | grep -qx "$recipe"; then
  echo "sandbox image $image is current (recipe $recipe)"
  exit 0
fi

mkdir -p "$cache_dir"
tarball="$cache_dir/sandbox-rootfs-$recipe.tar"
if [ ! -s "$tarball" ]; then
  command -v debootstrap >/dev/null || { echo "debootstrap is missing: apt-get install -y debootstrap" >&2; exit 1; }
  root="$(mktemp -d /var/tmp/sandbox-rootfs.XXXXXX)"
  trap 'rm -rf "$root"' EXIT
  echo "debootstrap $suite with: $packages"
  debootstrap --variant=minbase --include="$packages" "$suite" "$root" "$mirror"
  # An unprivileged user for the code; the container runs with --user too, this just names it.
  chroot "$root" /usr/sbin/groupadd --gid 10001 sandbox
  chroot "$root" /usr/sbin/useradd --uid 10001 --gid 10001 --home-dir /work --no-create-home --shell /usr/sbin/nologin sandbox
  mkdir -p "$root/work" "$root/output"
  chown 10001:10001 "$root/work" "$root/output"
  # Matplotlib needs a writable config dir (a tmpfs at run time) and would rebuild its font list
  # there at every run: build it once here; the container's bootstrap copies it in.
  chroot "$root" /usr/bin/env MPLCONFIGDIR=/usr/local/share/sandbox/mpl MPLBACKEND=Agg HOME=/root \
    /usr/bin/python3 -c 'import matplotlib.font_manager'
  ls "$root"/usr/local/share/sandbox/mpl/fontlist-*.json >/dev/null
  chmod -R a+rX "$root/usr/local/share/sandbox"
  rm -rf "$root/var/cache/apt/archives/"*.deb "$root/var/lib/apt/lists/"* "$root/usr/share/doc" "$root/usr/share/man"
  # Remove setuid/setgid bits: nothing inside should be able to gain privileges.
  find "$root" -xdev -perm /6000 -type f -exec chmod ug-s {} +
  python_pkgs="$(chroot "$root" /usr/bin/python3 -c 'import importlib.metadata as m; print(",".join(sorted({d.metadata["Name"].lower() for d in m.distributions()})))')"
  echo "$python_pkgs" > "$root/etc/sandbox-python-packages"
  tar -C "$root" -cf "$tarball.tmp" .
  mv "$tarball.tmp" "$tarball"
fi

docker import \
  --change 'USER 10001:10001' \
  --change 'WORKDIR /work' \
  --change 'ENV HOME=/work MPLCONFIGDIR=/work/.mpl PYTHONDONTWRITEBYTECODE=1 MPLBACKEND=Agg' \
  --change 'CMD ["/usr/bin/python3"]' \
  --change "LABEL org.deep-research.recipe=$recipe" \
  "$tarball" "$image"
echo "built sandbox image $image (recipe $recipe)"
