#!/usr/bin/env bash
# Create the branch of the proposed Snakemake patch, locally, from a Snakemake 9.27.1 source.
#
#   upstream/snakemake/make-branch.sh [--source DIR] [--repo DIR] [--branch NAME] [--force]
#                                      [--any-version]
#
# --source  a Snakemake 9.27.1 source: a git checkout of snakemake/snakemake (has
#           src/snakemake/), an installed package folder (.../site-packages/snakemake) or the
#           folder above it. Default: the snakemake package python3 imports.
# --repo    the git repository to create the branch in. Default: this one.
# --branch  default: upstream/snakemake-scheduling-per-round
# --force   replace the branch if it exists.
# --any-version  accept a Snakemake other than 9.27.1 if the patch applies cleanly to it
#           (the commit messages name the version found).
#
# The branch has two commits and only the files the patch touches, at their paths in a
# Snakemake checkout (src/snakemake/...): the files as in the source (first commit), then with
# scheduling-per-round.patch applied (second commit). The patch must apply cleanly
# (git apply --check: no fuzz) or nothing is created. The commits are built with git plumbing
# in a temporary index: the working tree, the index and the current branch are not touched.
# Then `git diff BRANCH~1 BRANCH` is the patch, and `git format-patch -1 BRANCH` a mail of it.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
patch_file="$here/scheduling-per-round.patch"
version="9.27.1"
source_dir=""
repo="$(git -C "$here" rev-parse --show-toplevel)"
branch="upstream/snakemake-scheduling-per-round"
force=0
any_version=0

die() { echo "make-branch.sh: $*" >&2; exit 1; }

while [ $# -gt 0 ]; do
  case "$1" in
    --source) source_dir="$2"; shift 2 ;;
    --repo) repo="$2"; shift 2 ;;
    --branch) branch="$2"; shift 2 ;;
    --force) force=1; shift ;;
    --any-version) any_version=1; shift ;;
    -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
done

if [ -z "$source_dir" ]; then
  source_dir="$(python3 -c 'import os, snakemake; print(os.path.dirname(snakemake.__file__))')" \
    || die "no --source given and python3 cannot import snakemake"
fi
[ -d "$source_dir" ] || die "--source $source_dir: no such folder"
source_dir="$(cd "$source_dir" && pwd)"

# The folder that holds the package, as src/ does in a checkout.
if [ -f "$source_dir/src/snakemake/__init__.py" ]; then
  pkg_parent="$source_dir/src"
elif [ -f "$source_dir/snakemake/__init__.py" ]; then
  pkg_parent="$source_dir"
elif [ -f "$source_dir/__init__.py" ] && [ "$(basename "$source_dir")" = snakemake ]; then
  pkg_parent="$(dirname "$source_dir")"
else
  die "$source_dir is not a Snakemake source (no src/snakemake/, snakemake/ or __init__.py)"
fi

# Its version: the literal in __init__.py (released packages), else the checkout's tag.
found="$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$pkg_parent/snakemake/__init__.py" | head -n1)"
if [ -z "$found" ]; then
  found="$(git -C "$pkg_parent" describe --tags --exact-match 2>/dev/null || true)"
  found="${found#v}"
fi
if [ "$found" != "$version" ]; then
  [ "$any_version" -eq 1 ] \
    || die "$pkg_parent/snakemake is Snakemake ${found:-of unknown version}, the patch is against $version (--any-version tries it anyway)"
  version="${found:-of unknown version}"
fi

git -C "$repo" rev-parse --git-dir >/dev/null 2>&1 || die "$repo is not a git repository"
if git -C "$repo" show-ref --verify --quiet "refs/heads/$branch" && [ "$force" -ne 1 ]; then
  die "branch $branch exists in $repo (--force replaces it)"
fi

# The files the patch touches, as paths in a checkout (src/snakemake/...).
mapfile -t files < <(sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$patch_file")
[ "${#files[@]}" -gt 0 ] || die "$patch_file names no files"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
tree="$work/tree"
for f in "${files[@]}"; do
  case "$f" in src/snakemake/*) ;; *) die "the patch touches $f, outside src/snakemake/" ;; esac
  [ -f "$pkg_parent/${f#src/}" ] || die "$pkg_parent/${f#src/} does not exist"
  mkdir -p "$tree/$(dirname "$f")"
  cp "$pkg_parent/${f#src/}" "$tree/$f"
done

# A repository of its own, so that git apply resolves paths in it whatever encloses it.
git -C "$tree" init -q
git -C "$tree" apply --check "$patch_file" \
  || die "$(basename "$patch_file") does not apply cleanly to $pkg_parent/snakemake"

commit_tree() {  # commit_tree MESSAGE [PARENT]: commit the files of $tree listed in $files
  local index="$work/index" blob f
  rm -f "$index"
  for f in "${files[@]}"; do
    blob="$(git -C "$repo" hash-object -w -- "$tree/$f")"
    GIT_INDEX_FILE="$index" git -C "$repo" update-index --add --cacheinfo "100644,$blob,$f"
  done
  local written
  written="$(GIT_INDEX_FILE="$index" git -C "$repo" write-tree)"
  if [ $# -gt 1 ]; then
    git -C "$repo" commit-tree "$written" -p "$2" -m "$1"
  else
    git -C "$repo" commit-tree "$written" -m "$1"
  fi
}

pristine="$(commit_tree "Snakemake $version: the files scheduling-per-round.patch touches, as released

From $pkg_parent/snakemake; only these files.")"
git -C "$tree" apply "$patch_file"
patched="$(commit_tree "Scheduling: per-round cost independent of the number of ready jobs

scheduling-per-round.patch of this project (upstream/snakemake/README.md says what
and why), applied to Snakemake $version." "$pristine")"
git -C "$repo" update-ref "refs/heads/$branch" "$patched"

# The branch's diff must be the patch: reversing it on the patched files must apply cleanly.
git -C "$tree" apply --check --reverse "$patch_file" \
  || die "internal: the patched files do not reverse-apply the patch"
echo "created $branch in $repo: $(git -C "$repo" rev-parse --short "$pristine") (Snakemake $version, ${#files[@]} files) <- $(git -C "$repo" rev-parse --short "$patched") (the patch)"
echo "  git diff $branch~1 $branch    # the patch"
