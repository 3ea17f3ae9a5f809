#!/bin/sh
# Packages the extension for one VS Code platform with the gradguard server bundled, as Ruff's and
# Microsoft's Python tool extensions do: gradguard (the wheel given) and its dependencies, as that
# platform's wheels (libcst and PyYAML are compiled), installed into bundled/libs for every CPython
# gradguard supports, one tree (only the compiled modules' names differ between versions).
#   usage: scripts/bundle.sh TARGET WHEEL OUT        (run in vscode-client/; TARGET as `vsce --target`)
#   PIP: the pip to run (default: python3 -m pip); PYTHONS: the CPython versions (default 3.10 to 3.13)
set -eu
target=$1 wheel=$2 out=$3
pip=${PIP:-python3 -m pip}
pythons=${PYTHONS:-3.10 3.11 3.12 3.13}
case $target in
  linux-x64) platforms="manylinux_2_28_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64" ;;
  linux-arm64) platforms="manylinux_2_28_aarch64 manylinux_2_17_aarch64 manylinux2014_aarch64" ;;
  darwin-x64) platforms="macosx_10_13_x86_64 macosx_10_12_x86_64 macosx_10_9_x86_64" ;;
  darwin-arm64) platforms="macosx_11_0_arm64" ;;
  win32-x64) platforms="win_amd64" ;;
  *) echo "bundle.sh: no wheels known for the target $target" >&2; exit 2 ;;
esac
platform_options=$(for p in $platforms; do printf ' --platform %s' "$p"; done)

rm -rf bundled .bundle-staging
mkdir -p bundled/libs
for version in $pythons; do
  staging=.bundle-staging/$version
  # shellcheck disable=SC2086
  $pip install --quiet --disable-pip-version-check --no-compile --target "$staging" --implementation cp \
    --python-version "$version" --only-binary=:all: $platform_options "$wheel"
  cp -R -n "$staging"/. bundled/libs/
done
rm -rf .bundle-staging bundled/libs/bin
# the universal package's .vscodeignore, and bundled/ too
{ cat .vscodeignore; echo '!bundled/**'; } > .bundle-vscodeignore
npx vsce package --no-dependencies --allow-missing-repository --no-rewrite-relative-links \
  --ignoreFile .bundle-vscodeignore --target "$target" --out "$out"
rm -rf bundled .bundle-vscodeignore
