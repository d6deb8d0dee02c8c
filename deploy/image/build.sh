#!/usr/bin/env bash
# Builds the CLI's container image without a Docker daemon and without a registry: the root
# filesystem from Debian's packages (mmdebstrap: openjdk-17-jre-headless and tini), packed as an
# OCI image by umoci. The result is an OCI image layout in a tar file, which
# `skopeo copy oci-archive:FILE docker://…` or `podman load -i FILE` take as is.
#
#   deploy/image/build.sh [OUTPUT.tar]     default: client/target/oncegate-image.tar
#
# Needs: root (mmdebstrap installs packages into a chroot), `apt-get install -y mmdebstrap umoci`
# (and runc to run it: ImageBuildIT),
# and the jar (`mvn -B package -DskipTests`). Packages come from this machine's apt sources
# (IMAGE_APT_SOURCES, default /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list).
# About 3 minutes and 250 MB of downloads on a fresh machine: not part of `mvn verify`; run it,
# or `mvn -B verify -Pimage`, which builds and checks it (ImageBuildIT).
#
# The image: entrypoint `tini -- oncegate` (tini is PID 1: it forwards SIGTERM to the JVM and
# reaps the gated commands), user 10001:10001 (`oncegate`), working directory /home/oncegate.
# Its settings live in image.env and here; Dockerfile is the same image from a published base,
# for CI systems that can pull one.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
# shellcheck source=image.env
source "$here/image.env"
jar="${ONCEGATE_JAR:-$root/client/target/oncegate.jar}"
out="${1:-$root/client/target/oncegate-image.tar}"
suite="${IMAGE_SUITE:-bookworm}"
if [[ -z "${IMAGE_APT_SOURCES:-}" ]]; then
  if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
    IMAGE_APT_SOURCES=/etc/apt/sources.list.d/debian.sources
  else
    IMAGE_APT_SOURCES=/etc/apt/sources.list
  fi
fi

die() { echo "build.sh: $*" >&2; exit 2; }
[[ -f "$jar" ]] || die "$jar does not exist: mvn -B package -DskipTests builds it"
for tool in mmdebstrap umoci; do
  command -v "$tool" > /dev/null || die "$tool is missing: apt-get install -y mmdebstrap umoci"
done
[[ "$(id -u)" == 0 ]] || die "run as root (mmdebstrap installs Debian packages into a chroot)"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "build.sh: root filesystem from $suite packages ($IMAGE_APT_SOURCES)"
mmdebstrap --variant=essential --include=openjdk-17-jre-headless,tini \
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --essential-hook='mkdir -p "$1/usr/share/man/man1"' \
  --customize-hook='echo "oncegate:x:10001:10001:oncegate:/home/oncegate:/usr/sbin/nologin" >> "$1/etc/passwd"' \
  --customize-hook='echo "oncegate:x:10001:" >> "$1/etc/group"' \
  --customize-hook='echo "oncegate:!:19000::::::" >> "$1/etc/shadow"' \
  --customize-hook='mkdir -p "$1/home/oncegate" "$1/opt/oncegate" && chown 10001:10001 "$1/home/oncegate"' \
  --customize-hook="install -m 0644 '$jar' \"\$1/opt/oncegate/oncegate.jar\"" \
  --customize-hook="install -m 0755 '$here/oncegate' \"\$1/usr/local/bin/oncegate\"" \
  --customize-hook='rm -rf "$1"/var/cache/apt/* "$1"/var/lib/apt/lists/* "$1"/var/log/*.log' \
  "$suite" "$work/rootfs.tar" "$IMAGE_APT_SOURCES"
# (the man1 directory: java's update-alternatives links its man page there, even with man pages excluded)

echo "build.sh: packing $IMAGE_NAME:$IMAGE_TAG with umoci"
image="$work/oci:$IMAGE_TAG"
umoci init --layout "$work/oci"
umoci new --image "$image"
umoci raw add-layer --image "$image" "$work/rootfs.tar"
umoci config --image "$image" \
  --os linux --architecture amd64 --author oncegate \
  --config.user 10001:10001 --config.workingdir /home/oncegate \
  --config.entrypoint /usr/bin/tini --config.entrypoint -- --config.entrypoint /usr/local/bin/oncegate \
  --config.cmd --help \
  --config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --config.env LANG=C.UTF-8 \
  --config.label org.opencontainers.image.title=oncegate \
  --config.label "org.opencontainers.image.version=$IMAGE_TAG" \
  --config.label "org.opencontainers.image.ref.name=$IMAGE_NAME:$IMAGE_TAG"
umoci gc --layout "$work/oci"
mkdir -p "$(dirname "$out")"
tar -C "$work/oci" -cf "$out" .
echo "build.sh: $out ($(du -h "$out" | cut -f1)), OCI layout, tag $IMAGE_TAG"
